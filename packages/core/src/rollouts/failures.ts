/**
 * Failures while they happen: each failed rollout gets a reason class (model unreachable, timeout,
 * HTTP 4xx/5xx, verify error, …) from its error or the agent's answer; the tracker counts them by
 * class, tells the caller the first time a class is seen (so its reason can be shown at once), and
 * counts failures in a row so a run against infrastructure that is plainly down can stop early.
 */
import { ServerResponseError, ServerUnreachableError, TimeoutError } from '../errors.js';

export type FailureClass =
  | 'model_unreachable'
  | 'agent_unreachable'
  | 'server_unreachable'
  | 'timeout'
  | 'rate_limited'
  | 'verify_error'
  | 'http_5xx'
  | 'http_4xx'
  | 'bad_result'
  | 'bad_row'
  | 'torn_line'
  | 'other';

/** How each class is shown in the progress display and the metrics. */
export const FAILURE_LABELS: Record<FailureClass, string> = {
  model_unreachable: 'model unreachable',
  agent_unreachable: 'agent unreachable',
  server_unreachable: 'server unreachable',
  timeout: 'timeout',
  rate_limited: 'rate limited (429/503)',
  verify_error: 'verify error',
  http_5xx: 'HTTP 5xx',
  http_4xx: 'HTTP 4xx',
  bad_result: 'bad agent answer',
  bad_row: 'bad input row',
  torn_line: 'torn output line',
  other: 'other',
};

const MODEL_UNREACHABLE_RE = /could not reach the model backend|could not reach \S*\/v1\/(?:responses|chat\/completions)|model server `[^`]*` answered HTTP 5\d\d/;
const TIMEOUT_RE = /timed out|timeout|UND_ERR_(?:HEADERS|BODY|CONNECT)_TIMEOUT|ETIMEDOUT/i;
const VERIFY_RE = /\/verify\b/;
const UNREACHABLE_RE = /could not reach |ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENOTFOUND|socket hang up|other side closed/;

/**
 * The class of one failed rollout. `err` is what the /run call threw (null for a bad input row);
 * an agent's error answer is classified by its status and by what its text says went wrong
 * behind it (the model backend, a timeout, the verifier).
 */
export function classifyFailure(err: unknown): FailureClass {
  if (err === null || err === undefined) return 'bad_row';
  if (err instanceof TimeoutError) return 'timeout';
  if (err instanceof ServerUnreachableError) return TIMEOUT_RE.test(err.message) ? 'timeout' : 'agent_unreachable';
  if (err instanceof ServerResponseError) {
    const text = err.body;
    if (err.status === 429 || err.status === 503) return 'rate_limited';
    if (MODEL_UNREACHABLE_RE.test(text)) return TIMEOUT_RE.test(text) ? 'timeout' : 'model_unreachable';
    if (TIMEOUT_RE.test(text)) return 'timeout';
    if (VERIFY_RE.test(text)) return 'verify_error';
    if (UNREACHABLE_RE.test(text)) return 'server_unreachable';
    return err.status >= 500 ? 'http_5xx' : 'http_4xx';
  }
  const code = (err as { code?: unknown }).code;
  if (code === 'NG_ERR_BAD_RESULT' || code === 'NG_ERR_BAD_JSON') return 'bad_result';
  return 'other';
}

/** What the tracker says about one recorded failure. */
export interface FailureNote {
  cls: FailureClass;
  /** The first failure of its class in this run. */
  first: boolean;
  /** Failures in a row (bad input rows neither count nor reset). */
  consecutive: number;
}

export class FailureTracker {
  readonly counts = new Map<FailureClass, number>();
  /** The first reason seen for each class. */
  readonly firstReason = new Map<FailureClass, string>();
  consecutive = 0;

  failure(cls: FailureClass, reason: string): FailureNote {
    const seen = this.counts.get(cls) ?? 0;
    this.counts.set(cls, seen + 1);
    if (seen === 0) this.firstReason.set(cls, reason);
    if (cls !== 'bad_row') this.consecutive++;
    return { cls, first: seen === 0, consecutive: this.consecutive };
  }

  success(): void {
    this.consecutive = 0;
  }

  /** Counts by label, largest first (for the progress display and `_metrics.json`). */
  byLabel(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort((a, b) => b[1] - a[1]).map(([c, n]) => [FAILURE_LABELS[c], n]));
  }
}
