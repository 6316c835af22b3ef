import { describe, expect, it } from 'vitest';
import { HttpError } from '@nemo-gym/core/errors';
import { emptyBodyDetail, notAnObjectDetail, validationDetail, validationError } from '@nemo-gym/core/server';

describe('FastAPI-style validation details', () => {
  it('a detail is located under body; the error answers 422 with the details in order', () => {
    const a = validationDetail('value_error', ['template_metadata', 'output_regex'], 'bad pattern', '(');
    expect(a).toEqual({ type: 'value_error', loc: ['body', 'template_metadata', 'output_regex'], msg: 'bad pattern', input: '(' });
    const err = validationError(a, notAnObjectDetail([1]));
    expect(err).toBeInstanceOf(HttpError);
    expect(err.status).toBe(422);
    expect(err.detail).toEqual([a, { type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: [1] }]);
  });

  it('the missing body and a field that is not an object are worded as pydantic words them', () => {
    expect(emptyBodyDetail()).toEqual([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
    expect(notAnObjectDetail('x', ['args']).loc).toEqual(['body', 'args']);
  });
});
