import { describe, expect, it } from 'vitest';
import { extractBoxedContent, normalizeLatex } from '../src/index.js';

const full = { boxed: 'all', basicLatex: true, units: true, malformedOperators: true, nits: true } as const;

describe('boxed extraction', () => {
  it('takes the content of the last \\boxed, with nested braces', () => {
    expect(extractBoxedContent('so \\boxed{\\frac{1}{2}} done', 'last')).toBe('\\frac{1}{2}');
  });
  it('"all" joins every box with commas', () => {
    expect(extractBoxedContent('\\boxed{1} and later \\boxed{2}', 'all')).toBe('1,2');
  });
  it('"last" keeps only neighbouring boxes or boxes joined by a separator', () => {
    expect(extractBoxedContent('\\boxed{1} then a long explanation follows here \\boxed{2}', 'last')).toBe('2');
    expect(extractBoxedContent('\\boxed{1}, \\boxed{2}', 'last')).toBe('1,2');
  });
  it('an unclosed box yields the rest of the text, \\fbox counts as a box', () => {
    expect(extractBoxedContent('\\boxed{12', 'last')).toBe('{12');
    expect(extractBoxedContent('\\fbox{7}', 'last')).toBe('7');
  });
  it('text without a box is returned unchanged', () => {
    expect(extractBoxedContent('x + 1', 'all')).toBe('x + 1');
  });
});

describe('normalisation', () => {
  it('rewrites \\dfrac, \\tfrac and \\mathrm', () => {
    expect(normalizeLatex('\\dfrac{1}{2} + \\tfrac{3}{4}', full)).toBe('\\frac{1}{2} + \\frac{3}{4}');
    expect(normalizeLatex('\\mathrm{abc}', { boxed: 'none' })).toBe('\\text{abc}');
  });
  it('removes \\left/\\right, dollar signs, \\displaystyle and \\!', () => {
    expect(normalizeLatex('\\left( x \\right)', full)).toBe('( x )');
    expect(normalizeLatex('$\\displaystyle 5$', full)).toBe('5');
    expect(normalizeLatex('1\\!000', full)).toBe('1000');
  });
  it('strips trailing units and unit text', () => {
    expect(normalizeLatex('5 \\text{ cm}', full)).toBe('5');
    expect(normalizeLatex('12 \\text{cm}^2', full)).toBe('12');
    expect(normalizeLatex('7 apples', full)).toBe('7');
    expect(normalizeLatex('30 degrees', full)).toBe('30');
  });
  it('turns percent words into \\%', () => {
    expect(normalizeLatex('25 percent', full)).toBe('25\\%');
    expect(normalizeLatex('25 pct', full)).toBe('25\\%');
  });
  it('turns "and"/"or" into commas and infinity into \\infty', () => {
    expect(normalizeLatex('1 and 2', full)).toBe('1, 2');
    expect(normalizeLatex('(0, infinity)', full)).toBe('(0, \\infty)');
  });
  it('fixes leading decimals and 0.5', () => {
    expect(normalizeLatex('.75', full)).toBe('0.75');
    expect(normalizeLatex('0.5', full)).toBe('\\frac{1}{2}');
  });
  it('repairs malformed operators', () => {
    expect(normalizeLatex('\\frac12', full)).toBe('\\frac{1}{2}');
    expect(normalizeLatex('\\sqrt3', full)).toBe('\\sqrt{3}');
    expect(normalizeLatex('2^(x+1)', full)).toBe('2^{x+1}');
    expect(normalizeLatex('sqrt(5)', full)).toBe('\\sqrt{5}');
    expect(normalizeLatex('3/4', full)).toBe('\\frac{3}{4}');
    expect(normalizeLatex('3/x', full)).toBe('3/x');
  });
  it('rewrites permutations (n)_{k} as factorial quotients', () => {
    expect(normalizeLatex('(5)_{2}', full)).toBe('\\frac{(5)!}{((5)-(2))!}');
  });
});
