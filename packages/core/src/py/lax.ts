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
