/**
 * Calling an OpenAI-compatible backend (vLLM, OpenAI, Azure) and turning its failures into clear
 * HTTP errors for our own callers: the message names the backend URL and what went wrong, never
 * the API key, nor credentials written in the URL (`http://user:KEY@host/v1`, `?api_key=…`,
 * `?sig=…`): the message, the URL and the backend's body kept on an UpstreamError are masked by the
 * project's one secret rule (secret-rule.ts) when it is made.
 *
 *   backend answered 4xx          -> same status
 *   backend answered 5xx          -> 502
 *   connection refused / reset    -> 502
 *   no answer within the timeout  -> 504
 *   answer is not valid JSON      -> 502
 */
import type { Dispatcher } from 'undici';
import { sharedPool } from '../client/agent.js';
import { abortReason, dispatchWithRetries, splitUrl, type CollectedResponse } from '../client/dispatch.js';
import { classifyRequest, errorCode, NOT_PROCESSED_STATUSES, passOnHeaders, retryAfterHeaders, retryPolicy, type RequestClass, type RetryPolicy } from '../client/retry.js';
import { MASK, redactUrlCredentials } from '../config/redact.js';
import { HttpError, type NgCode } from '../errors.js';

export type UpstreamFailureKind = 'status' | 'connect' | 'timeout' | 'invalid_json';

/**
 * The code each kind of failure answers with, so an agent or a judge that calls this model server
 * passes on what went wrong behind it (a backend's own error status keeps the backend's error body).
 */
const KIND_CODES: Record<UpstreamFailureKind, NgCode | undefined> = {
  status: undefined,
  connect: 'NG_ERR_MODEL_UNREACHABLE',
  timeout: 'NG_ERR_MODEL_TIMEOUT',
  invalid_json: 'NG_ERR_BAD_JSON',
};

export class UpstreamError extends HttpError {
  /** The backend URL, credentials masked. */
  readonly url: string;
  /** The backend's answer, URL credentials masked (it may echo the request's query). */
  readonly upstreamBody: string | undefined;
  constructor(
    status: number,
    message: string,
    readonly kind: UpstreamFailureKind,
    url: string,
    readonly upstreamStatus?: number,
    upstreamBody?: string,
    /** Sent with our answer: the backend's Retry-After on a 429/503. */
    headers?: Record<string, string>,
  ) {
    super(status, message, headers, KIND_CODES[kind]);
    this.name = 'UpstreamError';
    this.url = redactUrlCredentials(url);
    this.upstreamBody = upstreamBody === undefined ? undefined : redactUrlCredentials(upstreamBody);
  }
}

/**
 * The headers to pass on with an answer of `status`: a backend's 429/503 keeps its Retry-After and
 * says not to resend (this server's own retries of the backend are spent).
 */
function passedOn(status: number, headers: Parameters<typeof retryAfterHeaders>[0]): Record<string, string> | undefined {
  return NOT_PROCESSED_STATUSES.has(status) ? passOnHeaders(headers) : undefined;
}

/** Replaces every occurrence of the secret in text. */
export function redactSecret(text: string, secret: string | undefined | null): string {
  if (!secret || secret.length < 4) return text;
  return text.split(secret).join(MASK);
}

function shorten(text: string, max = 2000): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} bytes)` : text;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

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

/**
 * Maps an error status answered by the backend to an UpstreamError: 4xx and 503 (overloaded, not
 * processed) are kept, with the backend's Retry-After on 429/503; other 5xx become 502.
 */
export function statusError(url: string, status: number, body: string, apiKey?: string, headers?: Parameters<typeof retryAfterHeaders>[0]): UpstreamError {
  const shown = redactSecret(shorten(body), apiKey);
  const ours = (status >= 400 && status < 500) || status === 503 ? status : 502;
  return new UpstreamError(ours, `the model backend at ${url} answered HTTP ${status}: ${shown}`, 'status', url, status, body, passedOn(status, headers));
}

export interface PostJsonOptions {
  apiKey?: string;
  /** Whole-request timeout (headers and body), ms. */
  timeoutMs?: number;
  /**
   * This hop's retries (default: DEFAULT_RETRY). A POST (a generation) is resent only when it
   * provably did not reach the backend: refused connection, or 429/503. 500 is never retried.
   */
  retry?: Partial<RetryPolicy>;
  /** Default: from the method; pass `idempotent` for a POST without effects (e.g. /tokenize). */
  requestClass?: RequestClass;
  dispatcher?: Dispatcher;
  method?: 'POST' | 'GET';
  log?: (msg: string) => void;
  /** Cancels the call (and its retries); it then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Headers sent with the request (content-type and authorization are set by postJson). */
  headers?: Record<string, string>;
}

/**
 * Sends JSON and returns the parsed JSON answer, retrying as the policy allows; a failure
 * throws UpstreamError.
 */
export async function postJson(url: string, body: unknown, opts: PostJsonOptions = {}): Promise<unknown> {
  const headers: Record<string, string> = { ...opts.headers, 'content-type': 'application/json' };
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const res = await sendToBackend(url, payload, headers, opts);
  const { status } = res;
  const text = res.body.toString('utf8');
  if (status >= 200 && status < 300) return parseBackendJson(url, status, text, opts.apiKey);
  throw statusError(url, status, text, opts.apiKey, res.headers);
}

/**
 * One request to a backend through the retry policy: the final answer whatever its status, or
 * an UpstreamError for a transport failure (502, or 504 on a timeout).
 */
export async function sendToBackend(
  url: string,
  payload: string | undefined,
  headers: Record<string, string>,
  opts: Omit<PostJsonOptions, 'apiKey'> & { apiKey?: string },
): Promise<CollectedResponse> {
  const [origin, path] = splitUrl(url);
  const dispatcher = opts.dispatcher ?? sharedPool();
  const method = opts.method ?? 'POST';
  const requestClass = opts.requestClass ?? classifyRequest(method);
  const policy = retryPolicy(opts.retry);
  const result = await dispatchWithRetries(
    policy,
    requestClass,
    dispatcher,
    origin,
    path,
    { method, headers, body: payload, headersTimeout: opts.timeoutMs, bodyTimeout: opts.timeoutMs, signal: opts.signal },
    {
      signal: opts.signal,
      onRetry: opts.log
        ? ({ attempt, delayMs, outcome }) =>
            opts.log!(
              `${'status' in outcome ? `HTTP ${outcome.status}` : (errorCode(outcome.error) ?? 'transport failure')} from ${url} (attempt ${attempt} of ${policy.maxAttempts}); retrying in ${delayMs} ms`,
            )
        : undefined,
    },
  );
  if (!result.ok) {
    if (opts.signal?.aborted) throw abortReason(opts.signal);
    throw transportError(url, result.error, opts.timeoutMs, opts.apiKey);
  }
  return result.response;
}

/** A 2xx body as JSON, or a 502 UpstreamError naming the backend. */
export function parseBackendJson(url: string, status: number, text: string, apiKey?: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UpstreamError(
      502,
      `the model backend at ${url} answered HTTP ${status} with a body that is not valid JSON: ${redactSecret(shorten(text, 300), apiKey)}`,
      'invalid_json',
      url,
      status,
      text,
    );
  }
}

/**
 * The error an OpenAI-compatible backend's non-2xx answer maps to, exactly as
 * fromOpenAIClientError maps the official client's error for that answer: the status is kept,
 * the body's `error` object (or the whole JSON body) becomes `upstreamBody`.
 */
export function openAIStatusError(url: string, status: number, text: string, apiKey?: string, headers?: Parameters<typeof retryAfterHeaders>[0]): UpstreamError {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const normalized = json && typeof json === 'object' && (json as { error?: unknown }).error == null ? { error: json } : json;
  const error = (normalized as { error?: unknown } | null | undefined)?.error;
  const detail = error as { message?: unknown } | undefined;
  const msg = detail?.message
    ? typeof detail.message === 'string'
      ? detail.message
      : JSON.stringify(detail.message)
    : error
      ? JSON.stringify(error)
      : json === undefined
        ? text
        : undefined;
  const message = msg ? `${status} ${msg}` : `${status} status code (no body)`;
  return fromOpenAIClientError({ status, error, message, headers }, url, apiKey) as UpstreamError;
}

/**
 * Maps an error thrown by the official `openai` npm client (APIError with a status,
 * APIConnectionError, APIConnectionTimeoutError, or a JSON parse failure) to an HttpError that
 * keeps the backend's status and error body. Duck-typed so this module does not depend on the
 * client package.
 */
export function fromOpenAIClientError(err: unknown, url: string, apiKey?: string): HttpError {
  if (err instanceof HttpError) return err;
  const e = err as { status?: unknown; error?: unknown; name?: string; message?: string; cause?: unknown; headers?: Parameters<typeof retryAfterHeaders>[0]; constructor?: { name?: string } };
  const cls = e?.constructor?.name ?? e?.name ?? '';
  if (typeof e?.status === 'number') {
    const status = e.status;
    const upstreamBody = e.error;
    const message = redactSecret(`the model backend at ${url} answered HTTP ${status}: ${shorten(e.message ?? '')}`, apiKey);
    // The backend's status is kept; its error object stays available as upstreamBody.
    return new UpstreamError(status, message, 'status', url, status, JSON.stringify(upstreamBody ?? null), passedOn(status, e.headers));
  }
  if (cls === 'APIConnectionTimeoutError' || e?.name === 'TimeoutError') {
    return transportError(url, Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }), undefined, apiKey);
  }
  if (cls === 'APIConnectionError') return transportError(url, e.cause ?? err, undefined, apiKey);
  if (err instanceof SyntaxError) {
    return new UpstreamError(502, `the model backend at ${url} answered with a body that is not valid JSON: ${redactSecret(err.message, apiKey)}`, 'invalid_json', url);
  }
  return new UpstreamError(502, redactSecret(`calling the model backend at ${url} failed: ${e?.message ?? String(err)}`, apiKey), 'connect', url);
}
