/**
 * One HTTP request through an undici dispatcher, with the whole answer collected in memory.
 *
 * undici's `request()` wraps every answer in a Node stream and an async resource; for the short
 * JSON bodies servers exchange here that wrapping costs more CPU than the HTTP exchange itself.
 * This talks to the dispatcher's handler interface directly: same pools, timeouts, errors
 * (`UND_ERR_*`, `ECONNREFUSED`, …). It sends once: retrying is retry.ts's job.
 */
import type { Dispatcher } from 'undici';
import { classifyRequest, withRetries, type RequestClass, type RetryInfo, type RetryPolicy, type RetryResult } from './retry.js';

export type ResponseHeaders = Record<string, string | string[]>;

export interface CollectedResponse {
  status: number;
  headers: ResponseHeaders;
  body: Buffer;
}

export interface DispatchOptions {
  /** HTTP method (default: POST with a body, GET without). */
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal | null;
  /** Per-request overrides of the dispatcher's timeouts (ms; 0 = none). */
  headersTimeout?: number;
  bodyTimeout?: number;
  /**
   * Whether the request may be resent (default: only GET/HEAD/OPTIONS). undici never puts a
   * request that is not behind another on a pipelined socket, where a reset would replay it.
   */
  idempotent?: boolean;
  /** Called right before the first byte of the request is written (never for a failed connect). */
  onSent?: () => void;
}

/** `http://host:port/a/b?c` -> [`http://host:port`, `/a/b?c`]. */
export function splitUrl(url: string): [string, string] {
  const scheme = url.indexOf('://');
  if (scheme < 0) throw new TypeError(`not an absolute URL: ${url}`);
  const slash = url.indexOf('/', scheme + 3);
  const query = url.indexOf('?', scheme + 3);
  const cut = slash < 0 ? query : query < 0 ? slash : Math.min(slash, query);
  if (cut < 0) return [url, '/'];
  const path = url.slice(cut);
  return [url.slice(0, cut), path.startsWith('/') ? path : `/${path}`];
}

function parseRawHeaders(raw: Buffer[]): ResponseHeaders {
  const out: ResponseHeaders = Object.create(null) as ResponseHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i]!.toString('latin1').toLowerCase();
    const value = raw[i + 1]!.toString('latin1');
    const seen = out[key];
    if (seen === undefined) out[key] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else out[key] = [seen, value];
  }
  return out;
}

/** What a call cancelled through `signal` rejects with: the signal's reason when it is an Error. */
export function abortReason(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  if (r instanceof Error) return r;
  return Object.assign(new Error('This operation was aborted'), { name: 'AbortError', code: 'UND_ERR_ABORTED' });
}

/**
 * The calls one signal cancels now. A signal gets a single 'abort' listener however many calls
 * use it (a rollout passes its one signal to every call it makes): a call joins the set when it
 * starts and leaves it when it settles, which costs far less than adding and removing an
 * EventTarget listener per call.
 */
const abortWatchers = new WeakMap<AbortSignal, Set<() => void>>();

function watchAbort(signal: AbortSignal, onAbort: () => void): Set<() => void> {
  let set = abortWatchers.get(signal);
  if (set === undefined) {
    const calls = new Set<() => void>();
    abortWatchers.set(signal, calls);
    signal.addEventListener(
      'abort',
      () => {
        for (const cancel of [...calls]) cancel();
        calls.clear();
      },
      { once: true },
    );
    set = calls;
  }
  set.add(onAbort);
  return set;
}

/**
 * undici's handler for one request: collects the answer and settles the caller's promise. A class
 * (methods shared on its prototype) rather than an object of closures: one allocation per request.
 */
class CollectingHandler implements Dispatcher.DispatchHandler {
  status = 0;
  headers: ResponseHeaders | null = null;
  readonly chunks: Buffer[] = [];
  /** undici's abort for this request, once it reached the request. */
  abort: ((err: Error) => void) | null = null;
  /** An abort that came before undici reached the request: it is cancelled when undici does. */
  abortedEarly: Error | null = null;
  settled = false;
  /** The set of calls the signal cancels, with this call's entry in it. */
  watching: Set<() => void> | null = null;
  onAbort: (() => void) | null = null;

  constructor(
    private readonly resolve: (r: CollectedResponse) => void,
    private readonly reject: (err: Error) => void,
    private readonly onSent: (() => void) | undefined,
  ) {}

  finish(err: Error | null): void {
    if (this.settled) return;
    this.settled = true;
    if (this.watching !== null) this.watching.delete(this.onAbort!);
    if (err) this.reject(err);
    else {
      const chunks = this.chunks;
      this.resolve({ status: this.status, headers: this.headers ?? (Object.create(null) as ResponseHeaders), body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
    }
  }

  onConnect(abortRequest: (err?: Error) => void): void {
    if (this.abortedEarly) {
      // Never written: a request whose caller gave up must not reach the server later.
      abortRequest(this.abortedEarly);
      return;
    }
    this.abort = abortRequest;
    this.onSent?.();
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    // 1xx informational answers come before the real one.
    if (statusCode < 200) return true;
    this.status = statusCode;
    this.headers = parseRawHeaders(rawHeaders);
    this.chunks.length = 0;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    this.finish(null);
  }

  onError(err: Error): void {
    this.finish(err);
  }
}

/** Sends one request and resolves with its status, headers and body (rejects on transport errors). */
export function dispatchRequest(dispatcher: Dispatcher, origin: string, path: string, options: DispatchOptions = {}): Promise<CollectedResponse> {
  return new Promise((resolve, reject) => {
    const signal = options.signal ?? null;
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const handler = new CollectingHandler(resolve, reject, options.onSent);
    if (signal !== null) {
      const onAbort = () => {
        const err = abortReason(signal);
        if (handler.abort) handler.abort(err);
        else {
          handler.abortedEarly = err;
          handler.finish(err);
        }
      };
      handler.onAbort = onAbort;
      handler.watching = watchAbort(signal, onAbort);
    }
    const method = options.method ?? (options.body === undefined ? 'GET' : 'POST');
    dispatcher.dispatch(
      {
        origin,
        path,
        method,
        headers: options.headers,
        body: options.body,
        idempotent: options.idempotent ?? classifyRequest(method) === 'idempotent',
        headersTimeout: options.headersTimeout,
        bodyTimeout: options.bodyTimeout,
      },
      handler,
    );
  });
}

/**
 * One request through the retry policy: every attempt is sent with the request class's resend
 * rule and marks itself sent once its first byte was written (a sent non-idempotent request is
 * never resent).
 */
export function dispatchWithRetries(
  policy: RetryPolicy,
  requestClass: RequestClass,
  dispatcher: Dispatcher,
  origin: string,
  path: string,
  options: Omit<DispatchOptions, 'idempotent' | 'onSent'>,
  retryOptions: { signal?: AbortSignal | null; onRetry?: (info: RetryInfo) => void } = {},
): Promise<RetryResult<CollectedResponse>> {
  return withRetries(
    policy,
    requestClass,
    (attempt) =>
      dispatchRequest(dispatcher, origin, path, {
        ...options,
        idempotent: requestClass === 'idempotent',
        onSent: () => {
          attempt.sent = true;
        },
      }),
    retryOptions,
  );
}
