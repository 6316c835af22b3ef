import { describe, expect, it } from 'vitest';
import { pyFloatFromStr, pyIsAlpha, pyIsLower, pyIsUpper, pyLen, pyLstrip, pyRstrip, pySliceStr, pySplit, pyStrCompare, pyStrip } from '@nemo-gym/core/py';

// Expected values are what CPython 3.11 returns for the same calls.
describe('Python str methods', () => {
  it('split/strip use Python whitespace (no U+FEFF, yes U+001C and U+0085)', () => {
    expect(pySplit('a\u001cb\u0085c\ufeffd')).toEqual(['a', 'b', 'c\ufeffd']);
    expect(pySplit(' a\u3000b\u001fc ')).toEqual(['a', 'b', 'c']);
    expect(pySplit('')).toEqual([]);
    expect(pySplit(' \t\n')).toEqual([]);
    expect(pyStrip('\u3000x\u00a0')).toBe('x');
    expect(pyStrip('\u001c x \u0085')).toBe('x');
    expect(pyStrip('\ufeffx')).toBe('\ufeffx');
    expect(pyStrip('   ')).toBe('');
    expect(pyStrip('""x""', '"')).toBe('x');
    expect(pyStrip('😀a😀', '😀')).toBe('a');
    expect(pyLstrip('  x  ')).toBe('x  ');
    expect(pyRstrip('  x  ')).toBe('  x');
    expect(pyLstrip('<<x>>', '<')).toBe('x>>');
    expect(pyRstrip('<<x>>', '>')).toBe('<<x');
  });

  it('isupper/islower need a cased character; isalpha needs letters only', () => {
    expect(pyIsUpper('ABC 123')).toBe(true);
    expect(pyIsUpper('123')).toBe(false);
    expect(pyIsUpper('ǅ')).toBe(false);
    expect(pyIsLower('ß and ǆ')).toBe(true);
    expect(pyIsLower('abC')).toBe(false);
    expect(pyIsAlpha('Aé')).toBe(true);
    expect(pyIsAlpha('')).toBe(false);
    expect(pyIsAlpha('A1')).toBe(false);
  });

  it('counts, slices and orders by code point', () => {
    expect(pyLen('a😀b')).toBe(3);
    expect(pySliceStr('a😀bc', 1, 3)).toBe('😀b');
    expect(pySliceStr('abc', -2, 10)).toBe('bc');
    expect(pySliceStr('abc', 2, 1)).toBe('');
    // U+FF21 sorts after U+1F600 in UTF-16 code units, before it in code points
    expect(Math.sign(pyStrCompare('\uff21', '😀'))).toBe(-1);
    expect(pyStrCompare('ab', 'ab')).toBe(0);
    expect(Math.sign(pyStrCompare('ab', 'a'))).toBe(1);
  });

  it('float(str) accepts what Python accepts', () => {
    expect(pyFloatFromStr(' 1_000.5 ')).toBe(1000.5);
    expect(pyFloatFromStr('١٢٣')).toBe(123);
    expect(pyFloatFromStr('.5e1')).toBe(5);
    expect(pyFloatFromStr('5.')).toBe(5);
    expect(pyFloatFromStr('-Infinity')).toBe(-Infinity);
    expect(pyFloatFromStr('nan')).toBeNaN();
    for (const bad of ['', '1__0', '_1', '1_', '0x10', '1e', 'inf1', '. 5']) expect(pyFloatFromStr(bad), bad).toBeNull();
  });
});
