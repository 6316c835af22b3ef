/**
 * Cookie headers, both directions. Neutral ground for the server runtime (which reads Cookie
 * and writes Set-Cookie) and the client (which reads Set-Cookie and writes Cookie).
 */

/** Parses a Cookie request header into name -> value (values kept exactly as sent). */
export function parseCookieHeader(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (name) out[name] = part.slice(eq + 1).trim();
  }
  return out;
}

/** Parses Set-Cookie response headers into name -> value. */
export function parseSetCookies(headers: string | string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  for (const h of Array.isArray(headers) ? headers : [headers]) {
    const first = h.split(';', 1)[0]!;
    const eq = first.indexOf('=');
    if (eq > 0) out[first.slice(0, eq).trim()] = first.slice(eq + 1).trim();
  }
  return out;
}

/** A Cookie request header for `cookies`, or undefined when there are none. */
export function formatCookieHeader(cookies: Record<string, string> | null | undefined): string | undefined {
  if (!cookies) return undefined;
  const parts = Object.entries(cookies).map(([k, v]) => `${k}=${v}`);
  return parts.length ? parts.join('; ') : undefined;
}
