/**
 * Secret redaction for anything printed or handed to another process, on the project's one
 * secret rule (../secret-rule.ts: which keys are secret, which parts of a URL are credentials):
 * whole configs and logged values with secret keys masked, and copies of secret values found
 * elsewhere masked too.
 */
import { isSecretKey, MASK, redactUrlCredentials, urlCredentials } from '../secret-rule.js';

export { isSecretKey, MASK, redactUrlCredentials } from '../secret-rule.js';

/** Shortest value treated as a secret when scrubbing it out of other strings. */
const MIN_SECRET_LENGTH = 4;

/**
 * Every value held under a secret-looking key (and every password inside a URL) in `value`,
 * so that copies of it under innocent-looking keys can be masked too.
 */
export function collectSecretValues(value: unknown, out: Set<string> = new Set()): Set<string> {
  const add = (s: string) => {
    if (s.length >= MIN_SECRET_LENGTH && s !== MASK) out.add(s);
  };
  if (typeof value === 'string') {
    for (const c of urlCredentials(value)) add(c);
  } else if (Array.isArray(value)) {
    for (const v of value) collectSecretValues(v, out);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (isSecretKey(k) && (typeof v === 'string' || typeof v === 'number')) add(String(v));
      else collectSecretValues(v, out);
    }
  }
  return out;
}

function scrubString(text: string, knownSecrets: readonly string[]): string {
  let out = redactUrlCredentials(text);
  for (const s of knownSecrets) if (out.includes(s)) out = out.split(s).join(MASK);
  return out;
}

/**
 * A copy of `value` with every secret-looking key's value shown as `****`, credentials in URLs
 * masked, and every occurrence of a `knownSecrets` value inside other strings masked.
 */
export function redactSecrets<T>(value: T, knownSecrets: Iterable<string> = []): T {
  // Longest first, so a secret that contains another is masked whole.
  const known = [...knownSecrets].filter((s) => s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return scrubString(v, known);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        out[k] = isSecretKey(k) && (typeof x === 'number' || (typeof x === 'string' && x !== '')) ? MASK : walk(x);
      }
      return out;
    }
    return v;
  };
  return walk(value) as T;
}
