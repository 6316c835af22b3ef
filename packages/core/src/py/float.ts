/**
 * CPython's float arithmetic where it differs from JavaScript's: true division raises on zero,
 * `float ** float` follows float_pow (a negative base with a fractional exponent gives a complex),
 * and `str(Decimal(text))` of a decimal literal.
 */
import { PyException } from './exception.js';
import { pyFloatRepr } from './json.js';

/** The C library functions `float ** float` calls (pow, and cos/sin for the complex case). */
export interface PyPowLibm {
  pow(x: number, y: number): number;
  cos(x: number): number;
  sin(x: number): number;
}

/** JavaScript's own Math functions (not correctly rounded everywhere; pass a better libm where bits matter). */
export const NATIVE_LIBM: PyPowLibm = { pow: Math.pow, cos: Math.cos, sin: Math.sin };

/** CPython `a / b` on floats: ZeroDivisionError on a zero divisor. */
export function pyFloatDiv(a: number, b: number): number {
  if (b === 0) throw new PyException('ZeroDivisionError', 'float division by zero');
  return a / b;
}

function isOddInteger(y: number): boolean {
  return Number.isFinite(y) && Math.floor(y) === y && Math.abs(y % 2) === 1;
}

/** A complex number, as CPython's `float ** float` returns for a negative base and a fractional exponent. */
export class PyComplex {
  constructor(
    readonly real: number,
    readonly imag: number,
  ) {}

  /** Python `repr(complex)`. */
  repr(): string {
    const r = (x: number) => {
      const s = pyFloatRepr(x);
      return s.endsWith('.0') ? s.slice(0, -2) : s; // repr(complex) formats its parts without a forced ".0"
    };
    if (this.real === 0 && !Object.is(this.real, -0)) return `${r(this.imag)}j`;
    const im = r(this.imag);
    const signed = im.startsWith('-') ? im : `+${im}`;
    return `(${r(this.real)}${signed}j)`;
  }
}

/** CPython `float ** float` (Objects/floatobject.c float_pow, then C pow). */
export function pyFloatPow(iv: number, iw: number, libm: PyPowLibm = NATIVE_LIBM): number | PyComplex {
  if (iw === 0) return 1;
  if (Number.isNaN(iv)) return iv;
  if (Number.isNaN(iw)) return iv === 1 ? 1 : iw;
  if (iw === Infinity || iw === -Infinity) {
    const av = Math.abs(iv);
    if (av === 1) return 1;
    if (iw > 0 === av > 1) return Infinity;
    return 0;
  }
  if (iv === Infinity || iv === -Infinity) {
    const odd = isOddInteger(iw);
    if (iw > 0) return odd ? iv : Math.abs(iv);
    return odd ? (iv > 0 ? 0 : -0) : 0;
  }
  if (iv === 0) {
    const odd = isOddInteger(iw);
    if (iw < 0) throw new PyException('ZeroDivisionError', '0.0 cannot be raised to a negative power');
    return odd ? iv : 0;
  }
  let negate = false;
  if (iv < 0) {
    if (iw !== Math.floor(iw)) return complexPow(iv, iw, libm);
    iv = -iv;
    negate = isOddInteger(iw);
  }
  if (iv === 1) return negate ? -1 : 1;
  let ix = libm.pow(iv, iw);
  if (negate) ix = -ix;
  if (ix === Infinity || ix === -Infinity) throw new PyException('OverflowError', "(34, 'Numerical result out of range')");
  return ix;
}

/** CPython `complex(x) ** complex(y)` for x < 0 and non-integral y (Objects/complexobject.c _Py_c_pow). */
function complexPow(x: number, y: number, libm: PyPowLibm): PyComplex {
  const len = libm.pow(Math.abs(x), y); // hypot(x, 0) = |x|
  const phase = Math.PI * y; // atan2(0.0, x < 0) = pi
  const c = new PyComplex(len * libm.cos(phase), len * libm.sin(phase));
  const huge = (v: number) => v === Infinity || v === -Infinity;
  if (huge(c.real) || huge(c.imag)) throw new PyException('OverflowError', 'complex exponentiation');
  return c;
}

/** Python's Decimal to-sci-string of a decimal literal ("1.234e-5" -> "0.00001234", "1.0e+20" -> "1.0E+20"). */
export function pyDecimalStr(text: string): string {
  const m = /^(-?)(\d*)\.?(\d*)(?:e([+-]?\d+))?$/i.exec(text);
  if (!m) return text;
  const [, sign, ip, fp, ex] = m;
  let coeff = (ip! + fp!).replace(/^0+(?=\d)/, '');
  if (coeff === '') coeff = '0';
  const exp = Number(ex ?? 0) - fp!.length;
  const adjusted = exp + coeff.length - 1;
  let out: string;
  if (exp <= 0 && adjusted >= -6) {
    if (exp === 0) out = coeff;
    else {
      const point = coeff.length + exp;
      out = point > 0 ? coeff.slice(0, point) + '.' + coeff.slice(point) : '0.' + '0'.repeat(-point) + coeff;
    }
  } else {
    out = coeff[0]! + (coeff.length > 1 ? '.' + coeff.slice(1) : '') + 'E' + (adjusted >= 0 ? '+' : '-') + Math.abs(adjusted);
  }
  return sign + out;
}
