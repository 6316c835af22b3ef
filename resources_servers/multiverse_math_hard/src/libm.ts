/**
 * Correctly rounded `log`, `sin`, `cos` and `pow` for IEEE-754 doubles.
 *
 * CPython's `math.log/sin/cos` and `float ** float` call the C library (glibc on Linux), whose
 * implementations return the correctly rounded result for practically every input. V8's
 * `Math.log/sin/cos/pow` come from fdlibm-derived code that is off by one unit in the last place
 * for a few percent of inputs. Ground truths in this environment were computed by CPython and are
 * compared with exact float equality, so we compute each function to high precision with BigInt
 * fixed-point arithmetic and round to the nearest double (Ziv's strategy: if the error interval
 * straddles a rounding boundary, recompute with more bits).
 *
 * A fixed-point value is a pair (n, p) meaning n / 2^p.
 */

const START_BITS = 128;
const STEP_BITS = 96;
/** Hard cases of exp/log/sin/cos need well under 200 bits; only exact halfway cases (pow) reach this cap. */
const MAX_BITS = 1024;
/** Error bound, in units of the last fixed-point bit, of every approximation below. */
const ERR_UNITS = 1n << 12n;

const F64 = new Float64Array(1);
const U64 = new BigUint64Array(F64.buffer);

/** Split a finite non-zero double into an integer mantissa and a binary exponent: x = m * 2^e. */
export function decompose(x: number): { m: bigint; e: number } {
  F64[0] = x;
  const bits = U64[0]!;
  const neg = bits >> 63n === 1n;
  const expField = Number((bits >> 52n) & 0x7ffn);
  const frac = bits & 0xfffffffffffffn;
  let m: bigint;
  let e: number;
  if (expField === 0) {
    m = frac;
    e = -1074;
  } else {
    m = frac | (1n << 52n);
    e = expField - 1075;
  }
  return { m: neg ? -m : m, e };
}

export function bitLength(a: bigint): number {
  if (a < 0n) a = -a;
  if (a === 0n) return 0;
  return a.toString(2).length;
}

/** x * 2^e computed exactly whenever the result is representable. */
function ldexp(x: number, e: number): number {
  while (e > 1000) {
    x *= 2 ** 1000;
    e -= 1000;
  }
  while (e < -1000) {
    x *= 2 ** -1000;
    e += 1000;
  }
  return x * 2 ** e;
}

/** Round n / 2^p to the nearest double (ties to even). */
export function roundFixed(n: bigint, p: number): number {
  if (n === 0n) return 0;
  const neg = n < 0n;
  const a = neg ? -n : n;
  const len = bitLength(a);
  const exp = len - 1 - p; // a / 2^p lies in [2^exp, 2^(exp+1))
  if (exp > 1023) return neg ? -Infinity : Infinity;
  let keep = 53;
  if (exp < -1022) keep = 53 - (-1022 - exp);
  let result: number;
  if (keep <= 0) {
    // Below half of the smallest subnormal (or exactly at it): rounds to 0 or 2^-1074.
    const half = keep === 0 ? a > 1n << BigInt(len - 1) : false;
    result = half ? 2 ** -1074 : 0;
  } else {
    const shift = len - keep;
    if (shift <= 0) {
      result = ldexp(Number(a), -p);
    } else {
      const s = BigInt(shift);
      let q = a >> s;
      const rem = a - (q << s);
      const half = 1n << (s - 1n);
      if (rem > half || (rem === half && (q & 1n) === 1n)) q += 1n;
      result = ldexp(Number(q), shift - p);
    }
  }
  return neg ? -result : result;
}

/** Round an approximation with error at most ERR_UNITS; undefined if the rounding is not yet certain. */
function tryRound(n: bigint, p: number): number | undefined {
  const lo = roundFixed(n - ERR_UNITS, p);
  const hi = roundFixed(n + ERR_UNITS, p);
  if (Object.is(lo, hi)) return lo;
  return undefined;
}

/** Ziv loop: evaluate at growing precision until the rounding is certain. */
function ziv(evaluate: (bits: number) => { n: bigint; p: number }): number {
  let bits = START_BITS;
  for (;;) {
    const { n, p } = evaluate(bits);
    const r = tryRound(n, p);
    if (r !== undefined) return r;
    if (bits >= MAX_BITS) {
      // Still straddling after MAX_BITS: the value is an exact halfway case; round it to even.
      const lo = roundFixed(n - ERR_UNITS, p);
      const hi = roundFixed(n + ERR_UNITS, p);
      return (decompose(lo).m & 1n) === 0n ? lo : hi;
    }
    bits = Math.min(MAX_BITS, bits + STEP_BITS + (bits >> 1));
  }
}

// ---------------------------------------------------------------- constants

/** atanh(1/k) * 2^p (k > 1) */
function atanhInv(k: bigint, p: number): bigint {
  const one = 1n << BigInt(p);
  const k2 = k * k;
  let power = one / k;
  let sum = power;
  for (let i = 3n; power !== 0n; i += 2n) {
    power /= k2;
    sum += power / i;
  }
  return sum;
}

/** atan(1/k) * 2^p (k > 1) */
function atanInv(k: bigint, p: number): bigint {
  const one = 1n << BigInt(p);
  const k2 = k * k;
  let power = one / k;
  let sum = power;
  let sign = -1n;
  for (let i = 3n; power !== 0n; i += 2n) {
    power /= k2;
    sum += (sign * power) / i;
    sign = -sign;
  }
  return sum;
}

const GUARD = 32;
let ln2Cache: { p: number; v: bigint } = { p: 0, v: 0n };
let piCache: { p: number; v: bigint } = { p: 0, v: 0n };

/** ln 2 * 2^p, error below 1 unit. */
function ln2(p: number): bigint {
  if (ln2Cache.p < p) {
    const q = p + 256;
    ln2Cache = { p: q, v: (2n * atanhInv(3n, q + GUARD)) >> BigInt(GUARD) };
  }
  return ln2Cache.v >> BigInt(ln2Cache.p - p);
}

/** pi * 2^p, error below 1 unit. */
function pi(p: number): bigint {
  if (piCache.p < p) {
    const q = p + 512;
    const w = q + GUARD;
    piCache = { p: q, v: (16n * atanInv(5n, w) - 4n * atanInv(239n, w)) >> BigInt(GUARD) };
  }
  return piCache.v >> BigInt(piCache.p - p);
}

// ---------------------------------------------------------------- kernels (fixed point, precision p)

/** ln(x) * 2^p for a finite double x > 0. */
function lnFixed(x: number, p: number): bigint {
  const { m, e } = decompose(x);
  const t = bitLength(m);
  // x = (m / 2^(t-1)) * 2^(e + t - 1), with y = m / 2^(t-1) in [1, 2)
  let exponent = e + t - 1;
  let half = 1n << BigInt(t - 1);
  // Move y into [sqrt(1/2), sqrt(2)): if y^2 > 2 use y/2.
  if (m * m > 1n << BigInt(2 * t - 1)) {
    half <<= 1n;
    exponent += 1;
  }
  // ln(y) = 2 atanh(s), s = (m - half) / (m + half)
  const w = p + GUARD;
  const one = 1n << BigInt(w);
  const negative = m < half;
  const s = ((negative ? half - m : m - half) * one) / (m + half); // |s|, so shifts truncate toward 0
  const s2 = (s * s) >> BigInt(w);
  let power = s;
  let sum = s;
  for (let i = 3n; power !== 0n; i += 2n) {
    power = (power * s2) >> BigInt(w);
    sum += power / i;
  }
  const lnY = negative ? -2n * sum : 2n * sum;
  return (lnY + BigInt(exponent) * ln2(w)) >> BigInt(GUARD);
}

/** sin(r) and cos(r) * 2^p for |r| <= pi/4 given as r * 2^p. */
function sinCosFixed(r: bigint, p: number): { sin: bigint; cos: bigint } {
  const w = p + GUARD;
  const rw = r << BigInt(GUARD);
  const r2 = (rw * rw) >> BigInt(w);
  // sin
  let term = rw;
  let s = rw;
  for (let k = 1n; term !== 0n; k += 1n) {
    term = -((term * r2) >> BigInt(w)) / ((2n * k) * (2n * k + 1n));
    s += term;
  }
  // cos
  term = 1n << BigInt(w);
  let c = term;
  for (let k = 1n; term !== 0n; k += 1n) {
    term = -((term * r2) >> BigInt(w)) / ((2n * k - 1n) * (2n * k));
    c += term;
  }
  return { sin: s >> BigInt(GUARD), cos: c >> BigInt(GUARD) };
}

/** Reduce x modulo pi/2: returns r * 2^p with |r| <= ~pi/4 and the quadrant k mod 4. */
function reduceHalfPi(x: number, p: number): { r: bigint; quadrant: number } {
  const { m, e } = decompose(x);
  const mBits = bitLength(m);
  // Precision of the reduction: p bits after the point plus the size of the quotient.
  let q = p + Math.max(0, e + mBits) + 16;
  if (q + e < 0) q = -e;
  const X = m << BigInt(q + e);
  const halfPi = pi(q + 1) >> 2n; // pi/2 at precision q (pi(q+1) is pi * 2^(q+1))
  // k = round(X / halfPi)
  let k = X / halfPi;
  let rem = X - k * halfPi;
  if (rem < 0n) {
    k -= 1n;
    rem += halfPi;
  }
  if (2n * rem > halfPi) {
    k += 1n;
    rem -= halfPi;
  }
  const quadrant = Number(((k % 4n) + 4n) % 4n);
  return { r: rem >> BigInt(q - p), quadrant };
}

/** exp(z) where z = Z / 2^w; returns (n, p) with exp(z) ≈ n / 2^p, relative precision ~2^-bits. */
function expFixed(Z: bigint, w: number, bits: number): { n: bigint; p: number } {
  const L = ln2(w);
  let k = Z / L;
  let r = Z - k * L;
  if (2n * r > L) {
    k += 1n;
    r -= L;
  } else if (2n * r < -L) {
    k -= 1n;
    r += L;
  }
  const pw = bits + GUARD;
  const rr = w >= pw ? r >> BigInt(w - pw) : r << BigInt(pw - w);
  const one = 1n << BigInt(pw);
  let term = one;
  let sum = one;
  for (let i = 1n; term !== 0n; i += 1n) {
    term = ((term * rr) >> BigInt(pw)) / i;
    sum += term;
  }
  return { n: sum, p: pw - Number(k) };
}

// ---------------------------------------------------------------- public functions

/** Correctly rounded natural logarithm (IEEE semantics: log(0) = -Infinity, log(<0) = NaN). */
export function crLog(x: number): number {
  if (Number.isNaN(x) || x < 0) return NaN;
  if (x === 0) return -Infinity;
  if (x === Infinity) return Infinity;
  if (x === 1) return 0;
  return ziv((bits) => {
    // ln(x) can be as small as ~2^-53; relative precision needs extra bits near 1.
    const p = bits + 64;
    return { n: lnFixed(x, p), p };
  });
}

function sinCos(x: number, which: 'sin' | 'cos'): number {
  if (!Number.isFinite(x)) return NaN;
  if (x === 0) return which === 'sin' ? x : 1;
  // Below 2^-27 the correctly rounded results are x and 1 (the next Taylor term is under half an ulp).
  if (Math.abs(x) < 2 ** -27) return which === 'sin' ? x : 1;
  return ziv((bits) => {
    const p = bits;
    const { r, quadrant } = reduceHalfPi(x, p);
    const sc = sinCosFixed(r, p);
    const idx = which === 'sin' ? quadrant : (quadrant + 1) % 4;
    const v = idx === 0 ? sc.sin : idx === 1 ? sc.cos : idx === 2 ? -sc.sin : -sc.cos;
    return { n: v, p };
  });
}

/** Correctly rounded sine. */
export function crSin(x: number): number {
  return sinCos(x, 'sin');
}

/** Correctly rounded cosine. */
export function crCos(x: number): number {
  return sinCos(x, 'cos');
}

function isInteger(y: number): boolean {
  return Number.isFinite(y) && Math.floor(y) === y;
}

function isOddInteger(y: number): boolean {
  return isInteger(y) && Math.abs(y) < 2 ** 53 && Math.abs(y % 2) === 1;
}

/**
 * Correctly rounded x^y with C99 `pow` special cases (pow(x, ±0) = 1, pow(1, y) = 1,
 * pow(-1, ±inf) = 1, negative x with non-integer y -> NaN, overflow -> ±Infinity).
 */
export function crPow(x: number, y: number): number {
  if (y === 0 || x === 1) return 1;
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (y === Infinity || y === -Infinity) {
    const ax = Math.abs(x);
    if (ax === 1) return 1;
    return (ax > 1) === (y > 0) ? Infinity : 0;
  }
  if (x === 0) {
    const odd = isOddInteger(y);
    if (y < 0) return odd ? 1 / x : Infinity;
    return odd ? x : 0;
  }
  if (x === Infinity) return y > 0 ? Infinity : 0;
  if (x === -Infinity) {
    const odd = isOddInteger(y);
    if (y > 0) return odd ? -Infinity : Infinity;
    return odd ? -0 : 0;
  }
  if (x < 0) {
    if (!isInteger(y)) return NaN;
    const r = positivePow(-x, y);
    return isOddInteger(y) ? -r : r;
  }
  return positivePow(x, y);
}

/** x^y for finite x > 0, x != 1, finite y != 0. */
function positivePow(x: number, y: number): number {
  // Exact case: positive integer exponent with a result of moderate size.
  if (isInteger(y) && y > 0 && y <= 4096) {
    const { m, e } = decompose(x);
    const mBits = bitLength(m);
    if (mBits * y <= 8192) {
      const exact = m ** BigInt(y);
      return roundFixed(exact, -e * y);
    }
  }
  // Far outside the double range: no precise evaluation needed.
  const estimate = y * Math.log(x);
  if (estimate > 760) return Infinity;
  if (estimate < -790) return 0;
  const { m: my, e: ey } = decompose(y);
  const yBits = Math.max(0, bitLength(my) + ey); // ~log2 |y|
  return ziv((bits) => {
    // z = y * ln(x) needs absolute precision ~bits; ln(x) needs bits + log2|y| extra.
    const lp = bits + yBits + 48;
    const lnX = lnFixed(x, lp);
    // Z = lnX * my * 2^ey at precision lp
    let Z = lnX * my;
    let w = lp;
    if (ey >= 0) Z <<= BigInt(ey);
    else w = lp - ey;
    return expFixed(Z, w, bits);
  });
}
