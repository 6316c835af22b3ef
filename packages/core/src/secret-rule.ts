/**
 * The project's one secret rule: which keys name secrets, and which parts of a URL are
 * credentials. It imports nothing, so that every layer can use it, errors.ts included (each coded
 * error's message is masked with it when made); config/redact.ts re-exports it and builds the
 * masking of whole configs on it.
 *
 * One rule decides whether a key names a secret: the key is split into words on any separator
 * (`_`, `-`, `.`, space) and at camelCase boundaries; it is secret when the joined words contain
 * `apikey`, `accesskey`, `privatekey`, `secretkey`, `secret`, `password`, `passwd`,
 * `authorization`, `credential` or `cookie`, or when its last word ends in `token`
 * (`hf_token`, `accessToken`; `max_tokens` and `token_ids` are counts and lists, not secrets) or is
 * `sig` / `signature` (signed URLs: Azure SAS `sig`, `X-Amz-Signature`).
 * Strings are also scrubbed of credentials inside URLs: the password of the user info
 * (`scheme://user:PASSWORD@host`), a user info that is a bare token (`scheme://TOKEN@host`), and
 * query parameters whose name is secret by the same rule or is `key` (Google's `?key=`).
 */
export const MASK = '****';

const SECRET_WORDS_RE = /apikey|accesskey|privatekey|secretkey|secret|password|passwd|authorization|credential|cookie/;

function words(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

export function isSecretKey(key: string): boolean {
  const w = words(key);
  if (w.length === 0) return false;
  if (SECRET_WORDS_RE.test(w.join(''))) return true;
  const last = w[w.length - 1]!;
  return last.endsWith('token') || last === 'sig' || last === 'signature';
}

/** A URL query parameter that carries a secret: a secret key by {@link isSecretKey}, or `key`. */
function isSecretQueryParam(name: string): boolean {
  return name.toLowerCase() === 'key' || isSecretKey(name);
}

// Every pattern runs in time linear in the text (error texts can echo long model input): a
// scheme is at most 32 characters, and no repeated part can run past the next attempt's start.
// scheme://user:password@ -> scheme://user:****@
const URL_USERINFO_RE = /\b([a-z][a-z0-9+.-]{0,31}:\/\/[^/\s:@?#]*):([^/\s@?#]+)@/gi;
// scheme://token@ (user info without a password, e.g. https://ghp_…@github.com) -> scheme://****@
const URL_BARE_USERINFO_RE = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)([^/\s:@?#"'<>]+)@/gi;
// ?api_key=...&token=... inside a URL; a value ends at a quote too, so a URL inside JSON text keeps the JSON intact
const URL_QUERY_RE = /([?&])([^=&?#\s"'<>]+)=([^&#\s"'<>\\]*)/g;

/** Masks credentials written inside URLs anywhere in `text`. */
export function redactUrlCredentials(text: string): string {
  if (!text.includes('@') && !text.includes('=')) return text;
  let out = text;
  if (out.includes('://') && out.includes('@')) {
    out = out.replace(URL_USERINFO_RE, (_m, head: string) => `${head}:${MASK}@`);
    out = out.replace(URL_BARE_USERINFO_RE, (m, head: string, user: string) => (user === MASK ? m : `${head}${MASK}@`));
  }
  if (out.includes('://') || out.includes('?')) {
    out = out.replace(URL_QUERY_RE, (m, sep: string, name: string, value: string) => (value && value !== MASK && isSecretQueryParam(name) ? `${sep}${name}=${MASK}` : m));
  }
  return out;
}

/** The credentials a URL string carries (the password of its user info), for {@link collectSecretValues}. */
export function urlCredentials(text: string): string[] {
  return [...text.matchAll(URL_USERINFO_RE)].map((m) => m[2]!);
}
