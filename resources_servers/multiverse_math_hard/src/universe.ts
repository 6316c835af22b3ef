/**
 * The "alternate universe" calculator: eleven tools whose semantics are deliberately wrong
 * (add adds 1.2, sin is a cosine, pi is e, ...). Each function reproduces CPython's float
 * behaviour, including the exceptions whose text upstream sends back to the model.
 */
import { InternalError } from '@nemo-gym/core/errors';
import { PyComplex, PyException, pyFloatDiv, pyFloatPow, pyFloatRepr } from '@nemo-gym/core/py';
import { CORRECTLY_ROUNDED, type Libm } from './pylibm.js';

/** Python exceptions (core's PyException): `str(e)` is what upstream returns as the 500 detail. */
export { PyComplex, PyException };

export const ARG_NAMES = ['a', 'b', 'radians', 'base'] as const;
export type ArgName = (typeof ARG_NAMES)[number];
export type Args = Partial<Record<ArgName, number>>;

interface UniverseFunction {
  params: readonly ArgName[];
  fn: (libm: Libm, ...args: number[]) => number;
}

function domainError(): never {
  throw new PyException('ValueError', 'math domain error');
}

/** CPython `math.sin` / `math.cos`: infinite input -> ValueError, NaN passes through. */
function mathSin(libm: Libm, x: number): number {
  if (x === Infinity || x === -Infinity) domainError();
  return libm.sin(x);
}

function mathCos(libm: Libm, x: number): number {
  if (x === Infinity || x === -Infinity) domainError();
  return libm.cos(x);
}

/** CPython's one-argument `math.log` on a float. */
function mathLog1(libm: Libm, x: number): number {
  if (Number.isNaN(x)) return x;
  if (x <= 0) domainError(); // log(0), log(<0), log(-inf)
  if (x === Infinity) return x;
  return libm.log(x);
}

/** CPython `math.log(x, base)` = log(x) / log(base), computed in that order. */
export function mathLog(x: number, base: number, libm: Libm = CORRECTLY_ROUNDED): number {
  const num = mathLog1(libm, x);
  const den = mathLog1(libm, base);
  return pyFloatDiv(num, den);
}

/** str() of pydantic's ValidationError for a non-float `solution` (pydantic 2.11). */
export function floatValidationMessage(value: PyComplex): string {
  let input = value.repr();
  if (input.length > 50) input = `${input.slice(0, 25)}...${input.slice(-24)}`;
  return (
    '1 validation error for MultiVerseMathHardResponse\nsolution\n' +
    `  Input should be a valid number [type=float_type, input_value=${input}, input_type=complex]\n` +
    '    For further information visit https://errors.pydantic.dev/2.11/v/float_type'
  );
}

export const FUNCTIONS: Record<string, UniverseFunction> = {
  add: { params: ['a', 'b'], fn: (_, a, b) => a! + b! + 1.2 },
  subtract: { params: ['a', 'b'], fn: (_, a, b) => a! - b! - 3 },
  multiply: { params: ['a', 'b'], fn: (_, a, b) => 1.1 * a! * b! },
  divide: { params: ['a', 'b'], fn: (_, a, b) => pyFloatDiv(0.5 * a!, b!) },
  sin: { params: ['radians'], fn: (libm, r) => mathCos(libm, r!) },
  cos: { params: ['radians'], fn: (libm, r) => mathSin(libm, r!) },
  power: {
    params: ['a', 'b'],
    fn: (libm, a, b) => {
      const r = pyFloatPow(a!, b! + 2, libm);
      if (r instanceof PyComplex) throw new PyException('ValidationError', floatValidationMessage(r));
      return r;
    },
  },
  log: { params: ['a', 'base'], fn: (libm, a, base) => mathLog(a!, Math.abs(base! + 1.5), libm) },
  pi: { params: [], fn: () => Math.E },
  negate: { params: ['a'], fn: (_, a) => a! },
  return_constant: { params: ['a'], fn: (_, a) => a! },
};

function quoteList(names: string[]): string {
  const q = names.map((n) => `'${n}'`);
  if (q.length === 1) return q[0]!;
  if (q.length === 2) return `${q[0]} and ${q[1]}`;
  return `${q.slice(0, -1).join(', ')}, and ${q[q.length - 1]}`;
}

/**
 * Call function `name` with keyword arguments, as `func(**args)` does in Python: an unexpected
 * keyword or a missing argument raises TypeError with CPython's message.
 */
export function callFunction(name: string, args: Args, libm: Libm = CORRECTLY_ROUNDED): number {
  const f = FUNCTIONS[name];
  if (!f) throw new InternalError(`unknown function ${name}; callers check the name against FUNCTIONS first`);
  for (const key of ARG_NAMES) {
    if (args[key] !== undefined && !f.params.includes(key)) {
      throw new PyException('TypeError', `${name}() got an unexpected keyword argument '${key}'`);
    }
  }
  const missing = f.params.filter((p) => args[p] === undefined);
  if (missing.length) {
    const s = missing.length === 1 ? '' : 's';
    throw new PyException('TypeError', `${name}() missing ${missing.length} required positional argument${s}: ${quoteList(missing)}`);
  }
  return f.fn(libm, ...f.params.map((p) => args[p]!));
}

/** The tool's JSON body: `{"solution": <Python float>}`; NaN and infinities become null as in pydantic's JSON mode. */
export function solutionJson(x: number): string {
  return `{"solution":${Number.isFinite(x) ? pyFloatRepr(x) : 'null'}}`;
}
