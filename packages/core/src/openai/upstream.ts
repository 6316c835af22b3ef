/**
 * Calling an OpenAI-compatible backend (vLLM, OpenAI, Azure) and turning its failures into clear
 * HTTP errors for our own callers: the message names the backend URL and what went wrong, never
 * the API key.
 *
 *   backend answered 4xx          -> same status
 *   backend answered 5xx          -> 502
 *   connection refused / reset    -> 502
 *   no answer within the timeout  -> 504
 *   answer is not valid JSON      -> 502
 */
import { getGlobalDispatcher, type Dispatcher } from 'undici';
import { dispatchRequest, splitUrl, type CollectedResponse } from '../client/dispatch.js';
import { HttpError } from '../errors.js';

export type UpstreamFailureKind = 'status' | 'connect' | 'timeout' | 'invalid_json';

export class UpstreamError extends HttpError {
  constructor(
    status: number,
    message: string,
    readonly kind: UpstreamFailureKind,
    readonly url: string,
    readonly upstreamStatus?: number,
    readonly upstreamBody?: string,
  ) {
    super(status, message);
    this.name = 'UpstreamError';
  }
}

/** Replaces every occurrence of the secret in text. */
export function redactSecret(text: string, secret: string | undefined | null): string {
  if (!secret || secret.length < 4) return text;
  return text.split(secret).join('****');
}

function shorten(text: string, max = 2000): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} bytes)` : text;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Maps a transport failure (connection refused, reset, timeout) to an UpstreamError. */
export function transportError(url: string, err: unknown, timeoutMs: number | undefined, apiKey?: string): UpstreamError {
  const code = errorCode(err);
  const name = (err as { name?: string })?.name;
  if ((code && TIMEOUT_CODES.has(code)) || name === 'TimeoutError') {
    const after = timeoutMs ? ` after ${(timeoutMs / 1000).toFixed(1)} s` : '';
    return new UpstreamError(
      504,
      `the model backend at ${url} did not answer${after}; check that it is running and not overloaded, or raise request_timeout_s`,
      'timeout',
      url,
    );
  }
  const reason = redactSecret(code ? `${code}${(err as Error)?.message ? ` (${(err as Error).message})` : ''}` : String((err as Error)?.message ?? err), apiKey);
  return new UpstreamError(
    502,
    `could not reach the model backend at ${url}: ${reason}; check the base URL in the model server config and that the backend is up`,
    'connect',
    url,
  );
}

/** Maps an error status answered by the backend to an UpstreamError. */
export function statusError(url: string, status: number, body: string, apiKey?: string): UpstreamError {
  const shown = redactSecret(shorten(body), apiKey);
  const ours = status >= 400 && status < 500 ? status : 502;
  return new UpstreamError(ours, `the model backend at ${url} answered HTTP ${status}: ${shown}`, 'status', url, status, body);
}

export interface PostJsonOptions {
  apiKey?: string;
  /** Whole-request timeout (headers and body), ms. */
  timeoutMs?: number;
  /** Attempts in total for retryable statuses (429, 500, 502, 503, 504, 520). */
  maxAttempts?: number;
  /** First pause before a retry; it doubles per attempt (with jitter) up to 8 s. */
  retrySleepMs?: number;
  dispatcher?: Dispatcher;
  method?: 'POST' | 'GET';
  log?: (msg: string) => void;
}

export const RETRYABLE_STATUSES = new Set([429, 500, 502, 503, 504, 520]);

const MAX_RETRY_SLEEP_MS = 8000;

/**
 * Pause before retry number `attempt` (1-based): the backend's Retry-After (`retry-after-ms`,
 * or `retry-after` in seconds or as a date) when it asks for at most 60 s, otherwise
 * `baseMs * 2^(attempt-1)` capped at 8 s, with up to 25% jitter taken off.
 */
export function retryDelayMs(attempt: number, baseMs: number, headers: Record<string, string | string[] | undefined> = {}, random = Math.random): number {
  const header = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const ms = Number(header('retry-after-ms'));
  if (header('retry-after-ms') !== undefined && Number.isFinite(ms) && ms >= 0 && ms <= 60_000) return ms;
  const ra = header('retry-after');
  if (ra !== undefined) {
    const secs = Number(ra);
    const fromHeader = Number.isFinite(secs) ? secs * 1000 : Date.parse(ra) - Date.now();
    if (Number.isFinite(fromHeader) && fromHeader >= 0 && fromHeader <= 60_000) return fromHeader;
  }
  const exp = Math.min(MAX_RETRY_SLEEP_MS, baseMs * 2 ** (attempt - 1));
  return exp * (1 - 0.25 * random());
}

/**
 * POSTs JSON and returns the parsed JSON answer. Retryable statuses are retried (after
 * `retrySleepMs`) up to `maxAttempts` attempts in total; other failures throw UpstreamError.
 */
export async function postJson(url: string, body: unknown, opts: PostJsonOptions = {}): Promise<unknown> {
  const maxAttempts = Math.max(1, opts.maxAttempts ?? 3);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const [origin, path] = splitUrl(url);
  const dispatcher = opts.dispatcher ?? getGlobalDispatcher();
  for (let attempt = 1; ; attempt++) {
    let res: CollectedResponse;
    try {
      res = await dispatchRequest(dispatcher, origin, path, {
        method: opts.method ?? 'POST',
        headers,
        body: payload,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
    } catch (err) {
      throw transportError(url, err, opts.timeoutMs, opts.apiKey);
    }
    const { status } = res;
    const text = res.body.toString('utf8');
    if (status >= 200 && status < 300) {
      try {
        return JSON.parse(text);
      } catch {
        throw new UpstreamError(
          502,
          `the model backend at ${url} answered HTTP ${status} with a body that is not valid JSON: ${redactSecret(shorten(text, 300), opts.apiKey)}`,
          'invalid_json',
          url,
          status,
          text,
        );
      }
    }
    if (RETRYABLE_STATUSES.has(status) && attempt < maxAttempts) {
      const delay = retryDelayMs(attempt, opts.retrySleepMs ?? 500, res.headers);
      opts.log?.(`HTTP ${status} from ${url} (attempt ${attempt} of ${maxAttempts}); retrying in ${Math.round(delay)} ms`);
      await new Promise((r) => setTimeout(r, delay));
      continue;
    }
    throw statusError(url, status, text, opts.apiKey);
  }
}

/**
 * Maps an error thrown by the official `openai` npm client (APIError with a status,
 * APIConnectionError, APIConnectionTimeoutError, or a JSON parse failure) to an HttpError that
 * keeps the backend's status and error body. Duck-typed so this module does not depend on the
 * client package.
 */
export function fromOpenAIClientError(err: unknown, url: string, apiKey?: string): HttpError {
  if (err instanceof HttpError) return err;
  const e = err as { status?: unknown; error?: unknown; name?: string; message?: string; cause?: unknown; constructor?: { name?: string } };
  const cls = e?.constructor?.name ?? e?.name ?? '';
  if (typeof e?.status === 'number') {
    const status = e.status;
    const upstreamBody = e.error;
    const message = redactSecret(`the model backend at ${url} answered HTTP ${status}: ${shorten(e.message ?? '')}`, apiKey);
    // The backend's status is kept; its error object stays available as upstreamBody.
    return new UpstreamError(status, message, 'status', url, status, JSON.stringify(upstreamBody ?? null));
  }
  if (cls === 'APIConnectionTimeoutError' || /timed out/i.test(e?.message ?? '')) {
    return transportError(url, Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }), undefined, apiKey);
  }
  if (cls === 'APIConnectionError') return transportError(url, e.cause ?? err, undefined, apiKey);
  if (err instanceof SyntaxError) {
    return new UpstreamError(502, `the model backend at ${url} answered with a body that is not valid JSON: ${redactSecret(err.message, apiKey)}`, 'invalid_json', url);
  }
  return new UpstreamError(502, redactSecret(`calling the model backend at ${url} failed: ${e?.message ?? String(err)}`, apiKey), 'connect', url);
}
