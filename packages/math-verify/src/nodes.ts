// Expression tree with the shapes latex2sympy / sympy build when evaluation is switched off:
// Add, Mul and Pow keep their arguments as written; numbers are exact (BigInt) or decimal floats.

import { pyDecimalStr } from '@nemo-gym/core/py';

export type RelOp = 'Eq' | 'Ne' | 'Lt' | 'Le' | 'Gt' | 'Ge';
export type SetName = 'Reals' | 'Naturals' | 'Integers' | 'Rationals' | 'Complexes' | 'EmptySet';
export type ConstName = 'pi' | 'E' | 'I' | 'oo' | '-oo' | 'zoo' | 'nan';

export type Node =
  | { t: 'Integer'; v: bigint }
  | { t: 'Rational'; p: bigint; q: bigint }
  | { t: 'Float'; v: string; dps: number }
  | { t: 'Symbol'; name: string }
  | { t: 'Const'; name: ConstName }
  | { t: 'Add'; args: Node[] }
  | { t: 'Mul'; args: Node[] }
  | { t: 'Pow'; base: Node; exp: Node }
  | { t: 'Func'; name: string; args: Node[]; undef?: boolean }
  | { t: 'Rel'; op: RelOp; lhs: Node; rhs: Node }
  | { t: 'And'; args: Node[] }
  | { t: 'Not'; arg: Node }
  | { t: 'FiniteSet'; args: Node[] }
  | { t: 'Tuple'; args: Node[] }
  | { t: 'Interval'; start: Node; end: Node; lo: boolean; ro: boolean }
  | { t: 'SetOp'; op: 'Union' | 'Intersection' | 'Complement'; args: Node[] }
  | { t: 'SetConst'; name: SetName }
  | { t: 'Matrix'; rows: Node[][] }
  | { t: 'MatOp'; op: 'Add' | 'Mul'; args: Node[] };

export class MathError extends Error {}
/** A parse or comparison that ran past its deadline: it is passed on, never read as "not equal". */
export class MathTimeLimitError extends MathError {}

export const int = (v: bigint | number): Node => ({ t: 'Integer', v: BigInt(v) });
export const sym = (name: string): Node => ({ t: 'Symbol', name });
export const cnst = (name: ConstName): Node => ({ t: 'Const', name });
export const HALF: Node = { t: 'Rational', p: 1n, q: 2n };
export const ONE: Node = int(1);
export const NEG_ONE: Node = int(-1);

function bigAbs(a: bigint): bigint {
  return a < 0n ? -a : a;
}
export function gcd(a: bigint, b: bigint): bigint {
  a = bigAbs(a);
  b = bigAbs(b);
  while (b) [a, b] = [b, a % b];
  return a;
}

/** sympy.Rational(p, q): reduced, integer when the denominator is 1. */
export function rational(p: bigint, q: bigint): Node {
  if (q === 0n) {
    return p === 0n ? cnst('nan') : cnst('zoo');
  }
  if (q < 0n) {
    p = -p;
    q = -q;
  }
  const g = gcd(p, q) || 1n;
  p /= g;
  q /= g;
  return q === 1n ? { t: 'Integer', v: p } : { t: 'Rational', p, q };
}

export function isNumber(n: Node): n is Extract<Node, { t: 'Integer' | 'Rational' | 'Float' }> {
  return n.t === 'Integer' || n.t === 'Rational' || n.t === 'Float';
}
export function isRationalNum(n: Node): n is Extract<Node, { t: 'Integer' | 'Rational' }> {
  return n.t === 'Integer' || n.t === 'Rational';
}
export function ratParts(n: Node): [bigint, bigint] | null {
  if (n.t === 'Integer') return [n.v, 1n];
  if (n.t === 'Rational') return [n.p, n.q];
  return null;
}

/** Numeric sign of a number node (-1, 0, 1). */
export function numSign(n: Node): number {
  if (n.t === 'Integer') return n.v < 0n ? -1 : n.v > 0n ? 1 : 0;
  if (n.t === 'Rational') return n.p < 0n ? -1 : 1;
  if (n.t === 'Float') return n.v.startsWith('-') ? -1 : /[1-9]/.test(n.v) ? 1 : 0;
  return 0;
}

/** -n for a number node (sympy's __neg__ on numbers). */
export function negNumber(n: Node): Node {
  if (n.t === 'Integer') return { t: 'Integer', v: -n.v };
  if (n.t === 'Rational') return { t: 'Rational', p: -n.p, q: n.q };
  if (n.t === 'Float') return { t: 'Float', v: n.v.startsWith('-') ? n.v.slice(1) : '-' + n.v, dps: n.dps };
  throw new MathError('not a number');
}

/** Float from a decimal literal, with sympy's precision rule (at least 15 significant digits). */
export function float(text: string): Node {
  let s = text.trim();
  let sign = '';
  if (s.startsWith('-')) {
    sign = '-';
    s = s.slice(1);
  } else if (s.startsWith('+')) s = s.slice(1);
  let mant = s;
  let exp = 0;
  const em = /[eE]([+-]?\d+)$/.exec(s);
  if (em) {
    exp = Number(em[1]);
    mant = s.slice(0, em.index);
  }
  if (!/^(\d+\.?\d*|\.\d+)$/.test(mant)) throw new MathError(`invalid float literal ${text}`);
  const digits = mant.replace('.', '').replace(/^0+/, '');
  const dps = Math.max(15, digits.length);
  let value = mant.startsWith('.') ? '0' + mant : mant;
  if (exp !== 0) value = value + 'e' + exp;
  return { t: 'Float', v: sign + value, dps };
}

/** sympy.Number(str): integer text -> Integer, anything else -> Float. */
export function numberFromString(text: string): Node {
  const s = text.trim();
  if (/^[+-]?\d+$/.test(s)) return { t: 'Integer', v: BigInt(s) };
  return float(s);
}

export function add(...args: Node[]): Node {
  return { t: 'Add', args };
}
export function mul(...args: Node[]): Node {
  return { t: 'Mul', args };
}
export function pow(base: Node, exp: Node): Node {
  return { t: 'Pow', base, exp };
}

/** Children of a node in sympy's `args` order. */
export function children(n: Node): Node[] {
  switch (n.t) {
    case 'Add':
    case 'Mul':
    case 'Func':
    case 'And':
    case 'FiniteSet':
    case 'Tuple':
    case 'SetOp':
    case 'MatOp':
      return n.args;
    case 'Pow':
      return [n.base, n.exp];
    case 'Rel':
      return [n.lhs, n.rhs];
    case 'Not':
      return [n.arg];
    case 'Interval':
      return [n.start, n.end];
    case 'Matrix':
      return n.rows.flat();
    default:
      return [];
  }
}

export function freeSymbols(n: Node, out: Set<string> = new Set()): Set<string> {
  if (n.t === 'Symbol') out.add(n.name);
  else if (n.t === 'Func' && (n.name === 'Sum' || n.name === 'Product') && n.args[1]?.t === 'Tuple') {
    // the summation index is bound
    const [variable, start, end] = n.args[1].args as [Node, Node, Node];
    const inner = freeSymbols(n.args[0]!);
    if (variable.t === 'Symbol') inner.delete(variable.name);
    for (const x of inner) out.add(x);
    freeSymbols(start, out);
    freeSymbols(end, out);
  } else for (const c of children(n)) freeSymbols(c, out);
  return out;
}

export function containsType(n: Node, pred: (x: Node) => boolean): boolean {
  if (pred(n)) return true;
  return children(n).some((c) => containsType(c, pred));
}

/** Structural equality (sympy `==` on trees), numbers compared by value. */
export function structEq(a: Node, b: Node): boolean {
  if (isNumber(a) && isNumber(b)) {
    if (a.t === 'Float' || b.t === 'Float') {
      return numericValueString(a) === numericValueString(b);
    }
    const [ap, aq] = ratParts(a)!;
    const [bp, bq] = ratParts(b)!;
    return ap === bp && aq === bq;
  }
  if (a.t !== b.t) return false;
  switch (a.t) {
    case 'Symbol':
      return a.name === (b as typeof a).name;
    case 'Const':
      return a.name === (b as typeof a).name;
    case 'SetConst':
      return a.name === (b as typeof a).name;
    case 'Rel':
      return a.op === (b as typeof a).op && structEq(a.lhs, (b as typeof a).lhs) && structEq(a.rhs, (b as typeof a).rhs);
    case 'Interval': {
      const bb = b as typeof a;
      return a.lo === bb.lo && a.ro === bb.ro && structEq(a.start, bb.start) && structEq(a.end, bb.end);
    }
    case 'Func':
      if (a.name !== (b as typeof a).name) return false;
      break;
    case 'SetOp':
      if (a.op !== (b as typeof a).op) return false;
      break;
    case 'MatOp':
      if (a.op !== (b as typeof a).op) return false;
      break;
    case 'Matrix': {
      const bb = b as typeof a;
      if (a.rows.length !== bb.rows.length || a.rows.some((r, i) => r.length !== bb.rows[i]!.length)) return false;
      break;
    }
    case 'FiniteSet': {
      const bb = b as typeof a;
      const x = dedupSorted(a.args);
      const y = dedupSorted(bb.args);
      return x.length === y.length && x.every((e, i) => structEq(e, y[i]!));
    }
    default:
      break;
  }
  const ca = children(a);
  const cb = children(b);
  return ca.length === cb.length && ca.every((c, i) => structEq(c, cb[i]!));
}

// ---------------------------------------------------------------------------------------------
// Number formatting

/** Canonical decimal text of a number (used for Float equality). */
export function numericValueString(n: Node): string {
  if (n.t === 'Integer') return n.v.toString();
  if (n.t === 'Float') {
    const m = /^(-?)(\d*)\.?(\d*)(?:e([+-]?\d+))?$/.exec(n.v);
    if (!m) return n.v;
    const [, sign, ip, fp, e] = m;
    const digits = (ip! + fp!).replace(/^0+/, '');
    if (!digits) return '0';
    const pointPos = ip!.replace(/^0+/, '').length - (ip!.replace(/^0+/, '') ? 0 : (fp!.match(/^0*/)![0].length)) + Number(e ?? 0);
    return `${sign}0.${digits.replace(/0+$/, '')}e${pointPos}`;
  }
  if (n.t === 'Rational') return `${n.p}/${n.q}`;
  return '';
}

/** mpmath-style digit string of a Float at `dps` significant digits: [sign, digits, exponent]. */
function floatDigits(v: string, dps: number): [string, string, number] {
  const m = /^(-?)(\d*)\.?(\d*)(?:e([+-]?\d+))?$/.exec(v);
  if (!m) return ['', '0', 0];
  const sign = m[1]!;
  const ip = m[2]!;
  const fp = m[3]!;
  const e = Number(m[4] ?? 0);
  const all = ip + fp;
  const lead = all.match(/^0*/)![0].length;
  if (lead === all.length) return [sign, '0'.repeat(dps), 0];
  let digits = all.slice(lead);
  let exponent = ip.length - lead - 1 + e;
  if (digits.length > dps) {
    const keep = digits.slice(0, dps);
    const rest = digits.slice(dps);
    let up = rest[0]! > '5' || (rest[0] === '5' && (/[1-9]/.test(rest.slice(1)) || Number(keep[keep.length - 1]) % 2 === 1));
    let arr = keep.split('').map(Number);
    if (up) {
      let i = arr.length - 1;
      while (i >= 0) {
        arr[i]! += 1;
        if (arr[i]! < 10) break;
        arr[i] = 0;
        i--;
      }
      if (i < 0) {
        arr = [1, ...arr.slice(0, arr.length - 1)];
        exponent += 1;
      }
    }
    digits = arr.join('');
  } else {
    digits = digits + '0'.repeat(dps - digits.length);
  }
  return [sign, digits, exponent];
}

/** sympy's str() of a Float (full precision at top level, trailing zeros stripped when nested). */
export function formatFloat(n: Extract<Node, { t: 'Float' }>, strip: boolean): string {
  const dps = n.dps;
  const [sign, digits0, exponent] = floatDigits(n.v, dps);
  let digits = digits0;
  if (/^0+$/.test(digits)) return strip ? '0.0' : '0.0';
  const minFixed = Math.min(-Math.floor(dps / 3), -5);
  const maxFixed = dps;
  let out: string;
  if (minFixed < exponent && exponent < maxFixed) {
    if (exponent >= 0) {
      const ipart = digits.slice(0, exponent + 1);
      let fpart = digits.slice(exponent + 1);
      if (strip) fpart = fpart.replace(/0+$/, '');
      out = ipart + '.' + (fpart || (strip ? '0' : ''));
      if (out.endsWith('.')) out += '0';
    } else {
      let fpart = '0'.repeat(-exponent - 1) + digits;
      if (strip) fpart = fpart.replace(/0+$/, '');
      out = '0.' + fpart;
    }
  } else {
    let rest = digits.slice(1);
    if (strip) rest = rest.replace(/0+$/, '');
    out = digits[0] + '.' + (rest || '0') + 'e' + (exponent >= 0 ? '+' : '-') + Math.abs(exponent);
  }
  return sign + out;
}

// ---------------------------------------------------------------------------------------------
// sympy sort keys (default_sort_key), used by the printer and by set ordering

type Key = (string | number | Key)[];

function classKey(n: Node): Key {
  switch (n.t) {
    case 'Integer':
    case 'Rational':
    case 'Float':
      return [1, 0, 'Number'];
    case 'Const':
      return [2, 0, n.name === 'pi' ? 'Pi' : n.name === 'E' ? 'Exp1' : n.name === 'I' ? 'ImaginaryUnit' : n.name === 'oo' ? 'Infinity' : n.name === '-oo' ? 'NegativeInfinity' : n.name === 'zoo' ? 'ComplexInfinity' : 'NaN'];
    case 'Symbol':
      return [2, 0, 'Symbol'];
    case 'Func':
      return n.undef ? [5, 0, n.name] : [4, FUNC_ORDER.indexOf(n.name) >= 0 ? FUNC_ORDER.indexOf(n.name) : 99, n.name];
    case 'Add':
      return [3, 1, 'Add'];
    case 'Mul':
      return [3, 0, 'Mul'];
    case 'Pow':
      return [3, 2, 'Pow'];
    default:
      return [5, 0, n.t];
  }
}
const FUNC_ORDER = ['exp', 'log', 'sin', 'cos', 'tan', 'cot', 'sinh', 'cosh', 'tanh', 'coth', 'asin', 'acos', 'atan', 'acot', 'asinh', 'acosh', 'atanh', 'acoth'];

export function numApprox(n: Node): number {
  if (n.t === 'Integer') return Number(n.v);
  if (n.t === 'Rational') return Number(n.p) / Number(n.q);
  if (n.t === 'Float') return Number(n.v);
  return NaN;
}

export function sortKey(n: Node): Key {
  if (isNumber(n)) return [classKey(n), [0, []], [], numApprox(n)];
  if (n.t === 'Symbol') return [classKey(n), [1, [n.name]], sortKey(ONE), 1];
  if (n.t === 'Const') return [classKey(n), [1, [n.name]], sortKey(ONE), 1];
  // Expr.sort_key: split off a numeric coefficient, look through powers
  let coeff = 1;
  let expr: Node = n;
  if (n.t === 'Mul' && n.args.length > 1 && isNumber(n.args[0]!)) {
    coeff = numApprox(n.args[0]!);
    expr = n.args.length === 2 ? n.args[1]! : { t: 'Mul', args: n.args.slice(1) };
  }
  let exp: Node = ONE;
  if (expr.t === 'Pow') {
    exp = expr.exp;
    expr = expr.base;
  }
  let args: Key;
  if (isNumber(expr) || expr.t === 'Symbol' || expr.t === 'Const') {
    args = [1, [printExpr(expr)]];
  } else {
    let cs: Node[];
    if (expr.t === 'Add') cs = orderedTerms(expr);
    else if (expr.t === 'Mul') cs = orderedFactors(expr);
    else cs = children(expr);
    args = [cs.length, cs.map(sortKey)];
  }
  return [classKey(expr), args, sortKey(exp), coeff];
}

export function compareKeys(a: Key | string | number, b: Key | string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compareKeys(a[i]!, b[i]!);
      if (c) return c;
    }
    return a.length - b.length;
  }
  const order = (x: unknown) => (typeof x === 'number' ? 0 : typeof x === 'string' ? 1 : 2);
  return order(a) - order(b);
}

export function sortByKey(nodes: Node[]): Node[] {
  return nodes
    .map((n, i) => ({ n, k: sortKey(n), i }))
    .sort((x, y) => compareKeys(x.k, y.k) || x.i - y.i)
    .map((x) => x.n);
}

/** FiniteSet args: duplicates removed, sorted. */
export function dedupSorted(args: Node[]): Node[] {
  const out: Node[] = [];
  for (const a of sortByKey(args)) if (!out.some((o) => structEq(o, a))) out.push(a);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Term ordering of Add (Expr.as_ordered_terms) and factor ordering of Mul

function isNumberLike(n: Node): boolean {
  // sympy's `is_number`: no free symbols and no undefined functions
  if (n.t === 'Symbol') return false;
  if (n.t === 'Func' && n.undef) return false;
  if (n.t === 'Rel' || n.t === 'FiniteSet' || n.t === 'Tuple' || n.t === 'Interval' || n.t === 'Matrix') return false;
  return children(n).every(isNumberLike);
}

export function orderedFactors(n: Extract<Node, { t: 'Mul' }>): Node[] {
  return sortByKey(n.args);
}

function asCoeffMul(term: Node): [Node, Node[]] {
  if (term.t === 'Mul' && term.args.length > 0 && isNumber(term.args[0]!)) return [term.args[0]!, term.args.slice(1)];
  if (isNumber(term)) return [term, []];
  if (term.t === 'Mul') return [ONE, term.args];
  return [ONE, [term]];
}

function decomposePower(f: Node): [Node, number] {
  if (f.t === 'Pow') {
    const e = f.exp;
    if (e.t === 'Integer') return [f.base, Number(e.v)];
    if (e.t === 'Rational') return [pow(f.base, rational(1n, e.q)), Number(e.p)];
    if (e.t === 'Mul' && e.args.length >= 2 && e.args[0]!.t === 'Integer' && e.args[0]!.v === -1n) {
      return [pow(f.base, e.args.length === 2 ? e.args[1]! : mul(...e.args.slice(1))), -1];
    }
  }
  return [f, 1];
}

let approxComplex: ((n: Node) => [number, number] | null) | null = null;
export function setApproxComplex(fn: (n: Node) => [number, number] | null): void {
  approxComplex = fn;
}

export function orderedTerms(n: Extract<Node, { t: 'Add' }>): Node[] {
  const args = n.args;
  // Special case: Add(Number, Mul(negative Number, expr)) prints as "1 - x"
  const isNumOrConst = (x: Node) => isNumber(x) || (x.t === 'Const' && (x.name === 'pi' || x.name === 'E'));
  const sorted = [...args].sort((a, b) => Number(!isNumOrConst(a)) - Number(!isNumOrConst(b)));
  if (sorted.length === 2 && isNumOrConst(sorted[0]!) && sorted[1]!.t === 'Mul') {
    const m = sorted[1] as Extract<Node, { t: 'Mul' }>;
    const margs = [...m.args].sort((a, b) => Number(!isNumOrConst(a)) - Number(!isNumOrConst(b)));
    const first = sorted[0]!;
    const positive = isNumber(first) ? numSign(first) > 0 : true;
    if (margs.length === 2 && isNumber(margs[0]!) && positive && numSign(margs[0]!) < 0) return sorted;
  }
  type T = { term: Node; re: number; im: number; powers: Map<string, number>; i: number };
  const gens = new Map<string, Node>();
  const terms: T[] = args.map((term, i) => {
    const [c, rest] = asCoeffMul(term);
    let re = numApprox(c);
    let im = 0;
    const powers = new Map<string, number>();
    for (const f of rest) {
      if (isNumberLike(f)) {
        const v = approxComplex ? approxComplex(f) : null;
        if (v) {
          const [fr, fi] = v;
          [re, im] = [re * fr - im * fi, re * fi + im * fr];
          continue;
        }
      }
      const [base, e] = decomposePower(f);
      const k = printExpr(base);
      gens.set(k, base);
      powers.set(k, (powers.get(k) ?? 0) + e);
    }
    return { term, re, im, powers, i };
  });
  const genList = sortByKey([...gens.values()]).map((g) => printExpr(g));
  const monom = (t: T) => genList.map((g) => t.powers.get(g) ?? 0);
  return terms
    .sort((a, b) => {
      const ma = monom(a);
      const mb = monom(b);
      for (let i = 0; i < ma.length; i++) if (ma[i] !== mb[i]) return mb[i]! - ma[i]!;
      if (a.im !== 0 || b.im !== 0) {
        const c = Number(a.im !== 0) - Number(b.im !== 0) || a.im - b.im;
        if (c) return c;
      }
      return cmpNum(a.re, b.re) || cmpNum(a.im, b.im) || a.i - b.i;
    })
    .map((t) => t.term);
}

function cmpNum(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return 0;
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// sympy StrPrinter

const PREC = { Relational: 35, Add: 40, Mul: 50, Pow: 60, Func: 70, Not: 100, Atom: 1000 } as const;

function couldExtractMinus(n: Node): boolean {
  if (isNumber(n)) return numSign(n) < 0;
  if (n.t === 'Mul') return n.args.length > 0 && isNumber(n.args[0]!) && numSign(n.args[0]!) < 0;
  if (n.t === 'Const') return n.name === '-oo';
  return false;
}

function precedence(n: Node): number {
  switch (n.t) {
    case 'Integer':
      return n.v < 0n ? PREC.Add : PREC.Atom;
    case 'Rational':
      return n.p < 0n ? PREC.Add : PREC.Mul;
    case 'Float':
      return numSign(n) < 0 ? PREC.Add : PREC.Atom;
    case 'Add':
      return PREC.Add;
    case 'Mul':
      return couldExtractMinus(n) ? PREC.Add : PREC.Mul;
    case 'Pow':
      return PREC.Pow;
    case 'Rel':
      return n.op === 'Eq' || n.op === 'Ne' ? PREC.Func : PREC.Relational;
    case 'Const':
      return n.name === '-oo' ? PREC.Add : PREC.Atom;
    case 'Func':
      return PREC.Func;
    case 'Not':
      return PREC.Not;
    case 'And':
      return 30;
    default:
      return PREC.Atom;
  }
}

export function printExpr(n: Node): string {
  return new Printer().print(n);
}

class Printer {
  level = 0;

  print(n: Node): string {
    this.level++;
    try {
      return this.p(n);
    } finally {
      this.level--;
    }
  }

  paren(n: Node, level: number, strict = false): string {
    const p = precedence(n);
    if (p < level || (!strict && p <= level)) return `(${this.print(n)})`;
    return this.print(n);
  }

  p(n: Node): string {
    switch (n.t) {
      case 'Integer':
        return n.v.toString();
      case 'Rational':
        return `${n.p}/${n.q}`;
      case 'Float':
        return formatFloat(n, this.level > 1);
      case 'Symbol':
        return n.name;
      case 'Const':
        return n.name === 'zoo' ? 'zoo' : n.name;
      case 'Add':
        return this.add(n);
      case 'Mul':
        return this.mul(n);
      case 'Pow':
        return this.pow(n);
      case 'Func':
        return `${n.name}(${n.args.map((a) => this.print(a)).join(', ')})`;
      case 'Rel': {
        const names: Record<string, string> = { Eq: 'Eq', Ne: 'Ne' };
        if (n.op === 'Eq' || n.op === 'Ne') return `${names[n.op]}(${this.print(n.lhs)}, ${this.print(n.rhs)})`;
        const op = { Lt: '<', Le: '<=', Gt: '>', Ge: '>=' }[n.op];
        return `${this.paren(n.lhs, PREC.Relational)} ${op} ${this.paren(n.rhs, PREC.Relational)}`;
      }
      case 'And':
        return sortByKey(n.args)
          .map((a) => this.paren(a, 38))
          .join(' & ');
      case 'Not':
        return `~${this.paren(n.arg, PREC.Not)}`;
      case 'FiniteSet':
        return `{${dedupSorted(n.args).map((a) => this.print(a)).join(', ')}}`;
      case 'Tuple':
        return n.args.length === 1 ? `(${this.print(n.args[0]!)},)` : `(${n.args.map((a) => this.print(a)).join(', ')})`;
      case 'Interval': {
        // endpoints go through str.format(): str() of the endpoint, and Floats via decimal.Decimal
        const a = intervalEnd(n.start);
        const b = intervalEnd(n.end);
        const aInf = n.start.t === 'Const' && (n.start.name === 'oo' || n.start.name === '-oo');
        const bInf = n.end.t === 'Const' && (n.end.name === 'oo' || n.end.name === '-oo');
        let m: string;
        if (aInf && bInf) m = '';
        else if (aInf && !n.ro) m = '';
        else if (bInf && !n.lo) m = '';
        else if (!n.lo && !n.ro) m = '';
        else if (n.lo && n.ro) m = '.open';
        else if (n.lo) m = '.Lopen';
        else m = '.Ropen';
        return `Interval${m}(${a}, ${b})`;
      }
      case 'SetOp':
        return `${n.op}(${orderedSetArgs(n).map((a) => this.print(a)).join(', ')})`;
      case 'SetConst':
        return n.name;
      case 'Matrix': {
        if (this.level <= 1) {
          // str(Matrix) is "Matrix(%s)" % str(tolist()): one line, elements as str()
          return `Matrix([${n.rows.map((r) => `[${r.map((a) => printExpr(a)).join(', ')}]`).join(', ')}])`;
        }
        // nested: the printer's table format, columns right-aligned, one row per line
        const cells = n.rows.map((r) => r.map((a) => this.print(a)));
        const widths = cells[0]!.map((_, j) => Math.max(...cells.map((r) => r[j]!.length)));
        const table = cells.map((r) => `[${r.map((c, j) => c.padStart(widths[j]!)).join(', ')}]`).join(',\n');
        return n.rows.length === 1 ? `Matrix([${table}])` : `Matrix([\n${table}])`;
      }
      case 'MatOp': {
        if (n.op === 'Mul') {
          let args = n.args;
          let sign = '';
          if (args.length > 1 && isNumber(args[0]!) && numSign(args[0]!) < 0) {
            sign = '-';
            const c = negNumber(args[0]!);
            args = c.t === 'Integer' && c.v === 1n ? args.slice(1) : [c, ...args.slice(1)];
          }
          return sign + args.map((a) => this.paren(a, PREC.Mul)).join('*');
        }
        const parts: string[] = [];
        for (const a of sortMatAddArgs(n.args)) {
          let t = this.paren(a, PREC.Add);
          let sign = '+';
          if (t.startsWith('-')) {
            sign = '-';
            t = t.slice(1);
          }
          parts.push(sign, t);
        }
        const first = parts.shift();
        return (first === '-' ? '-' : '') + parts.join(' ');
      }
    }
  }

  add(n: Extract<Node, { t: 'Add' }>): string {
    const parts: string[] = [];
    for (const term of orderedTerms(n)) {
      let t = this.print(term);
      let sign = '+';
      if (t.startsWith('-') && term.t !== 'Add') {
        sign = '-';
        t = t.slice(1);
      }
      parts.push(sign, precedence(term) < PREC.Add || term.t === 'Add' ? `(${t})` : t);
    }
    const first = parts.shift();
    return (first === '-' ? '-' : '') + parts.join(' ');
  }

  mul(n: Extract<Node, { t: 'Mul' }>): string {
    const prec = precedence(n);
    const args = n.args;
    const isOne = (x: Node) => x.t === 'Integer' && x.v === 1n;
    const negExp = (x: Node) => x.t === 'Pow' && expCoeffNegative(x.exp);
    if (
      (args.length > 0 && isOne(args[0]!)) ||
      args.slice(1).some((a) => isNumber(a) || (a.t === 'Pow' && a.base.t === 'Integer' && a.exp.t === 'Integer'))
    ) {
      const d: Node[] = [];
      const num: Node[] = [];
      for (const a of args) (negExp(a) ? d : num).push(a);
      for (let i = 0; i < d.length; i++) {
        const di = d[i] as Extract<Node, { t: 'Pow' }>;
        const e = negateExp(di.exp);
        d[i] = e.t === 'Integer' && e.v === 1n ? di.base : pow(di.base, e);
      }
      let pre: string[] = [];
      if (num.length > 0 && num[0]!.t !== 'Add' && couldExtractMinus(num[0]!)) pre = [this.print(num.shift()!)];
      let nf = [...pre, ...num.map((a) => this.paren(a, prec))];
      if (nf.length === 0) nf = ['1'];
      pre = [];
      if (d.length > 1 && couldExtractMinus(d[0]!)) pre = [this.print(d.shift()!)];
      const df = [...pre, ...d.map((a) => this.paren(a, prec))];
      const ns = nf.join('*');
      if (df.length > 1) return `${ns}/(${df.join('*')})`;
      if (df.length === 1) return `${ns}/${df[0]}`;
      return ns;
    }
    let sign = '';
    let rest: Node[] = args;
    if (args.length > 0 && isNumber(args[0]!) && numSign(args[0]!) < 0) {
      sign = '-';
      const c = negNumber(args[0]!);
      rest = isOne(c) ? args.slice(1) : [c, ...args.slice(1)];
      // _keep_coeff(-c, rest): a single remaining Mul contributes its own factors
      if (rest.length === 1 && rest[0]!.t === 'Mul') rest = rest[0]!.args;
      else if (rest.length === 2 && !isOne(c) && rest[1]!.t === 'Mul') rest = [rest[0]!, ...rest[1]!.args];
    }
    const items = rest.length === 1 ? rest : sortByKey(rest);
    const a: Node[] = [];
    const b: Node[] = [];
    const powParen: Node[] = [];
    for (const item of items) {
      if (item.t === 'Pow' && expCoeffNegative(item.exp)) {
        if (!(item.exp.t === 'Integer' && item.exp.v === -1n)) {
          b.push(pow(item.base, negateExp(item.exp)));
        } else {
          if (children(item.base).length !== 1 && (item.base.t === 'Mul' || item.base.t === 'Pow')) powParen.push(item.base);
          b.push(item.base);
        }
      } else if (isRationalNum(item)) {
        const [p, q] = ratParts(item)!;
        if (p !== 1n) a.push(int(p));
        if (q !== 1n) b.push(int(q));
      } else a.push(item);
    }
    if (a.length === 0) a.push(ONE);
    const aStr = a.length === 1 && sign === '-' ? [this.paren(a[0]!, 0.5 * (PREC.Pow + PREC.Mul))] : a.map((x) => this.paren(x, prec));
    const bStr = b.map((x) => this.paren(x, prec));
    for (const item of powParen) {
      const i = b.indexOf(item);
      if (i >= 0) bStr[i] = `(${bStr[i]})`;
    }
    if (b.length === 0) return sign + aStr.join('*');
    if (b.length === 1) return sign + aStr.join('*') + '/' + bStr[0];
    return sign + aStr.join('*') + `/(${bStr.join('*')})`;
  }

  pow(n: Extract<Node, { t: 'Pow' }>): string {
    const e = n.exp;
    if (e.t === 'Rational' && e.p === 1n && e.q === 2n) return `sqrt(${this.print(n.base)})`;
    if (e.t === 'Rational' && e.p === -1n && e.q === 2n) return `1/sqrt(${this.print(n.base)})`;
    if (e.t === 'Integer' && e.v === -1n) return `1/${this.paren(n.base, PREC.Pow)}`;
    return `${this.paren(n.base, PREC.Pow)}**${this.paren(e, PREC.Pow)}`;
  }
}

function sortMatAddArgs(args: Node[]): Node[] {
  const key = (a: Node): Key => {
    if (a.t === 'MatOp') return [0, a.args.map(sortKey)];
    if (a.t === 'Matrix') return [1, a.rows.flat().map(sortKey)];
    return [2, [sortKey(a)]];
  };
  return args
    .map((a, i) => ({ a, k: key(a), i }))
    .sort((x, y) => compareKeys(x.k, y.k) || x.i - y.i)
    .map((x) => x.a);
}

function intervalEnd(n: Node): string {
  const s = printExpr(n);
  return n.t === 'Float' ? pyDecimalStr(s) : s;
}

/** Union/Intersection args in sympy's order (by infimum; unevaluable members last). */
function orderedSetArgs(n: Extract<Node, { t: 'SetOp' }>): Node[] {
  if (n.op === 'Complement') return n.args;
  const inf = (a: Node): number => {
    let v = NaN;
    if (a.t === 'Interval') v = approxComplex?.(a.start)?.[0] ?? (a.start.t === 'Const' && a.start.name === '-oo' ? -Infinity : NaN);
    else if (a.t === 'FiniteSet' && a.args.length > 0) {
      const vals = a.args.map((x) => approxComplex?.(x)?.[0] ?? NaN);
      v = vals.some(Number.isNaN) ? NaN : Math.min(...vals);
    } else if (a.t === 'SetConst' && a.name === 'Reals') v = -Infinity;
    return Number.isNaN(v) ? Infinity : v;
  };
  return n.args
    .map((a, i) => ({ a, k: inf(a), i }))
    .sort((x, y) => (x.k < y.k ? -1 : x.k > y.k ? 1 : x.i - y.i))
    .map((x) => x.a);
}

function expCoeffNegative(e: Node): boolean {
  if (isNumber(e)) return numSign(e) < 0;
  if (e.t === 'Mul' && e.args.length > 0 && isNumber(e.args[0]!)) return numSign(e.args[0]!) < 0;
  return false;
}

function negateExp(e: Node): Node {
  if (isNumber(e)) return negNumber(e);
  if (e.t === 'Mul') {
    const c = negNumber(e.args[0]!);
    const rest = e.args.slice(1);
    if (c.t === 'Integer' && c.v === 1n) return rest.length === 1 ? rest[0]! : mul(...rest);
    return mul(c, ...rest);
  }
  return mul(NEG_ONE, e);
}
