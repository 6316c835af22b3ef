/**
 * Pydantic "lax mode" integers: request fields declared `int` upstream also accept numeric strings,
 * integral floats and booleans, and reject fractional numbers.
 */
import { z } from 'zod';

/** Digits with single underscores between them, an optional all-zero fraction, surrounding whitespace. */
const INT_STRING = /^\s*[+-]?\d+(?:_\d+)*(?:\.0+)?\s*$/;

/** Converts a JSON value the way pydantic's lax `int` does; `null` when it would be rejected. */
export function toLaxInt(v: unknown): number | null {
  if (typeof v === 'number') return Number.isInteger(v) ? v : null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && INT_STRING.test(v)) return Math.trunc(Number(v.trim().replace(/_/g, '')));
  return null;
}

export const LaxInt = z.unknown().transform((v, ctx) => {
  const n = toLaxInt(v);
  if (n === null) {
    ctx.addIssue({
      code: 'custom',
      message:
        typeof v === 'number'
          ? 'Input should be a valid integer, got a number with a fractional part'
          : 'Input should be a valid integer',
      input: v,
    });
    return z.NEVER;
  }
  return n;
});

/** Unicode White_Space, which pydantic-core trims (Rust's `str::trim`): Python's whitespace without U+001C–U+001F. */
const LAX_SPACE = /^[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;
/** Rust's `f64::from_str` grammar (ASCII digits only, `inf`/`infinity`/`nan` in any case). */
const RUST_FLOAT = /^[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)$/i;

function rustFloat(s: string): number | null {
  if (!RUST_FLOAT.test(s)) return null;
  const t = s.toLowerCase().replace(/^\+/, '');
  if (t.endsWith('nan')) return NaN;
  if (t.endsWith('inf') || t.endsWith('infinity')) return t.startsWith('-') ? -Infinity : Infinity;
  return Number(s);
}

/**
 * Pydantic's lax `float` from a str (pydantic-core `str_as_float`): the trimmed text as Rust parses
 * a float, else the untrimmed text with its underscores removed (none leading, trailing or doubled).
 * Unlike Python's `float()`, Unicode digits and U+001C–U+001F padding are refused. `null` = rejected.
 */
export function laxFloatFromStr(s: string): number | null {
  const direct = rustFloat(s.replace(LAX_SPACE, ''));
  if (direct !== null) return direct;
  if (s.startsWith('_') || s.endsWith('_') || s.includes('__')) return null;
  return rustFloat(s.replace(/_/g, ''));
}
