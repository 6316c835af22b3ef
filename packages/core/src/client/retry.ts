/**
 * The one retry policy of every HTTP hop: which outcomes are retried, exponential backoff with
 * full jitter, Retry-After, and a budget of attempts and of wall-clock time.
 *
 * Requests come in two classes:
 *   - `idempotent` (GET, HEAD, OPTIONS): sending it twice does no harm, so transport failures and
 *     the usual transient statuses (408, 429, 502, 503, 504) are retried.
 *   - `once` (every POST: a rollout, a generation, a tool call, a verify): it may change state or
 *     spend tokens, so it is resent only when it provably never reached the server: the
 *     connection failed before a byte of it was written, or the server refused it before
 *     processing (429, 503). A timeout or a connection dropped after sending is a failure for the
 *     caller to record, never a resend.
 *
 * 500 is retried in neither class: a server answers 500 for a handler bug, which a retry repeats.
 */
/** Answer headers as parsed by dispatch.ts (lower-case names). */
type ResponseHeaders = Record<string, string | string[] | undefined>;

export type RequestClass = 'idempotent' | 'once';

export interface RetryPolicy {
  /** Attempts in total, including the first. */
  maxAttempts: number;
  /** No attempt starts once this much time has passed since the first one. */
  maxElapsedMs: number;
  /** Backoff before attempt 2 is drawn from [0, initialDelayMs]; the ceiling doubles per attempt. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** The longest Retry-After honoured; a server asking for a longer pause ends the retries. */
  maxRetryAfterMs: number;
  /** Statuses retried for idempotent requests; a `once` request retries only those also in NOT_PROCESSED_STATUSES. */
  retryStatuses: readonly number[];
  /** Retry transport failures (for `once` requests: only those before the request was written). */
  retryConnectionErrors: boolean;
}

/** Statuses that say the server did not process the request: safe to resend even a `once` request. */
export const NOT_PROCESSED_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * Sent with a 429/503 that a server passes on from the server behind it. It says: this request was
 * taken (an agent may have run tools for it) or its own retries are already spent (a model server
 * retried its backend), so the caller must not resend it. The status still tells the caller that
 * the failure is a rate limit or an overload, i.e. infrastructure, to be run again later.
 */
export const NO_RESEND_HEADER = 'x-nemo-gym-no-resend';

/** Whether an answer carries NO_RESEND_HEADER. */
export function isNoResend(headers: ResponseHeaders | undefined): boolean {
  return header(headers, NO_RESEND_HEADER) !== undefined;
}

/** The headers to answer with when passing on a 429/503 from the server behind: its Retry-After, and NO_RESEND_HEADER. */
export function passOnHeaders(headers: Parameters<typeof retryAfterHeaders>[0]): Record<string, string> {
  return { ...retryAfterHeaders(headers), [NO_RESEND_HEADER]: '1' };
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 6,
  maxElapsedMs: 120_000,
  initialDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
  // 500 is not here: our servers answer 500 for a handler bug, which a retry only repeats.
  retryStatuses: [408, 429, 502, 503, 504],
  retryConnectionErrors: true,
};

export const NO_RETRY: RetryPolicy = { ...DEFAULT_RETRY, maxAttempts: 1 };

/** A policy from partial settings on top of a base (DEFAULT_RETRY unless given). */
export function retryPolicy(overrides: Partial<RetryPolicy> = {}, base: RetryPolicy = DEFAULT_RETRY): RetryPolicy {
  const p = { ...base, ...overrides };
  if (!(p.maxAttempts >= 1)) throw new RangeError(`retry maxAttempts must be at least 1, got ${p.maxAttempts}`);
  return p;
}

/** GET, HEAD and OPTIONS may be resent freely; anything else may have an effect and is sent once. */
export function classifyRequest(method: string): RequestClass {
  const m = method.toUpperCase();
  return m === 'GET' || m === 'HEAD' || m === 'OPTIONS' ? 'idempotent' : 'once';
}

/** Backoff with full jitter before attempt `attempt + 1` (attempt counts from 1). */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
  return Math.round(random() * ceiling);
}

/**
 * For a loop that retries something other than an HTTP request (a Redis command, a download that
 * resumes): the pause before attempt `attempt + 1` after `attempt` failures in `elapsedMs`, by the
 * policy's backoff, or null when its attempt or time budget is spent.
 */
export function nextRetryDelay(policy: RetryPolicy, attempt: number, elapsedMs: number, random: () => number = Math.random): number | null {
  const delay = backoffDelay(policy, attempt, random);
  return attempt >= policy.maxAttempts || elapsedMs + delay > policy.maxElapsedMs ? null : delay;
}

/** Retry-After in milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function header(headers: ResponseHeaders | undefined, name: string): string | undefined {
  const v = headers?.[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The pause an answer asks for: `retry-after-ms` (OpenAI's), else `retry-after`; null if none. */
export function retryAfterMs(headers: ResponseHeaders | undefined, now = Date.now()): number | null {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms);
  return parseRetryAfter(header(headers, 'retry-after'), now);
}

/**
 * The Retry-After headers of an answer (`retry-after`, `retry-after-ms`), to pass on with a 429 or
 * 503 so every hop back to the collector knows when to try again; undefined when there are none.
 * Takes parsed headers (lower-case names) or a fetch `Headers`.
 */
export function retryAfterHeaders(headers: ResponseHeaders | { get(name: string): string | null } | null | undefined): Record<string, string> | undefined {
  if (!headers) return undefined;
  let out: Record<string, string> | undefined;
  for (const name of ['retry-after', 'retry-after-ms']) {
    const v = typeof headers.get === 'function' ? (headers as { get(name: string): string | null }).get(name) : header(headers as ResponseHeaders, name);
    if (typeof v === 'string' && v !== '') (out ??= {})[name] = v;
  }
  return out;
}

/** Transport failures worth another try when the request is idempotent or was never written. */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** Failures that happen while connecting, before any byte of a request can have been written. */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'EAI_AGAIN', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH']);

/** The first `code` on an error or its causes. */
export function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export function isRetryableTransportError(err: unknown): boolean {
  const code = errorCode(err);
  return code !== undefined && TRANSIENT_CODES.has(code);
}

/** True when the failure happened while connecting (refused, connect timeout, name lookup). */
export function isConnectFailure(err: unknown): boolean {
  const code = errorCode(err);
  return code !== undefined && CONNECT_CODES.has(code);
}

/** This process's own resources ran out (open files, local ports, buffers): no fault of the server it was reaching. */
const LOCAL_RESOURCE_CODES = new Set(['EMFILE', 'ENFILE', 'EADDRNOTAVAIL', 'ENOBUFS', 'ENOMEM']);

/** The local-resource code (EMFILE, …) on an error or its causes, if any. */
export function localResourceFailure(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && LOCAL_RESOURCE_CODES.has(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** What one attempt produced: an answer (any status), or a transport failure. */
export type AttemptOutcome =
  | { status: number; headers?: ResponseHeaders }
  | {
      error: unknown;
      /** Whether any byte of the request may have been written; unknown: judged from the error code. */
      sent?: boolean;
    };

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; why: string };

/**
 * Whether to send the request again after `attempt` attempts that began `elapsedMs` ago. The
 * only place that decides a retry; every hop goes through it.
 */
export function retryDecision(
  policy: RetryPolicy,
  requestClass: RequestClass,
  outcome: AttemptOutcome,
  attempt: number,
  elapsedMs: number,
  random: () => number = Math.random,
): RetryDecision {
  let asked: number | null = null;
  if ('status' in outcome) {
    const s = outcome.status;
    if (!policy.retryStatuses.includes(s)) return { retry: false, why: `HTTP ${s} is not retried` };
    if (requestClass === 'once' && !NOT_PROCESSED_STATUSES.has(s)) {
      return { retry: false, why: `HTTP ${s} may come after the request was processed, so it is not resent` };
    }
    if (isNoResend(outcome.headers)) return { retry: false, why: `HTTP ${s} was passed on by a server that already acted on the request or spent its own retries, so it is not resent` };
    asked = retryAfterMs(outcome.headers);
  } else {
    if (!policy.retryConnectionErrors || !isRetryableTransportError(outcome.error)) return { retry: false, why: 'this failure is not retried' };
    if (requestClass === 'once') {
      const delivered = outcome.sent ?? !isConnectFailure(outcome.error);
      if (delivered) return { retry: false, why: 'the request may have reached the server, so it is not resent' };
    }
  }
  if (attempt >= policy.maxAttempts) return { retry: false, why: `the retry budget of ${policy.maxAttempts} attempt(s) is used up` };
  if (asked !== null && asked > policy.maxRetryAfterMs) {
    return { retry: false, why: `the server asks to wait ${Math.round(asked / 1000)} s, more than the ${Math.round(policy.maxRetryAfterMs / 1000)} s honoured` };
  }
  const delayMs = Math.max(backoffDelay(policy, attempt, random), asked ?? 0);
  if (elapsedMs + delayMs > policy.maxElapsedMs) {
    return { retry: false, why: `the retry time budget of ${Math.round(policy.maxElapsedMs / 1000)} s would be exceeded` };
  }
  return { retry: true, delayMs };
}

/** One attempt: `sent` is set by the sender as soon as the first byte of the request may be on the wire. */
export interface AttemptState {
  readonly number: number;
  sent: boolean;
}

export interface RetryInfo {
  attempt: number;
  delayMs: number;
  outcome: AttemptOutcome;
}

export type RetryResult<R> =
  | { ok: true; response: R; attempts: number }
  | { ok: false; error: unknown; sent: boolean; attempts: number; why: string };

/**
 * Runs `send` until it gives an answer that is not retried, or the policy says stop. An answer
 * with a retried status that is the last one is returned as the answer (the caller sees the
 * status); a transport failure that ends the retries is returned as `ok: false`.
 */
export async function withRetries<R extends { status: number; headers?: ResponseHeaders }>(
  policy: RetryPolicy,
  requestClass: RequestClass,
  send: (attempt: AttemptState) => Promise<R>,
  options: { signal?: AbortSignal | null; onRetry?: (info: RetryInfo) => void; random?: () => number } = {},
): Promise<RetryResult<R>> {
  const started = Date.now();
  for (let n = 1; ; n++) {
    const state: AttemptState = { number: n, sent: false };
    let outcome: AttemptOutcome;
    let response: R | undefined;
    try {
      response = await send(state);
      // The common case: an answer whose status is never retried.
      if (!policy.retryStatuses.includes(response.status)) return { ok: true, response, attempts: n };
      outcome = { status: response.status, headers: response.headers };
    } catch (error) {
      outcome = { error, sent: state.sent };
    }
    const decision = options.signal?.aborted
      ? ({ retry: false, why: 'aborted' } as const)
      : retryDecision(policy, requestClass, outcome, n, Date.now() - started, options.random);
    if (!decision.retry) {
      if (response !== undefined) return { ok: true, response, attempts: n };
      return { ok: false, error: (outcome as { error: unknown }).error, sent: state.sent, attempts: n, why: decision.why };
    }
    options.onRetry?.({ attempt: n, delayMs: decision.delayMs, outcome });
    await sleep(decision.delayMs, options.signal);
    if (options.signal?.aborted) {
      if (response !== undefined) return { ok: true, response, attempts: n };
      return { ok: false, error: (outcome as { error: unknown }).error, sent: state.sent, attempts: n, why: 'aborted' };
    }
  }
}

/** A pause that ends early when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
