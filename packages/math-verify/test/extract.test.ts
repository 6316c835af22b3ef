import { describe, expect, it } from 'vitest';
import { parse, printExpr, type Extracted } from '../src/index.js';

const show = (xs: Extracted[]) => xs.map((x) => (typeof x === 'string' ? `str:${x}` : printExpr(x)));
const pred = (s: string) => show(parse(s, ['expr', 'latex']));

describe('extraction priorities', () => {
  it('a boxed answer wins over plain numbers', () => {
    expect(pred('2 + 2 = \\boxed{4}')).toEqual(['4', 'str:4']);
  });
  it('"final answer is ... I hope" wins over everything', () => {
    expect(pred('\\boxed{3} The final answer is $10$. I hope it is correct.')).toEqual(['10', 'str:10']);
  });
  it('among plain matches the rightmost one is taken', () => {
    expect(pred('first 3 then 7')).toEqual(['7', 'str:7']);
  });
  it('"answer:" anchors the value after it', () => {
    expect(pred('Answer: 3/4 is what we found, 12')[0]).toBe('3/4');
  });
  it('the first raw match is appended as a string fallback', () => {
    expect(pred('$\\frac{1}{2}$')).toEqual(['1/2', 'str:\\frac{1}{2}']);
  });
  it('nothing to extract gives an empty list', () => {
    expect(pred('no numbers here')).toEqual([]);
  });
});

describe('numbers in plain text', () => {
  it('thousands separators, decimal commas and leading zeros', () => {
    expect(pred('The answer is 1,000')[0]).toBe('1000');
    expect(pred('The answer is 1 000.')[0]).toBe('1000');
    expect(pred('about 12,5')[0]).toBe('12.5000000000000');
    expect(pred('code 007')[0]).toBe('7');
  });
  it('percent and currency', () => {
    expect(pred('it grew 25%')[0]).toBe('25*(1/100)');
    expect(pred('it costs $100')[0]).toBe('100');
  });
  it('arithmetic expressions keep their structure (the trailing "." is read as part of "5.")', () => {
    expect(pred('We get 7 / 5.')).toEqual(['7/5.0', 'str:7 / 5.']);
    expect(pred('We get 7 / 5 now')[0]).toBe('7/5');
  });
});

describe('latex environments', () => {
  it.each([
    ['$x+1$', 'x + 1'],
    ['\\(x+1\\)', 'x + 1'],
    ['\\[x+1\\]', 'x + 1'],
    ['$$x+1$$', 'x + 1'],
    ['see \\frac{3}{4}', '3/4'],
  ])('%s', (text, expected) => {
    expect(pred(text)[0]).toBe(expected);
  });
  it('several environments joined by "and" form a set', () => {
    expect(pred('The roots are $1$ and $2$')[0]).toBe('{1, 2}');
  });
  it('the gold side only uses LaTeX', () => {
    expect(show(parse('\\boxed{\\frac{3}{4}}', ['latex']))).toEqual(['3/4', 'str:\\frac{3}{4}']);
    expect(parse('\\boxed{}', ['latex'])).toEqual([]);
  });
});
