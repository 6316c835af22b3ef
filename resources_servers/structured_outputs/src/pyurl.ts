/**
 * Python's `urllib.parse` rules for the parts JSON Schema reference resolution uses (`urljoin`,
 * `urldefrag`, `unquote`). The Python validator resolves `$id`, `$ref` and `$dynamicRef` with
 * these, not with WHATWG URL parsing, so relative references, URNs and odd inputs resolve (or
 * fail to) the same way here.
 */

import { SchemaEvalError } from './schema-error.js';

const USES_RELATIVE = new Set(['', 'ftp', 'http', 'gopher', 'nntp', 'imap', 'wais', 'file', 'https', 'shttp', 'mms', 'prospero', 'rtsp', 'rtsps', 'rtspu', 'sftp', 'svn', 'svn+ssh', 'ws', 'wss']);
const USES_NETLOC = new Set([
  '', 'ftp', 'http', 'gopher', 'nntp', 'telnet', 'imap', 'wais', 'file', 'mms', 'https', 'shttp', 'snews', 'prospero', 'rtsp', 'rtsps', 'rtspu', 'rsync', 'svn',
  'svn+ssh', 'sftp', 'nfs', 'git', 'git+ssh', 'ws', 'wss', 'itms-services',
]);
const USES_PARAMS = new Set(['', 'ftp', 'hdl', 'prospero', 'http', 'imap', 'https', 'shttp', 'rtsp', 'rtsps', 'rtspu', 'sip', 'sips', 'mms', 'sftp', 'tel']);

interface Parsed {
  scheme: string;
  netloc: string;
  path: string;
  params: string;
  query: string;
  fragment: string;
}

/** Python `urlsplit` plus `urlparse`'s `;params` split. Throws on an unbalanced IPv6 bracket, as Python does. */
function urlparse(input: string, defaultScheme = ''): Parsed {
  // eslint-disable-next-line no-control-regex
  let url = input.replace(/^[\u0000-\u0020]+/, '').replace(/[\t\r\n]/g, '');
  let scheme = defaultScheme;
  let netloc = '';
  let query = '';
  let fragment = '';
  const colon = url.indexOf(':');
  if (colon > 0 && /^[A-Za-z][A-Za-z0-9+\-.]*$/.test(url.slice(0, colon))) {
    scheme = url.slice(0, colon).toLowerCase();
    url = url.slice(colon + 1);
  }
  if (url.startsWith('//')) {
    let end = url.length;
    for (const c of '/?#') {
      const at = url.indexOf(c, 2);
      if (at >= 0 && at < end) end = at;
    }
    netloc = url.slice(2, end);
    url = url.slice(end);
    if (netloc.includes('[') !== netloc.includes(']')) throw new SchemaEvalError(`Invalid IPv6 URL: ${JSON.stringify(input)}`);
  }
  const hash = url.indexOf('#');
  if (hash >= 0) {
    fragment = url.slice(hash + 1);
    url = url.slice(0, hash);
  }
  const q = url.indexOf('?');
  if (q >= 0) {
    query = url.slice(q + 1);
    url = url.slice(0, q);
  }
  let params = '';
  if (USES_PARAMS.has(scheme) && url.includes(';')) {
    const at = url.includes('/') ? url.indexOf(';', url.lastIndexOf('/')) : url.indexOf(';');
    if (at >= 0) {
      params = url.slice(at + 1);
      url = url.slice(0, at);
    }
  }
  return { scheme, netloc, path: url, params, query, fragment };
}

/** Python 3.11 `urlunparse`. */
function urlunparse(p: Parsed): string {
  let url = p.params ? `${p.path};${p.params}` : p.path;
  if (p.netloc || (p.scheme && USES_NETLOC.has(p.scheme) && !url.startsWith('//'))) {
    if (url && !url.startsWith('/')) url = `/${url}`;
    url = `//${p.netloc}${url}`;
  }
  if (p.scheme) url = `${p.scheme}:${url}`;
  if (p.query) url = `${url}?${p.query}`;
  if (p.fragment) url = `${url}#${p.fragment}`;
  return url;
}

/** Python `urllib.parse.urljoin(base, url)`. */
export function urljoin(base: string, url: string): string {
  if (!base) return url;
  if (!url) return base;
  const b = urlparse(base);
  const u = urlparse(url, b.scheme);
  if (u.scheme !== b.scheme || !USES_RELATIVE.has(u.scheme)) return url;
  let netloc = u.netloc;
  if (USES_NETLOC.has(u.scheme)) {
    if (netloc) return urlunparse(u);
    netloc = b.netloc;
  }
  if (!u.path && !u.params) {
    return urlunparse({ ...u, netloc, path: b.path, params: b.params, query: u.query || b.query });
  }
  const baseParts = b.path.split('/');
  if (baseParts[baseParts.length - 1] !== '') baseParts.pop();
  let segments: string[];
  if (u.path.startsWith('/')) segments = u.path.split('/');
  else {
    segments = [...baseParts, ...u.path.split('/')];
    // drop empty inner segments (they would double slashes on joining), as Python does
    if (segments.length > 2) segments = [segments[0]!, ...segments.slice(1, -1).filter((s) => s), segments[segments.length - 1]!];
  }
  const resolved: string[] = [];
  for (const seg of segments) {
    if (seg === '..') resolved.pop();
    else if (seg !== '.') resolved.push(seg);
  }
  const last = segments[segments.length - 1];
  if (last === '.' || last === '..') resolved.push('');
  return urlunparse({ ...u, netloc, path: resolved.join('/') || '/' });
}

/** Python `urllib.parse.urldefrag(url)`: `[url without fragment, fragment]`. */
export function urldefrag(url: string): [string, string] {
  if (!url.includes('#')) return [url, ''];
  const p = urlparse(url);
  return [urlunparse({ ...p, fragment: '' }), p.fragment];
}

const decoder = new TextDecoder('utf-8');

/** Python `urllib.parse.unquote`: %XX runs decoded as UTF-8 (invalid bytes become U+FFFD); a lone `%` stays. */
export function unquote(s: string): string {
  if (!s.includes('%')) return s;
  return s.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    const bytes = new Uint8Array(run.length / 3);
    for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(run.slice(i * 3 + 1, i * 3 + 3), 16);
    return decoder.decode(bytes);
  });
}
