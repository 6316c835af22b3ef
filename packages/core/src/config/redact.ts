/** Secret redaction for anything printed: keys naming an api key, token, secret or password. */
const SECRET_KEY_RE = /api_key|apikey|token|secret|password|authorization/i;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY_RE.test(key);
}

export function redactSecrets<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      out[k] = isSecretKey(k) && v !== null && v !== undefined && v !== '' && typeof v !== 'object' ? '****' : redactSecrets(v);
    }
    return out as T;
  }
  return value;
}
