import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkRowAgainst, noToolsWarning, rowChecksOf } from '../../src/data/row-fields.js';
import { jsonSchemaOf } from '../../src/server/describe.js';
import { BaseVerifyRequestSchema } from '../../src/server/kinds.js';

const strict = rowChecksOf('srv', jsonSchemaOf(BaseVerifyRequestSchema.extend({ expected_answer: z.string(), hint: z.string().optional(), id: z.number().default(0) })), ['get_weather'], false);
const loose = rowChecksOf('srv', jsonSchemaOf(BaseVerifyRequestSchema.extend({ expected_answer: z.string() }).loose()), [], false);
const params = { input: 'q', tools: [{ type: 'function', name: 'get_weather' }] };
const problems = (keys: string[], checks = strict) => checkRowAgainst(keys, params, checks).problems;

describe('row fields against a verify request', () => {
  it('takes the top-level fields; the response is the agent’s to add', () => {
    expect(strict.fields).toEqual({ server: 'srv', known: ['responses_create_params', 'expected_answer', 'hint', 'id'], required: ['responses_create_params', 'expected_answer'] });
  });

  it('a missing required field, with the misspelt key the row has', () => {
    expect(problems(['responses_create_params', 'expected_anwser'])).toEqual([
      { field: 'expected_answer', message: "missing: srv's verify request requires `expected_answer`; the row has `expected_anwser` (did you mean `expected_answer`?)" },
    ]);
    expect(problems(['responses_create_params'])).toEqual([{ field: 'expected_answer', message: "missing: srv's verify request requires `expected_answer`" }]);
  });

  it('an unknown key near an optional field the row lacks; other unknown keys pass, loose schema or not', () => {
    expect(problems(['responses_create_params', 'expected_answer', 'hnit'])).toEqual([{ field: 'hnit', message: "not a field of srv's verify request (did you mean `hint`?)" }]);
    expect(problems(['responses_create_params', 'expected_answer', 'hint', 'hnit'])).toEqual([]);
    for (const checks of [strict, loose]) expect(problems(['responses_create_params', 'expected_answer', 'source', 'agent_ref', '_ng_task_index'], checks)).toEqual([]);
  });

  it('a server without a published verify request checks no fields', () => {
    expect(checkRowAgainst(['x'], params, rowChecksOf('srv', null, [], false)).problems).toEqual([]);
  });

  it('tools: a row that lists none of its server’s tools, unless the agent offers them', () => {
    const keys = ['responses_create_params', 'expected_answer'];
    expect(checkRowAgainst(keys, params, strict).noTools).toBe(false);
    expect(checkRowAgainst(keys, { input: 'q' }, strict).noTools).toBe(true);
    expect(checkRowAgainst(keys, { input: 'q', tools: [{ type: 'function', name: 'other' }, { type: 'web_search' }] }, strict).noTools).toBe(true);
    expect(checkRowAgainst(keys, { input: 'q' }, { ...strict, offers: true }).noTools).toBe(false);
    expect(checkRowAgainst(keys, { input: 'q' }, loose).noTools).toBe(false);
    expect(noToolsWarning(strict, 3, 'a.jsonl')).toBe(
      "Warning: 3 row(s) of a.jsonl offer none of srv's tools (get_weather), so the model cannot call them. List them in responses_create_params.tools, or set offer_server_tools: true on the agent.",
    );
  });
});
