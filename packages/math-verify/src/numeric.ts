// Numeric evaluation: exact rationals (BigInt), high-precision reals (decimal.js) and a
// double-precision complex fallback for expressions that leave the reals (sqrt(-1), I, ...).

import { Decimal as DecimalLib } from 'decimal.js';
import { type Node, MathError, isNumber, rational, ratParts, setApproxComplex } from './nodes.js';
import { setApproxReal } from './latex.js';

const CONFIG = { precision: 60, rounding: DecimalLib.ROUND_HALF_EVEN, toExpNeg: -40, toExpPos: 40, minE: -9e15, maxE: 9e15 } as const;
export const D = DecimalLib.clone(CONFIG);
export type Dec = InstanceType<typeof D>;

const MAX_INT_BITS = 20000n;

function bitLength(v: bigint): bigint {
  return BigInt((v < 0n ? -v : v).toString(2).length);
}

/** Exact value as p/q when the tree only involves rationals and integer powers. */
export function exactRational(n: Node): [bigint, bigint] | null {
  switch (n.t) {
    case 'Integer':
      return [n.v, 1n];
    case 'Rational':
      return [n.p, n.q];
    case 'Add': {
      let p = 0n;
      let q = 1n;
      for (const a of n.args) {
        const r = exactRational(a);
        if (!r) return null;
        p = p * r[1] + r[0] * q;
        q = q * r[1];
        const g = gcdB(p, q);
        if (g > 1n) {
          p /= g;
          q /= g;
        }
      }
      return [p, q];
    }
    case 'Mul': {
      let p = 1n;
      let q = 1n;
      for (const a of n.args) {
        const r = exactRational(a);
        if (!r) return null;
        p *= r[0];
        q *= r[1];
        const g = gcdB(p, q);
        if (g > 1n) {
          p /= g;
          q /= g;
        }
      }
      if (q === 0n) return null;
      if (q < 0n) return [-p, -q];
      return [p, q];
    }
    case 'Pow': {
      const b = exactRational(n.base);
      if (!b || n.exp.t !== 'Integer') return null;
      let e = n.exp.v;
      let [p, q] = b;
      if (e < 0n) {
        if (p === 0n) return null;
        [p, q] = [q, p];
        e = -e;
      }
      if ((bitLength(p) + bitLength(q)) * e > MAX_INT_BITS) return null;
      const rp = p ** e;
      const rq = q ** e;
      return rq < 0n ? [-rp, -rq] : [rp, rq];
    }
    default:
      return null;
  }
}

function gcdB(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b) [a, b] = [b, a % b];
  return a;
}

/** sympy doit(): exact numbers where the tree is rational, otherwise the tree itself. */
export function doit(n: Node): Node {
  const r = exactRational(n);
  if (r && r[1] !== 0n) return rational(r[0], r[1]);
  return n;
}

class NotReal extends Error {}

function decOf(n: Node): Dec {
  if (n.t === 'Integer') return new D(n.v.toString());
  if (n.t === 'Rational') return new D(n.p.toString()).div(n.q.toString());
  if (n.t === 'Float') return new D(n.v);
  throw new MathError('not a number');
}

let PI: Dec | null = null;
function pi(): Dec {
  if (!PI) PI = D.acos(-1);
  return PI;
}

/** High-precision real value. Throws for non-real or unsupported parts. */
export function evalReal(n: Node, env: Map<string, Dec> = new Map()): Dec {
  try {
    const v = evalRealInner(n, env);
    if (v.isNaN()) throw new NotReal();
    return v;
  } finally {
    // decimal.js raises its working precision inside sin/exp/ln/...; when such a call throws
    // (e.g. "precision limit exceeded") the raised value would stick and make later
    // arithmetic allocate without bound, so the configuration is restored after every evaluation
    if (D.precision !== CONFIG.precision || D.rounding !== CONFIG.rounding) D.set({ precision: CONFIG.precision, rounding: CONFIG.rounding });
  }
}

/** Arguments beyond these magnitudes are not evaluated (sympy would not get a value either in time). */
const MAX_TRIG_ARG = new DecimalLib('1e15');
const MAX_EXP_ARG = new DecimalLib('1e9');
function guardArg(name: string, x: Dec): void {
  const limit = ['exp', 'sinh', 'cosh', 'tanh'].includes(name) ? MAX_EXP_ARG : MAX_TRIG_ARG;
  if (x.isFinite() && x.abs().gt(limit)) throw new MathError(`${name} argument too large to evaluate`);
}

// Trees are never mutated, so closed-form values can be cached per node.
const CLOSED_CACHE = new WeakMap<Node, Dec | Error>();
let E_VALUE: Dec | null = null;

function evalRealInner(n: Node, env: Map<string, Dec>): Dec {
  if (env.size > 0 || isNumber(n) || n.t === 'Symbol') return evalRealUncached(n, env);
  const hit = CLOSED_CACHE.get(n);
  if (hit instanceof Error) throw hit;
  if (hit) return hit;
  try {
    const v = evalRealUncached(n, env);
    CLOSED_CACHE.set(n, v);
    return v;
  } catch (e) {
    CLOSED_CACHE.set(n, e as Error);
    throw e;
  }
}

function evalRealUncached(n: Node, env: Map<string, Dec>): Dec {
  switch (n.t) {
    case 'Integer':
    case 'Rational':
    case 'Float':
      return decOf(n);
    case 'Symbol': {
      const v = env.get(n.name);
      if (!v) throw new MathError(`free symbol ${n.name}`);
      return v;
    }
    case 'Const':
      if (n.name === 'pi') return pi();
      if (n.name === 'E') return (E_VALUE ??= D.exp(1));
      if (n.name === 'oo') return new D(Infinity);
      if (n.name === '-oo') return new D(-Infinity);
      throw new NotReal();
    case 'Add': {
      let s = new D(0);
      for (const a of n.args) s = s.plus(evalRealInner(a, env));
      return s;
    }
    case 'Mul': {
      let s = new D(1);
      for (const a of n.args) s = s.times(evalRealInner(a, env));
      return s;
    }
    case 'Pow': {
      const b = evalRealInner(n.base, env);
      const e = n.exp;
      if (e.t === 'Integer') {
        if (e.v > 10n ** 12n || e.v < -(10n ** 12n)) {
          return D.pow(b, e.v.toString());
        }
        return b.pow(e.v.toString());
      }
      if (e.t === 'Rational' && e.q === 2n && !b.isNegative()) {
        const r = b.sqrt();
        return e.p === 1n ? r : r.pow(e.p.toString());
      }
      const ev = evalRealInner(e, env);
      if (b.isNegative()) {
        // odd roots of negative numbers are complex in sympy (principal branch)
        throw new NotReal();
      }
      return b.pow(ev);
    }
    case 'Func': {
      if ((n.name === 'Sum' || n.name === 'Product') && n.args[1]?.t === 'Tuple') return evalSumOrProduct(n, env);
      const args = n.args.map((a) => evalRealInner(a, env));
      const x = args[0]!;
      guardArg(n.name, x);
      switch (n.name) {
        case 'sin':
          return D.sin(x);
        case 'cos':
          return D.cos(x);
        case 'tan':
          return D.tan(x);
        case 'cot':
          return new D(1).div(D.tan(x));
        case 'sec':
          return new D(1).div(D.cos(x));
        case 'csc':
          return new D(1).div(D.sin(x));
        case 'asin':
          return D.asin(x);
        case 'acos':
          return D.acos(x);
        case 'atan':
          return D.atan(x);
        case 'acot':
          return D.atan(new D(1).div(x));
        case 'sinh':
          return D.sinh(x);
        case 'cosh':
          return D.cosh(x);
        case 'tanh':
          return D.tanh(x);
        case 'asinh':
          return D.asinh(x);
        case 'acosh':
          return D.acosh(x);
        case 'atanh':
          return D.atanh(x);
        case 'exp':
          return D.exp(x);
        case 'log':
          if (x.isNegative()) throw new NotReal();
          return args.length === 2 ? D.ln(x).div(D.ln(args[1]!)) : D.ln(x);
        case 'Abs':
          return x.abs();
        case 'floor':
          return x.floor();
        case 'ceiling':
          return x.ceil();
        case 'factorial': {
          if (!x.isInteger() || x.isNegative() || x.gt(2000)) throw new MathError('factorial');
          let r = new D(1);
          for (let i = 2; x.gte(i); i++) r = r.times(i);
          return r;
        }
        case 'binomial': {
          const k = args[1]!;
          if (!k.isInteger() || k.isNegative() || k.gt(2000)) throw new MathError('binomial');
          let r = new D(1);
          for (let i = 0; k.gt(i); i++) r = r.times(x.minus(i)).div(i + 1);
          return r;
        }
        case 'Max':
          return D.max(...args);
        case 'Min':
          return D.min(...args);
        case 'Mod':
          return x.mod(args[1]!);
        case 'gcd':
        case 'lcm': {
          if (!args.every((a) => a.isInteger())) throw new MathError('gcd');
          if (args.some((a) => a.abs().gt('1e100'))) throw new MathError('gcd of huge numbers');
          const ints = args.map((a) => BigInt(a.toFixed(0)));
          let g = ints[0]!;
          for (const b of ints.slice(1)) g = n.name === 'gcd' ? gcdB(g, b) : (g * b) / (gcdB(g, b) || 1n);
          return new D((g < 0n ? -g : g).toString());
        }
        default:
          throw new MathError(`cannot evaluate ${n.name}`);
      }
    }
    default:
      throw new MathError(`cannot evaluate ${n.t}`);
  }
}

const MAX_TERMS = 10_000;

function evalSumOrProduct(n: Extract<Node, { t: 'Func' }>, env: Map<string, Dec>): Dec {
  const [variable, start, end] = (n.args[1] as Extract<Node, { t: 'Tuple' }>).args as [Node, Node, Node];
  if (variable.t !== 'Symbol') throw new MathError('summation index must be a symbol');
  const a = evalRealInner(start, env);
  const b = evalRealInner(end, env);
  if (!a.isInteger() || !b.isInteger() || b.minus(a).gt(MAX_TERMS)) throw new MathError('cannot evaluate this sum');
  const isSum = n.name === 'Sum';
  let acc = new D(isSum ? 0 : 1);
  const inner = new Map(env);
  for (let k = a; k.lte(b); k = k.plus(1)) {
    inner.set(variable.name, k);
    const v = evalRealInner(n.args[0]!, inner);
    acc = isSum ? acc.plus(v) : acc.times(v);
  }
  return acc;
}

type C = [number, number];
const cmul = (a: C, b: C): C => [a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]];
const cexp = (a: C): C => {
  const m = Math.exp(a[0]);
  return [m * Math.cos(a[1]), m * Math.sin(a[1])];
};
// principal branch; a negative zero imaginary part must not select -pi
const clog = (a: C): C => [Math.log(Math.hypot(a[0], a[1])), Math.atan2(a[1] === 0 ? 0 : a[1], a[0])];

/** Double-precision complex value (principal branches). */
export function evalComplex(n: Node, env: Map<string, number> = new Map()): C {
  switch (n.t) {
    case 'Integer':
    case 'Rational':
    case 'Float':
      return [Number(decOf(n).toString()), 0];
    case 'Symbol': {
      const v = env.get(n.name);
      if (v === undefined) throw new MathError('free symbol');
      return [v, 0];
    }
    case 'Const':
      if (n.name === 'pi') return [Math.PI, 0];
      if (n.name === 'E') return [Math.E, 0];
      if (n.name === 'I') return [0, 1];
      throw new MathError('not finite');
    case 'Add':
      return n.args.reduce<C>((s, a) => {
        const v = evalComplex(a, env);
        return [s[0] + v[0], s[1] + v[1]];
      }, [0, 0]);
    case 'Mul':
      return n.args.reduce<C>((s, a) => cmul(s, evalComplex(a, env)), [1, 0]);
    case 'Pow': {
      const b = evalComplex(n.base, env);
      const e = evalComplex(n.exp, env);
      if (b[0] === 0 && b[1] === 0) return e[0] > 0 ? [0, 0] : [Infinity, 0];
      if (e[1] === 0 && Number.isInteger(e[0]) && Math.abs(e[0]) < 64) {
        let r: C = [1, 0];
        for (let i = 0; i < Math.abs(e[0]); i++) r = cmul(r, b);
        if (e[0] < 0) {
          const d = r[0] * r[0] + r[1] * r[1];
          r = [r[0] / d, -r[1] / d];
        }
        return r;
      }
      return cexp(cmul(e, clog(b)));
    }
    case 'Func': {
      const a = n.args.map((x) => evalComplex(x, env));
      const x = a[0]!;
      const realOnly = (f: (v: number) => number): C => {
        if (Math.abs(x[1]) > 1e-300) throw new MathError('complex argument');
        return [f(x[0]), 0];
      };
      switch (n.name) {
        case 'exp':
          return cexp(x);
        case 'log':
          if (a.length === 2) {
            const l1 = clog(x);
            const l2 = clog(a[1]!);
            const d = l2[0] * l2[0] + l2[1] * l2[1];
            return [(l1[0] * l2[0] + l1[1] * l2[1]) / d, (l1[1] * l2[0] - l1[0] * l2[1]) / d];
          }
          return clog(x);
        case 'Abs':
          return [Math.hypot(x[0], x[1]), 0];
        case 'sin':
          return realOnly(Math.sin);
        case 'cos':
          return realOnly(Math.cos);
        case 'tan':
          return realOnly(Math.tan);
        default:
          return [Number(evalReal(n).toString()), 0];
      }
    }
    default:
      throw new MathError('cannot evaluate');
  }
}

export function approxReal(n: Node): number | null {
  try {
    return Number(evalReal(n).toString());
  } catch {
    return null;
  }
}

setApproxReal(approxReal);
setApproxComplex((n: Node) => {
  try {
    const v = evalReal(n);
    return [Number(v.toString()), 0];
  } catch {
    try {
      return evalComplex(n);
    } catch {
      return null;
    }
  }
});

export { isNumber, ratParts };
