// Equivalence of two parsed answers, following math-verify's grader (sympy_expr_eq and helpers).

import { type Node, MathError, MathTimeLimitError, add, children, freeSymbols, isNumber, mul, NEG_ONE, printExpr, sortByKey, dedupSorted, structEq, compareKeys, sortKey } from './nodes.js';
import { D, type Dec, doit, evalComplex, evalReal, exactRational } from './numeric.js';

export interface CompareOptions {
  floatRounding: number;
  numericPrecision: number;
  deadline: number;
}

function checkDeadline(o: CompareOptions): void {
  if (Date.now() > o.deadline) throw new MathTimeLimitError('comparison time limit exceeded');
}

const isRel = (n: Node): boolean => n.t === 'Rel' || (n.t === 'And' && n.args.length > 0 && n.args.every((a) => a.t === 'Rel'));
const isEquation = (n: Node): boolean => (n.t === 'Rel' && n.op === 'Eq') || (n.t === 'And' && n.args.length > 0 && n.args.every((a) => a.t === 'Rel' && a.op === 'Eq'));

function onlySymbols(n: Node): boolean {
  if (n.t === 'Symbol') return true;
  if (n.t === 'Pow' && n.exp.t === 'Integer' && n.exp.v === -1n) {
    return n.base.t === 'Symbol' || (children(n.base).length > 0 && children(n.base).every(onlySymbols));
  }
  const cs = children(n);
  return cs.length > 0 && cs.every(onlySymbols);
}

function isAssignment(n: Node): boolean {
  if (n.t === 'Rel' && n.op === 'Eq') return onlySymbols(n.lhs);
  if (n.t === 'And' && n.args.length > 0) return n.args.every((a) => a.t === 'Rel' && a.op === 'Eq') && onlySymbols((n.args[0] as Extract<Node, { t: 'Rel' }>).lhs);
  return false;
}
function lastRel(n: Node): Extract<Node, { t: 'Rel' }> {
  if (n.t === 'And') return lastRel(n.args[n.args.length - 1]!);
  return n as Extract<Node, { t: 'Rel' }>;
}
function firstRel(n: Node): Extract<Node, { t: 'Rel' }> {
  if (n.t === 'And') return n.args[0] as Extract<Node, { t: 'Rel' }>;
  return n as Extract<Node, { t: 'Rel' }>;
}

const isSet = (n: Node): boolean => n.t === 'FiniteSet' || n.t === 'Interval' || n.t === 'SetOp' || n.t === 'SetConst';

export function exprEq(gold: Node, pred: Node, o: CompareOptions): boolean {
  checkDeadline(o);
  const goldAssign = isAssignment(gold);
  const predAssign = isAssignment(pred);
  const goldEqn = isEquation(gold);
  const predEqn = isEquation(pred);
  if (goldAssign) gold = { t: 'Rel', op: 'Eq', lhs: firstRel(gold).lhs, rhs: lastRel(gold).rhs };
  if (predAssign) pred = { t: 'Rel', op: 'Eq', lhs: firstRel(pred).lhs, rhs: lastRel(pred).rhs };
  if (predEqn && !goldEqn) pred = lastRel(pred).rhs;
  else if (goldAssign && !predEqn) gold = lastRel(gold).rhs;

  if (isRel(gold) && isSet(pred)) {
    const s = relationAsSet(gold);
    if (s) gold = s;
    else {
      // as_set() of a one-variable relation (|x| < 2, x^2 >= 4, x = 3): decided by membership
      const decided = relationMatchesSet(gold, pred, o);
      if (decided !== null) return decided;
    }
  }

  if (gold.t === 'Const' && (gold.name === 'nan' || gold.name === 'zoo')) throw new MathError("can't evaluate nan or zoo");
  if (structEq(gold, pred)) return true;

  if (isRel(gold) && isRel(pred)) return compareRelational(gold, pred, o);
  if (isSet(gold) || isSet(pred) || gold.t === 'Tuple' || pred.t === 'Tuple') return compareSets(gold, pred, o);
  if (gold.t === 'Symbol' || pred.t === 'Symbol') return compareSymbols(gold, pred);
  const isMat = (n: Node) => n.t === 'Matrix' || n.t === 'MatOp';
  if (isMat(gold) || isMat(pred)) {
    // doit() on both, then elementwise
    const gm = isMat(gold) ? matrixValue(gold) : null;
    const pm = isMat(pred) ? matrixValue(pred) : null;
    if (!gm || !pm) return false;
    if (gm.length !== pm.length || gm[0]!.length !== pm[0]!.length) return false;
    const g = gm.flat();
    const p = pm.flat();
    return g.every((x, i) => numericEq(x, p[i]!, o) || valueEq(x, p[i]!, o));
  }
  if (isRel(gold) || isRel(pred)) return false;
  if (numericEq(gold, pred, o)) return true;
  return valueEq(gold, pred, o);
}

/** Entries of a matrix expression (sums, scalar multiples and products of matrices), unevaluated. */
function matrixValue(n: Node): Node[][] | null {
  if (n.t === 'Matrix') return n.rows;
  if (n.t !== 'MatOp') return null;
  if (n.op === 'Add') {
    const ms = n.args.map(matrixValue);
    if (ms.some((m) => !m)) return null;
    const first = ms[0]!;
    if (ms.some((m) => m!.length !== first.length || m![0]!.length !== first[0]!.length)) return null;
    return first.map((row, i) => row.map((_, j) => add(...ms.map((m) => m![i]![j]!))));
  }
  let acc: Node[][] | null = null;
  let scalar: Node[] = [];
  for (const a of n.args) {
    const m = a.t === 'Matrix' || a.t === 'MatOp' ? matrixValue(a) : null;
    if (!m) {
      if (a.t === 'Matrix' || a.t === 'MatOp') return null;
      scalar.push(a);
      continue;
    }
    if (!acc) acc = m;
    else {
      if (acc[0]!.length !== m.length) return null;
      const left: Node[][] = acc;
      acc = left.map((row) => m[0]!.map((_, j) => add(...row.map((x, k) => mul(x, m[k]![j]!)))));
    }
  }
  if (!acc) return null;
  if (scalar.length > 0) {
    const sc = scalar;
    acc = acc.map((row) => row.map((x) => mul(...sc, x)));
    scalar = [];
  }
  return acc;
}

function isPctAtomic(n: Node, kind: 'Number' | 'Float'): boolean {
  const test = (x: Node) => (kind === 'Number' ? isNumber(x) : x.t === 'Float');
  if (test(n)) return true;
  return n.t === 'Mul' && n.args.length === 2 && n.args[1]!.t === 'Rational' && n.args[1]!.p === 1n && n.args[1]!.q === 100n && test(n.args[0]!);
}

/** sympy_numeric_eq for the Number cases (Float rounding, exact rationals). */
function numericEq(a: Node, b: Node, o: CompareOptions): boolean {
  if (isPctAtomic(a, 'Number') || isPctAtomic(b, 'Number')) {
    if (isPctAtomic(a, 'Float') || isPctAtomic(b, 'Float')) {
      // sympy 1.14: Integer.round() stays an Integer and an Integer never equals a Float under ==,
      // so an integer on either side leaves the decision to the exact (symbolic) check
      if (a.t === 'Integer' || b.t === 'Integer') return false;
      try {
        return roundTo(a, o.floatRounding) === roundTo(b, o.floatRounding);
      } catch {
        return false;
      }
    }
    const da = doit(a);
    const db = doit(b);
    return structEq(da, db);
  }
  return false;
}

function roundTo(n: Node, places: number): string {
  if (freeSymbols(n).size > 0) throw new MathError('symbolic');
  const v = evalReal(n);
  if (!v.isFinite()) return v.toString();
  // beyond 60 significant digits there is no fractional part left to round
  if (v.abs().gte('1e50')) return v.toSignificantDigits(60).toString();
  return v.toDecimalPlaces(places, D.ROUND_HALF_EVEN).toString();
}

// Symbols are real (not positive) in latex2sympy, so identities are checked on both signs.
const SAMPLE_POINTS = [
  '0.5772156649015328606065120900824024310422',
  '-1.3247179572447460259609088544780973407344',
  '2.2360679774997896964091736687312762354406',
  '-0.7390851332151606416553120876738734040134',
  '1.6180339887498948482045868343656381177203',
  '-2.6651441426902251886502972498731398482742',
];

/**
 * Numeric evaluation (evalf with chop) followed by the symbolic check (simplify(a - b) == 0),
 * decided here by high-precision evaluation: closed-form values at 60 digits, expressions with
 * free symbols at sample points of both signs (points where neither side is defined are skipped).
 */
function valueEq(a: Node, b: Node, o: CompareOptions): boolean {
  checkDeadline(o);
  if (children(a).length === 0 && children(b).length === 0 && !isNumber(a) && !isNumber(b) && a.t !== 'Const' && b.t !== 'Const') return false;
  const ra = exactRational(a);
  const rb = exactRational(b);
  if (ra && rb) return ra[0] * rb[1] === rb[0] * ra[1];
  const syms = [...new Set([...freeSymbols(a), ...freeSymbols(b)])].sort();
  if (containsUndef(a) || containsUndef(b)) return false;
  if (syms.length === 0) return compareAt(a, b, new Map(), true) === 'equal';
  // integer-valued functions (factorial, binomial, floor, sums, ...) are sampled at integers
  const integerPoints = containsIntegerFunction(a) || containsIntegerFunction(b);
  let agreed = 0;
  for (let k = 0; k < SAMPLE_POINTS.length; k++) {
    checkDeadline(o);
    const env = new Map<string, Dec>();
    // all symbols share the sign of point k, so both-positive and both-negative cases are covered
    syms.forEach((s, i) =>
      env.set(s, integerPoints ? new D(5 + 3 * k + 2 * i) : new D(SAMPLE_POINTS[(k + 2 * i) % SAMPLE_POINTS.length]!).times(1 + 0.13 * i)),
    );
    const r = compareAt(a, b, env, false);
    if (r === 'different') return false;
    if (r === 'equal') agreed++;
  }
  return agreed >= 2;
}

function containsIntegerFunction(n: Node): boolean {
  if (n.t === 'Func' && INTEGER_FUNCS.has(n.name)) return true;
  return children(n).some(containsIntegerFunction);
}
const INTEGER_FUNCS = new Set(['factorial', 'binomial', 'floor', 'ceiling', 'Mod', 'gcd', 'lcm', 'Sum', 'Product']);

function containsUndef(n: Node): boolean {
  if (n.t === 'Func' && n.undef) return true;
  return children(n).some(containsUndef);
}

type PointResult = 'equal' | 'different' | 'undefined';

function complexAt(n: Node, env: Map<string, Dec>): [number, number] | null {
  try {
    const v = evalComplex(n, new Map([...env].map(([k, x]) => [k, Number(x.toString())])));
    return v.every(Number.isFinite) ? v : null;
  } catch {
    return null;
  }
}

function compareAt(a: Node, b: Node, env: Map<string, Dec>, absolute: boolean): PointResult {
  let va: Dec | null = null;
  let vb: Dec | null = null;
  try {
    va = evalReal(a, env);
  } catch {
    va = null;
  }
  try {
    vb = evalReal(b, env);
  } catch {
    vb = null;
  }
  if (va === null || vb === null) {
    const ca = complexAt(a, env);
    const cb = complexAt(b, env);
    if (!ca && !cb) return 'undefined';
    if (!ca || !cb) return 'different';
    const scale = Math.max(1, Math.hypot(...ca), Math.hypot(...cb));
    return Math.hypot(ca[0] - cb[0], ca[1] - cb[1]) <= 1e-12 * scale ? 'equal' : 'different';
  }
  if (!va.isFinite() || !vb.isFinite()) return va.eq(vb) ? 'equal' : 'different';
  const diff = va.minus(vb).abs();
  if (absolute && diff.lt(new D(2).pow(-49))) return 'equal';
  const scale = D.max(va.abs(), vb.abs());
  if (scale.isZero()) return diff.isZero() ? 'equal' : 'different';
  return diff.lte(scale.times('1e-40')) ? 'equal' : 'different';
}

function relationAsSet(n: Node): Node | null {
  // 1 < x < 2 style relations in one variable become intervals
  const rels = n.t === 'And' ? n.args : [n];
  let lo: Node = { t: 'Const', name: '-oo' };
  let hi: Node = { t: 'Const', name: 'oo' };
  let lopen = true;
  let hopen = true;
  let variable: string | null = null;
  for (const r of rels) {
    if (r.t !== 'Rel' || r.op === 'Eq' || r.op === 'Ne') return null;
    let { lhs, rhs, op } = r;
    // function applications count as plain variables here (math-verify unwraps f(x) to a symbol)
    const isVar = (x: Node) => x.t === 'Symbol' || (x.t === 'Func' && !!x.undef);
    if (isVar(rhs) && !isVar(lhs)) {
      [lhs, rhs] = [rhs, lhs];
      op = ({ Lt: 'Gt', Gt: 'Lt', Le: 'Ge', Ge: 'Le' } as const)[op];
    }
    if (!isVar(lhs) || freeSymbols(rhs).size > 0) return null;
    const name = printExpr(lhs);
    if (variable && variable !== name) return null;
    variable = name;
    if (op === 'Lt' || op === 'Le') {
      hi = rhs;
      hopen = op === 'Lt';
    } else {
      lo = rhs;
      lopen = op === 'Gt';
    }
  }
  return { t: 'Interval', start: lo, end: hi, lo: lopen, ro: hopen };
}

// ---------------------------------------------------------------------------------------------
// Relation vs set by membership: the solution set of a one-variable relation equals a set of
// intervals/points when both agree at every breakpoint (set endpoints and roots of the relation's
// sides), between breakpoints and beyond them.

type Piece = { lo: number; hi: number; lopen: boolean; hopen: boolean };

function setPieces(n: Node): Piece[] | null {
  const num = (x: Node): number | null => {
    if (x.t === 'Const' && x.name === 'oo') return Infinity;
    if (x.t === 'Const' && x.name === '-oo') return -Infinity;
    try {
      const v = Number(evalReal(x).toString());
      return Number.isFinite(v) ? v : null;
    } catch {
      return null;
    }
  };
  if (n.t === 'Interval') {
    const lo = num(n.start);
    const hi = num(n.end);
    return lo === null || hi === null ? null : [{ lo, hi, lopen: n.lo, hopen: n.ro }];
  }
  if (n.t === 'FiniteSet') {
    const out: Piece[] = [];
    for (const a of n.args) {
      const v = num(a);
      if (v === null) return null;
      out.push({ lo: v, hi: v, lopen: false, hopen: false });
    }
    return out;
  }
  if (n.t === 'SetOp' && n.op === 'Union') {
    const out: Piece[] = [];
    for (const a of n.args) {
      const p = setPieces(a);
      if (!p) return null;
      out.push(...p);
    }
    return out;
  }
  if (n.t === 'SetConst' && n.name === 'Reals') return [{ lo: -Infinity, hi: Infinity, lopen: true, hopen: true }];
  if (n.t === 'SetConst' && n.name === 'EmptySet') return [];
  return null;
}

const close = (a: number, b: number) => Number.isFinite(a) && Number.isFinite(b) && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

function inPieces(x: number, pieces: Piece[]): boolean {
  return pieces.some((p) => {
    if (close(x, p.lo)) return !p.lopen;
    if (close(x, p.hi)) return !p.hopen;
    return x > p.lo && x < p.hi;
  });
}

function relationMatchesSet(gold: Node, pred: Node, o: CompareOptions): boolean | null {
  const rels = (gold.t === 'And' ? gold.args : [gold]) as Extract<Node, { t: 'Rel' }>[];
  const variables = new Set<string>();
  const collect = (n: Node): void => {
    if (n.t === 'Symbol') variables.add(n.name);
    else if (n.t === 'Func' && n.undef) variables.add(printExpr(n));
    else children(n).forEach(collect);
  };
  rels.forEach((r) => (collect(r.lhs), collect(r.rhs)));
  if (variables.size !== 1 || rels.some((r) => r.op === 'Ne')) return null;
  const variable = [...variables][0]!;
  const pieces = setPieces(pred);
  if (!pieces) return null;
  const subst = (n: Node, x: number): Node => {
    if (n.t === 'Symbol' || (n.t === 'Func' && n.undef)) return printExpr(n) === variable ? { t: 'Float', v: String(x), dps: 30 } : n;
    switch (n.t) {
      case 'Add':
      case 'Mul':
      case 'Func':
        return { ...n, args: n.args.map((a) => subst(a, x)) };
      case 'Pow':
        return { t: 'Pow', base: subst(n.base, x), exp: subst(n.exp, x) };
      default:
        return n;
    }
  };
  const sideDiff = (r: Extract<Node, { t: 'Rel' }>, x: number): number | null => {
    try {
      const v = Number(evalReal(diff(subst(r.lhs, x), subst(r.rhs, x))).toString());
      return Number.isFinite(v) ? v : null;
    } catch {
      return null;
    }
  };
  const holds = (x: number): boolean | null => {
    for (const r of rels) {
      const d = sideDiff(r, x);
      if (d === null) return null;
      const zero = Math.abs(d) <= 1e-9 * Math.max(1, Math.abs(x));
      const ok = r.op === 'Eq' ? zero : r.op === 'Lt' ? d < 0 && !zero : r.op === 'Le' ? d < 0 || zero : r.op === 'Gt' ? d > 0 && !zero : d > 0 || zero;
      if (!ok) return false;
    }
    return true;
  };
  // breakpoints: set endpoints and sign changes of each relation's lhs - rhs on a wide grid
  const points = new Set<number>();
  for (const p of pieces) for (const v of [p.lo, p.hi]) if (Number.isFinite(v)) points.add(v);
  const grid: number[] = [0];
  for (let e = -3; e <= 6; e += 0.05) grid.push(10 ** e, -(10 ** e));
  grid.sort((a, b) => a - b);
  for (const r of rels) {
    checkDeadline(o);
    let prevX: number | null = null;
    let prevD: number | null = null;
    for (const x of grid) {
      const d = sideDiff(r, x);
      if (d !== null && Math.abs(d) <= 1e-12) points.add(x);
      if (d !== null && prevD !== null && prevX !== null && Math.sign(d) !== Math.sign(prevD) && d !== 0 && prevD !== 0) {
        let a = prevX;
        let b = x;
        let da = prevD;
        for (let k = 0; k < 200; k++) {
          const m = (a + b) / 2;
          const dm = sideDiff(r, m);
          if (dm === null) break;
          if (Math.sign(dm) === Math.sign(da)) {
            a = m;
            da = dm;
          } else b = m;
        }
        points.add((a + b) / 2);
      }
      prevX = d === null ? null : x;
      prevD = d;
    }
  }
  const sorted = [...points].sort((a, b) => a - b);
  const tests: number[] = [];
  if (sorted.length === 0) tests.push(0, 1e7, -1e7);
  else {
    tests.push(sorted[0]! - 1 - Math.abs(sorted[0]!), sorted[sorted.length - 1]! + 1 + Math.abs(sorted[sorted.length - 1]!));
    sorted.forEach((p, i) => {
      tests.push(p);
      if (i + 1 < sorted.length) tests.push((p + sorted[i + 1]!) / 2);
    });
  }
  for (const x of tests) {
    const g = holds(x);
    if (g === null) continue;
    if (g !== inPieces(x, pieces)) return false;
  }
  return true;
}

function diff(a: Node, b: Node): Node {
  return add(a, mul(NEG_ONE, b));
}

function compareRelational(gold: Node, pred: Node, o: CompareOptions): boolean {
  if (gold.t === 'And' && pred.t === 'And') {
    if (gold.args.length !== pred.args.length) return false;
    return gold.args.every((g, i) => compareRelational(g, pred.args[i]!, o));
  }
  if (gold.t !== 'Rel' || pred.t !== 'Rel') return false;
  if (gold.op === pred.op && safe(() => exprEq(diff(gold.lhs, gold.rhs), diff(pred.lhs, pred.rhs), o))) return true;
  const inverse: Record<string, string> = { Gt: 'Lt', Lt: 'Gt', Ge: 'Le', Le: 'Ge', Eq: 'Eq' };
  if (inverse[gold.op] === pred.op && safe(() => exprEq(diff(gold.lhs, gold.rhs), diff(pred.rhs, pred.lhs), o))) return true;
  if (gold.op === 'Eq' && pred.op === 'Eq' && safe(() => proportional(diff(gold.lhs, gold.rhs), diff(pred.lhs, pred.rhs), o))) return true;
  return false;
}

/**
 * Stand-in for sympy's solve-and-compare on two equations: equations whose sides differ by a
 * constant non-zero factor (2x + 4y - 3 = 0 and y = -x/2 + 3/4) have the same solutions.
 */
function proportional(g: Node, p: Node, o: CompareOptions): boolean {
  const gs = [...freeSymbols(g)].sort();
  const ps = [...freeSymbols(p)].sort();
  if (gs.length === 0 || gs.join(',') !== ps.join(',') || containsUndef(g) || containsUndef(p)) return false;
  let ratio: Dec | null = null;
  let agreed = 0;
  for (let k = 0; k < SAMPLE_POINTS.length; k++) {
    checkDeadline(o);
    const env = new Map<string, Dec>();
    gs.forEach((s, i) => env.set(s, new D(SAMPLE_POINTS[(k + 2 * i) % SAMPLE_POINTS.length]!).times(1 + 0.13 * i)));
    let vg: Dec;
    let vp: Dec;
    try {
      vg = evalReal(g, env);
      vp = evalReal(p, env);
    } catch {
      continue;
    }
    if (vp.isZero() || vg.isZero() || !vg.isFinite() || !vp.isFinite()) return false;
    const r = vg.div(vp);
    if (ratio === null) ratio = r;
    else if (r.minus(ratio).abs().gt(ratio.abs().times('1e-30'))) return false;
    agreed++;
  }
  return agreed >= 2;
}

function safe(fn: () => boolean): boolean {
  try {
    return fn();
  } catch (e) {
    if (e instanceof MathTimeLimitError) throw e;
    return false;
  }
}

function setLen(n: Node): number {
  return n.t === 'FiniteSet' ? dedupSorted(n.args).length : children(n).length;
}

/** Approximation of sympy's evalf() shape: numeric parts collapse into one Float per Add/Mul. */
function evalfShape(n: Node): Node {
  const numeric = (x: Node): Node | null => {
    if (freeSymbols(x).size > 0 || containsUndef(x) || isSet(x) || x.t === 'Tuple' || x.t === 'Rel' || x.t === 'Matrix') return null;
    try {
      const v = evalReal(x);
      return v.isFinite() ? { t: 'Float', v: v.toString(), dps: 15 } : null;
    } catch {
      return null;
    }
  };
  const whole = numeric(n);
  if (whole) return whole;
  if (n.t === 'Add' || n.t === 'Mul') {
    const nums: Node[] = [];
    const rest: Node[] = [];
    for (const a of n.args) {
      const v = numeric(a);
      if (v) nums.push(v);
      else rest.push(evalfShape(a));
    }
    if (nums.length > 0) {
      const c = numeric({ t: n.t, args: nums });
      if (c && !(n.t === 'Mul' && Number(c.t === 'Float' ? c.v : 0) === 1)) rest.unshift(c);
    }
    return rest.length === 1 ? rest[0]! : { t: n.t, args: rest };
  }
  if (n.t === 'Pow') return { t: 'Pow', base: evalfShape(n.base), exp: n.exp };
  if (n.t === 'Func') return { ...n, args: n.args.map(evalfShape) };
  return n;
}

function numericSortKey(n: Node) {
  const inner = isAssignment(n) ? lastRel(n).rhs : n;
  try {
    return sortKey(evalfShape(inner));
  } catch {
    return sortKey(inner);
  }
}

function orderedArgs(n: Node): Node[] {
  const args = n.t === 'FiniteSet' ? dedupSorted(n.args) : children(n);
  return args
    .map((a, i) => ({ a, k: numericSortKey(a), i }))
    .sort((x, y) => compareKeys(x.k, y.k) || compareKeys(sortKey(x.a), sortKey(y.a)) || x.i - y.i)
    .map((x) => x.a);
}

function deepCompare(gold: Node, pred: Node, o: CompareOptions): boolean {
  if (setLen(gold) !== setLen(pred)) return false;
  let g: Node[];
  let p: Node[];
  if (gold.t === 'FiniteSet') {
    g = orderedArgs(gold);
    p = pred.t === 'FiniteSet' ? orderedArgs(pred) : children(pred);
  } else if (gold.t === 'Tuple' && pred.t === 'FiniteSet') {
    g = children(gold);
    p = pred.args;
  } else if (pred.t === 'FiniteSet') {
    p = orderedArgs(pred);
    g = children(gold);
  } else {
    g = children(gold);
    p = children(pred);
  }
  if (g.length !== p.length) return false;
  return g.every((x, i) => exprEq(x, p[i]!, o));
}

function compareSets(gold: Node, pred: Node, o: CompareOptions): boolean {
  const a: Node = isSet(gold) || gold.t === 'Tuple' ? gold : { t: 'FiniteSet', args: [gold] };
  const b: Node = isSet(pred) || pred.t === 'Tuple' ? pred : { t: 'FiniteSet', args: [pred] };
  if (a.t === 'Interval' && b.t === 'Interval') {
    return a.lo === b.lo && a.ro === b.ro && exprEq(a.start, b.start, o) && exprEq(a.end, b.end, o);
  }
  if (structEq(a, b)) return true;
  if (a.t === 'FiniteSet' && b.t === 'FiniteSet') {
    // symmetric difference empty: every element has an exactly equal partner
    const ea = dedupSorted(a.args);
    const eb = dedupSorted(b.args);
    if (ea.length === eb.length && ea.every((x) => eb.some((y) => exactSame(x, y))) && eb.every((y) => ea.some((x) => exactSame(x, y)))) return true;
  }
  if ((a.t === 'FiniteSet' || a.t === 'Tuple') && (b.t === 'FiniteSet' || b.t === 'Tuple')) return deepCompare(a, b, o);
  if (a.t === 'Interval' && (b.t === 'FiniteSet' || b.t === 'Tuple') && a.lo && a.ro && setLen(b) === 2) {
    return deepCompare({ t: 'Tuple', args: [a.start, a.end] }, b, o);
  }
  if (b.t === 'Interval' && (a.t === 'FiniteSet' || a.t === 'Tuple') && b.lo && b.ro && setLen(a) === 2) {
    return deepCompare(a, { t: 'Tuple', args: [b.start, b.end] }, o);
  }
  return false;
}

function exactSame(x: Node, y: Node): boolean {
  if (structEq(x, y)) return true;
  const rx = exactRational(x);
  const ry = exactRational(y);
  return !!rx && !!ry && rx[0] * ry[1] === ry[0] * rx[1];
}

function compareSymbols(gold: Node, pred: Node): boolean {
  const isE = (n: Node) => n.t === 'Const' && n.name === 'E';
  if ((gold.t === 'Symbol' && gold.name.toLowerCase() === 'e' && isE(pred)) || (pred.t === 'Symbol' && pred.name.toLowerCase() === 'e' && isE(gold))) return true;
  const concat = (m: Node): string | null => {
    if (m.t !== 'Mul') return null;
    if (!m.args.every((x) => isE(x) || x.t === 'Symbol')) return null;
    return m.args
      .map((x) => (x.t === 'Symbol' ? x.name : 'e'))
      .join('');
  };
  if (gold.t === 'Symbol') {
    const c = concat(pred);
    if (c !== null) return gold.name.toLowerCase() === c.toLowerCase();
  }
  if (pred.t === 'Symbol') {
    const c = concat(gold);
    if (c !== null) return pred.name.toLowerCase() === c.toLowerCase();
  }
  if (gold.t === 'Symbol' && pred.t === 'Symbol') {
    const g = gold.name.length > 1 ? gold.name.toLowerCase() : gold.name;
    const p = pred.name.length > 1 ? pred.name.toLowerCase() : pred.name;
    return g === p;
  }
  return printExpr(gold) === printExpr(pred);
}
