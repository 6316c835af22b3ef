/** Exponential backoff with full jitter, Retry-After, and a budget of attempts and time. */
export interface RetryPolicy {
  /** Attempts in total, including the first. */
  maxAttempts: number;
  /** Give up retrying once this much time has passed since the first attempt. */
  maxElapsedMs: number;
  initialDelayMs: number;
  maxDelayMs: number;
  /** HTTP statuses that are retried. */
  retryStatuses: readonly number[];
  /** Retry transport errors (refused, reset, timed out connecting). */
  retryConnectionErrors: boolean;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 6,
  maxElapsedMs: 120_000,
  initialDelayMs: 500,
  maxDelayMs: 8_000,
  // 500 is not here: our servers answer 500 for a handler bug, which a retry only repeats.
  retryStatuses: [408, 429, 502, 503, 504],
  retryConnectionErrors: true,
};

export const NO_RETRY: RetryPolicy = { ...DEFAULT_RETRY, maxAttempts: 1 };

/** Delay before attempt `attempt + 1` (attempt counts from 1). */
export function backoffDelay(policy: RetryPolicy, attempt: number, retryAfter?: string | null, random = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
  let delay = ceiling / 2 + random() * (ceiling / 2);
  const ra = parseRetryAfter(retryAfter);
  if (ra !== null) delay = Math.max(delay, Math.min(ra, 60_000));
  return Math.round(delay);
}

/** Retry-After in milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

const RETRYABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
]);

export function isRetryableTransportError(err: unknown): boolean {
  let e: unknown = err;
  for (let i = 0; i < 4 && e; i++) {
    const code = (e as { code?: string }).code;
    if (code && RETRYABLE_CODES.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
