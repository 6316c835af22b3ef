import { describe, expect, it } from 'vitest';
import { PyFloat, pyFloatRepr, pyJsonDumps, pyRound, pySplit, pyStrip } from '@nemo-gym/core/py';

describe('Python formatting', () => {
  it('repr of floats', () => {
    expect(pyFloatRepr(4)).toBe('4.0');
    expect(pyFloatRepr(0.1)).toBe('0.1');
    expect(pyFloatRepr(1e16)).toBe('1e+16');
    expect(pyFloatRepr(1.5e16)).toBe('1.5e+16');
    expect(pyFloatRepr(123456789012345.6)).toBe('123456789012345.6');
    expect(pyFloatRepr(0.0001)).toBe('0.0001');
    expect(pyFloatRepr(0.00001)).toBe('1e-05');
    expect(pyFloatRepr(-2.5e-7)).toBe('-2.5e-07');
    expect(pyFloatRepr(-0)).toBe('-0.0');
    expect(pyFloatRepr(1e100)).toBe('1e+100');
    expect(pyFloatRepr(NaN)).toBe('nan');
  });

  it('json.dumps separators, ASCII escaping and floats', () => {
    expect(pyJsonDumps({ a: [1, 2.5, new PyFloat(3)], b: 'é\n"' })).toBe('{"a": [1, 2.5, 3.0], "b": "\\u00e9\\n\\""}');
    expect(pyJsonDumps({ a: 'é' }, { ensureAscii: false, separators: [',', ':'] })).toBe('{"a":"é"}');
    expect(pyJsonDumps('😀')).toBe('"\\ud83d\\ude00"');
    expect(pyJsonDumps({ a: { b: [] } }, { indent: 4 })).toBe('{\n    "a": {\n        "b": []\n    }\n}');
  });

  it('round() is correctly rounded, ties to even', () => {
    expect(pyRound(2.675, 2)).toBe(2.67); // 2.675 is below the tie in binary
    expect(pyRound(0.125, 2)).toBe(0.12);
    expect(pyRound(0.375, 2)).toBe(0.38);
    expect(pyRound(2.5)).toBe(2);
    expect(pyRound(3.5)).toBe(4);
    expect(pyRound(1.005, 2)).toBe(1);
    expect(pyRound(160.2249, 2)).toBe(160.22);
  });

  it('split() and strip() use Python whitespace', () => {
    expect(pySplit('  a\tb\u00a0c\u2003d\n')).toEqual(['a', 'b', 'c', 'd']);
    expect(pySplit('a\ufeffb')).toEqual(['a\ufeffb']);
    expect(pyStrip('\u0085 x \u3000')).toBe('x');
  });
});
