// Printed forms are sympy's str() of the trees latex2sympy builds (extracted_answer uses them).
import { describe, expect, it } from 'vitest';
import { parseLatex, parsePyExpr, printExpr } from '../src/index.js';

const p = (latex: string) => printExpr(parseLatex(latex));

describe('numbers', () => {
  it('integers and exact fractions', () => {
    expect(p('42')).toBe('42');
    expect(p('\\frac{8}{2}')).toBe('4');
    expect(p('\\frac{333}{1998}')).toBe('1/6');
    expect(p('-\\frac{1}{2}')).toBe('-1/2');
    expect(p('2\\frac{1}{2}')).toBe('5/2');
  });
  it('floats print with 15 significant digits at top level, trimmed inside expressions', () => {
    expect(p('4.0')).toBe('4.00000000000000');
    expect(p('0.001')).toBe('0.00100000000000000');
    expect(p('2.5x')).toBe('2.5*x');
    expect(p('(1, 4.5)')).toBe('Interval.open(1, 4.50000000000000)');
  });
  it('percent numbers are products with 1/100', () => {
    expect(p('25\\%')).toBe('25*(1/100)');
  });
});

describe('expressions', () => {
  it('orders terms like sympy', () => {
    expect(p('1 + x')).toBe('x + 1');
    expect(p('1 - x')).toBe('1 - x');
    expect(p('1-\\sqrt{3}')).toBe('1 - sqrt(3)');
    expect(p('2+\\sqrt{3}')).toBe('sqrt(3) + 2');
    expect(p('2x + 3 + x^2')).toBe('x**2 + 2*x + 3');
  });
  it('keeps unevaluated products and quotients', () => {
    expect(p('x \\cdot 2')).toBe('x*2');
    expect(p('\\frac{x}{2}')).toBe('x/2');
    expect(p('\\frac{a}{bc}')).toBe('a/((b*c))');
    expect(p('-2x')).toBe('-1*2*x');
    expect(p('-x')).toBe('-x');
  });
  it('roots, powers, constants and functions', () => {
    expect(p('\\sqrt{2}')).toBe('sqrt(2)');
    expect(p('\\sqrt[3]{x}')).toBe('x**(1/3)');
    expect(p('2^{10}')).toBe('2**10');
    expect(p('\\pi r^2')).toBe('pi*r**2');
    expect(p('e^{x}')).toBe('exp(x)');
    expect(p('\\sin x')).toBe('sin(x)');
    expect(p('\\ln 2')).toBe('log(2, E)');
    expect(p('|x|')).toBe('Abs(x)');
    expect(p('5!')).toBe('factorial(5)');
  });
  it('symbols are lower-cased, greek letters spelled out', () => {
    expect(p('X')).toBe('x');
    expect(p('\\alpha + \\beta')).toBe('alpha + beta');
    expect(p('x_1')).toBe('x_1');
  });
});

describe('sets, intervals, relations, matrices', () => {
  it('intervals by bracket type', () => {
    expect(p('[1, 2]')).toBe('Interval(1, 2)');
    expect(p('(1, 2]')).toBe('Interval.Lopen(1, 2)');
    expect(p('(-\\infty, 3)')).toBe('Interval.open(-oo, 3)');
    expect(p('(2, 1)')).toBe('(2, 1)');
  });
  it('finite sets are sorted, comma lists become sets', () => {
    expect(p('\\{3, 1, 2\\}')).toBe('{1, 2, 3}');
    expect(p('3, 1')).toBe('{1, 3}');
    expect(p('(1, 2, 3)')).toBe('(1, 2, 3)');
  });
  it('relations and chains', () => {
    expect(p('x = 5')).toBe('Eq(x, 5)');
    expect(p('x \\le 2')).toBe('x <= 2');
    expect(p('1 < x < 2')).toBe('(1 < x) & (x < 2)');
  });
  it('unions and matrices', () => {
    expect(p('(1, 2) \\cup (3, 4)')).toBe('Union(Interval.open(1, 2), Interval.open(3, 4))');
    expect(p('\\begin{pmatrix}1 & 2\\\\3 & 4\\end{pmatrix}')).toBe('Matrix([[1, 2], [3, 4]])');
  });
  it('rejects malformed input', () => {
    expect(() => parseLatex('\\frac{1}{')).toThrow();
    expect(() => parseLatex('(((')).toThrow();
  });
});

describe('plain expressions (parse_expr with evaluate=False)', () => {
  it('keeps the written structure', () => {
    expect(printExpr(parsePyExpr('7 / 5'))).toBe('7/5');
    expect(printExpr(parsePyExpr('3-2'))).toBe('3 - 1*2');
    expect(printExpr(parsePyExpr('2**3'))).toBe('2**3');
    expect(printExpr(parsePyExpr('1/2+1/3'))).toBe('1/3 + 1/2');
  });
});

describe('grammar quirks kept on purpose', () => {
  it('an integer followed by a positive integer is read as a mixed number', () => {
    expect(p('2 3')).toBe('5');
    expect(p('2(3)')).toBe('5');
    expect(p('-2 3')).toBe('-5');
    expect(p('2 0')).toBe('2*0');
  });
  it('"d" followed by a letter is a differential symbol', () => {
    expect(p('dx')).toBe('dx');
    expect(p('odd')).toBe('dd*o');
  });
  it('sums and products keep their limits', () => {
    expect(p('\\sum_{k=1}^{n} k')).toBe('Sum(k, (k, 1, n))');
    expect(p('\\prod_{k=1}^{5} k')).toBe('Product(k, (k, 1, 5))');
  });
});
