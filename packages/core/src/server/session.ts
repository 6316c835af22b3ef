/**
 * Session cookies with upstream's semantics: one cookie per server instance, named
 * `<ClassName>___<instance name>`, holding a signed random session id, re-sent on every
 * response. Callers propagate it explicitly; nothing is stored client-side automatically.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { parseCookieHeader } from '../http/cookies.js';

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

export function formatSetCookie(name: string, value: string): string {
  return `${name}=${value}; Path=/; Max-Age=${SESSION_MAX_AGE_S}; HttpOnly; SameSite=Lax`;
}

/** The session of one request. */
export interface Session {
  id: string;
  /** Cookies the request carried. */
  cookies: Record<string, string>;
  /** Cookies a handler asked to set on the response (other servers' sessions). */
  extra: Record<string, string> | null;
}

export interface SessionCookies {
  /** Our session from the Cookie header (a new one if absent or forged); other cookies kept. */
  open(cookieHeader: string | undefined): Session;
  /** Set-Cookie values for a response: cookies a handler added, then our session (always re-sent). */
  setCookieValues(session: Session): string[];
}

/** Largest number of signed sessions remembered before the cache starts over. */
const SIGNED_CACHE_SIZE = 100_000;

/**
 * Reads and writes one server instance's session cookie. The secret is
 * `$NEMO_GYM_SESSION_SECRET:<cookie name>` when that variable is set, else the cookie name.
 */
export function sessionCookies(cookieName: string, envSecret: string | undefined = process.env.NEMO_GYM_SESSION_SECRET): SessionCookies {
  const secret = envSecret ? `${envSecret}:${cookieName}` : cookieName;
  // Signing is the same for every response of a session: remember the signed value and the
  // whole Set-Cookie line (bounded; a cleared entry is just signed again).
  const signed = new Map<string, { value: string; setCookie: string }>();
  const signedEntry = (id: string) => {
    let v = signed.get(id);
    if (v === undefined) {
      if (signed.size >= SIGNED_CACHE_SIZE) signed.clear();
      const value = encodeSession(id, secret);
      v = { value, setCookie: formatSetCookie(cookieName, value) };
      signed.set(id, v);
    }
    return v;
  };
  return {
    open(cookieHeader) {
      const cookies = parseCookieHeader(cookieHeader);
      const value = cookies[cookieName];
      let id: string | null = null;
      if (value !== undefined) {
        const dot = value.lastIndexOf('.');
        const candidate = dot > 0 ? value.slice(0, dot) : '';
        id = signed.get(candidate)?.value === value ? candidate : decodeSession(value, secret);
      }
      return { id: id ?? newSessionId(), cookies, extra: null };
    },
    setCookieValues(session) {
      const out: string[] = [];
      if (session.extra) for (const [k, v] of Object.entries(session.extra)) if (k !== cookieName) out.push(formatSetCookie(k, v));
      out.push(signedEntry(session.id).setCookie);
      return out;
    },
  };
}
