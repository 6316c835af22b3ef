/**
 * Session cookies with upstream's semantics: one cookie per server instance, named
 * `<ClassName>___<instance name>`, holding a signed random session id, re-sent on every
 * response. Callers propagate it explicitly; nothing is stored client-side automatically.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

export const SESSION_MAX_AGE_S = 1209600;

function sign(id: string, secret: string): string {
  return createHmac('sha256', secret).update(id).digest('base64url');
}

export function encodeSession(id: string, secret: string): string {
  return `${id}.${sign(id, secret)}`;
}

/** The session id in a cookie value, or null when absent or tampered with. */
export function decodeSession(value: string | undefined, secret: string): string | null {
  if (!value) return null;
  const dot = value.lastIndexOf('.');
  if (dot <= 0) return null;
  const id = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1));
  const expected = Buffer.from(sign(id, secret));
  return given.length === expected.length && timingSafeEqual(given, expected) ? id : null;
}

export function newSessionId(): string {
  return randomUUID();
}

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

export function formatCookieHeader(cookies: Record<string, string> | null | undefined): string | undefined {
  if (!cookies) return undefined;
  const parts = Object.entries(cookies).map(([k, v]) => `${k}=${v}`);
  return parts.length ? parts.join('; ') : undefined;
}

export function formatSetCookie(name: string, value: string): string {
  return `${name}=${value}; Path=/; Max-Age=${SESSION_MAX_AGE_S}; HttpOnly; SameSite=Lax`;
}
