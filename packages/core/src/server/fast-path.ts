/**
 * The hot path: JSON POSTs to a server's own routes are answered straight from node:http,
 * without Fastify's request/reply/hook machinery (which costs more CPU per call than the rest of
 * a short handler). Everything else — GET /, custom routes, other content types, 404s — goes to
 * Fastify. Both paths run the same `execute` and answer the same bytes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { markRollout, rolloutMarkOf } from '../capture/recorder.js';
import { parseRolloutPath, ROLLOUT_PATH_PREFIX } from '../capture/rollout-id.js';
import { errorMessage, RolloutIdError } from '../errors.js';
import { errorBody } from '../http/error-body.js';
import { parseJsonBody } from '../http/json-body.js';
import type { RawJson } from '../http/raw-json.js';
import { SseReply, writeSse } from '../http/sse.js';
import { jsonInvalid } from './errors.js';
import type { Session, SessionCookies } from './session.js';

/** Largest request body accepted (larger ones answer 413). */
export const BODY_LIMIT = 512 * 1024 * 1024;

export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const semi = value.indexOf(';');
  return (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase() === 'application/json';
}

function sendJson(res: ServerResponse, out: RawJson, setCookie: string[]): void {
  if (res.headersSent || res.destroyed) return;
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(out.text),
    'set-cookie': setCookie,
  };
  res.writeHead(out.status, out.headers === undefined ? headers : { ...out.headers, ...headers });
  res.end(out.text);
}

function tooLarge(res: ServerResponse): void {
  const text = errorBody(errorMessage('NG_ERR_BODY_TOO_LARGE', BODY_LIMIT), 'NG_ERR_BODY_TOO_LARGE');
  res.writeHead(413, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), connection: 'close' });
  res.end(text);
}

export interface FastPathOptions<R> {
  /** POST routes answered here, by exact URL. */
  routes: ReadonlyMap<string, R>;
  sessions: SessionCookies;
  /**
   * Validates the body and runs the handler (throws or rejects on failure); `res` tells it when the
   * client goes away. A handler that finished synchronously gives its answer directly (no promise).
   */
  execute: (route: R, body: unknown, session: Session, res: ServerResponse) => RawJson | SseReply | Promise<RawJson | SseReply>;
  /** The answer for a failed request. */
  failure: (err: unknown, method: string, url: string) => RawJson;
  /** True once the server is closing: requests then go to Fastify, which answers 503. */
  closing: () => boolean;
  /**
   * Told about each answer that failed (status ≥ 400), or about every answer when `all` is set,
   * with the time since the request arrived. A successful answer costs one comparison here.
   */
  onAnswer?: { all: boolean; log: (method: string, url: string, status: number, ms: number) => void };
  /**
   * Serve every route also under `/ng-rollout/<rollout_id>/` (model servers): the prefix is taken
   * off before routing and the id is marked on the request (rolloutMarkOf); a malformed id answers 400.
   */
  rolloutRoutes?: boolean;
  /**
   * Bodiless routes answered here too, by `<METHOD> <path>` (path without its query): the handler
   * gets the request and its query parameters and answers synchronously (or throws).
   */
  plainRoutes?: ReadonlyMap<string, (req: IncomingMessage, query: URLSearchParams) => RawJson>;
}

const ROLLOUT_URL_START = `/${ROLLOUT_PATH_PREFIX}/`;

/** The three request headers the fast path reads, as node:http would fold them into `req.headers`. */
interface FastHeaders {
  contentType: string | undefined;
  contentLength: string | undefined;
  cookie: string | undefined;
}

/**
 * Reads content-type, content-length and cookie straight from `req.rawHeaders`, so that the
 * `req.headers` object is never built for a request answered here. Duplicates fold as node:http
 * folds them: the first content-type and content-length win, cookies are joined with `; `.
 */
function fastHeaders(raw: string[]): FastHeaders {
  let contentType: string | undefined;
  let contentLength: string | undefined;
  let cookie: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const n = name.length;
    // Only the lengths of the three names are compared in full.
    if (n === 12) {
      if (contentType === undefined && name.toLowerCase() === 'content-type') contentType = raw[i + 1];
    } else if (n === 14) {
      if (contentLength === undefined && name.toLowerCase() === 'content-length') contentLength = raw[i + 1];
    } else if (n === 6 && name.toLowerCase() === 'cookie') {
      cookie = cookie === undefined ? raw[i + 1] : `${cookie}; ${raw[i + 1]!}`;
    }
  }
  return { contentType, contentLength, cookie };
}

/** Whether a handler's result is to be awaited (a promise or any thenable) rather than answered as it is. */
export function isPromiseLike<T>(v: T | PromiseLike<T>): v is PromiseLike<T> {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';
}

/**
 * A node:http server (for Fastify's `serverFactory`) that answers JSON POSTs to `routes` itself
 * and hands every other request to `fallback`.
 */
export function createFastPathServer<R>(opts: FastPathOptions<R>, fallback: (req: IncomingMessage, res: ServerResponse) => void): Server {
  const { routes, sessions, execute, failure, closing, onAnswer, rolloutRoutes, plainRoutes } = opts;
  const all = onAnswer?.all === true;
  // Arrival times for failure lines come from a clock an unref'd timer refreshes every 10 ms, so a
  // request that succeeds pays a variable read, not a clock call (durations are then ±10 ms;
  // when every request is logged, each reads the clock).
  let coarseNow = performance.now();
  const ticker = onAnswer && !all ? setInterval(() => (coarseNow = performance.now()), 10) : null;
  ticker?.unref();
  const tell = (req: IncomingMessage, status: number, t0: number) => {
    if (onAnswer && (status >= 400 || all)) onAnswer.log(req.method ?? 'POST', req.url ?? '', status, performance.now() - t0);
  };

  /** A bodiless route of `plainRoutes`: answered at once, without a session. */
  const servePlain = (handler: (req: IncomingMessage, query: URLSearchParams) => RawJson, req: IncomingMessage, res: ServerResponse, query: string): void => {
    const t0 = all ? performance.now() : coarseNow;
    let out: RawJson;
    try {
      out = handler(req, new URLSearchParams(query));
    } catch (err) {
      out = failure(err, req.method ?? 'GET', req.url ?? '');
    }
    sendJson(res, out, []);
    tell(req, out.status, t0);
  };

  /** Sends the answer of one request (JSON, or an event stream) with the session cookie. */
  const answer = (req: IncomingMessage, res: ServerResponse, session: Session, t0: number, out: RawJson | SseReply): void => {
    if (out instanceof SseReply) {
      const started = out.status;
      void writeSse(res, out, { 'set-cookie': sessions.setCookieValues(session) }).then(() => tell(req, started, t0));
      return;
    }
    sendJson(res, out, sessions.setCookieValues(session));
    tell(req, out.status, t0);
  };

  const run = (r: R, req: IncomingMessage, res: ServerResponse, text: string, cookie: string | undefined, t0: number): void => {
    const session = sessions.open(cookie);
    let body: unknown;
    try {
      body = parseJsonBody(text);
    } catch (err) {
      answer(req, res, session, t0, failure(err instanceof SyntaxError ? jsonInvalid(err) : err, 'POST', req.url ?? ''));
      return;
    }
    let outcome: RawJson | SseReply | Promise<RawJson | SseReply>;
    try {
      outcome = execute(r, body, session, res);
    } catch (err) {
      answer(req, res, session, t0, failure(err, 'POST', req.url ?? ''));
      return;
    }
    if (!isPromiseLike(outcome)) {
      answer(req, res, session, t0, outcome);
      return;
    }
    outcome.then(
      (out) => answer(req, res, session, t0, out),
      (err: unknown) => answer(req, res, session, t0, failure(err, 'POST', req.url ?? '')),
    );
  };

  const serveFast = (r: R, req: IncomingMessage, res: ServerResponse, h: FastHeaders): void => {
    const t0 = all ? performance.now() : coarseNow;
    const declared = Number(h.contentLength);
    if (declared > BODY_LIMIT) {
      tooLarge(res);
      tell(req, 413, t0);
      return;
    }
    let first: Buffer | null = null;
    let chunks: Buffer[] | null = null;
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT) {
        first = null;
        chunks = null;
        if (!res.headersSent) {
          tooLarge(res);
          tell(req, 413, t0);
        }
        return;
      }
      if (first === null) first = chunk;
      else (chunks ??= [first]).push(chunk);
    });
    req.on('end', () => {
      if (res.headersSent) return;
      const mark = rolloutMarkOf(req);
      if (mark) mark.bodyBytes = size;
      const text = chunks !== null ? Buffer.concat(chunks).toString('utf8') : first !== null ? (first as Buffer).toString('utf8') : '';
      // The request's bytes are not needed past here (the listener above outlives the request).
      first = null;
      chunks = null;
      run(r, req, res, text, h.cookie, t0);
    });
  };

  const server = createServer((req, res) => {
    if (rolloutRoutes && req.url !== undefined && req.url.startsWith(ROLLOUT_URL_START)) {
      const m = parseRolloutPath(req.url);
      if (m !== null && 'problem' in m) {
        sendJson(res, failure(new RolloutIdError(m.problem), req.method ?? 'GET', req.url), []);
        return;
      }
      if (m !== null) {
        req.url = m.rest;
        markRollout(req, m.rolloutId);
      }
    }
    if (req.method !== 'POST') {
      if (plainRoutes !== undefined && !closing()) {
        const url = req.url ?? '';
        const q = url.indexOf('?');
        const handler = plainRoutes.get(`${req.method ?? ''} ${q === -1 ? url : url.slice(0, q)}`);
        if (handler !== undefined) {
          servePlain(handler, req, res, q === -1 ? '' : url.slice(q + 1));
          return;
        }
      }
    } else {
      const r = routes.get(req.url ?? '');
      if (r !== undefined && !closing()) {
        const h = fastHeaders(req.rawHeaders);
        if (isJsonContentType(h.contentType)) {
          serveFast(r, req, res, h);
          return;
        }
      }
    }
    fallback(req, res);
  });
  if (ticker) server.once('close', () => clearInterval(ticker));
  server.keepAliveTimeout = 30_000;
  server.requestTimeout = 0;
  return server;
}
