/**
 * Failures while they happen: each failed rollout gets a reason class (model unreachable, timeout,
 * HTTP 4xx/5xx, verify error, …) from its error or the agent's answer; the tracker counts them by
 * class, tells the caller the first time a class is seen (so its reason can be shown at once), and
 * counts failures in a row so a run against infrastructure that is plainly down can stop early.
 */
import { NgError, ServerResponseError, ServerUnreachableError, TimeoutError } from '../errors.js';

export type FailureClass =
  | 'model_unreachable'
  | 'agent_unreachable'
  | 'server_unreachable'
  | 'timeout'
  | 'group_failed'
  | 'rate_limited'
  | 'verify_error'
  | 'judge_failed'
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
  group_failed: 'group not scored',
  rate_limited: 'rate limited (429/503)',
  verify_error: 'verify error',
  judge_failed: 'judge failed',
  http_5xx: 'HTTP 5xx',
  http_4xx: 'HTTP 4xx',
  bad_result: 'bad agent answer',
  bad_row: 'bad input row',
  torn_line: 'torn output line',
  other: 'other',
};

/**
 * The class of each code that names what went wrong behind the agent. Agents and judges pass these
 * codes on (client/relay.ts), so a failure is classified the same whichever hop saw it. Codes not
 * listed here are classified by the answer's status. The Python package keeps the same table
 * (nemo_gym/server_utils.py `_REASON_BY_CODE`; a test holds them equal).
 */
export const CODE_CLASSES: Readonly<Record<string, FailureClass>> = {
  NG_ERR_MODEL_UNREACHABLE: 'model_unreachable',
  NG_ERR_MODEL_TIMEOUT: 'timeout',
  NG_ERR_TIMEOUT: 'timeout',
  NG_ERR_VERIFY_FAILED: 'verify_error',
  // A verifier's LLM judge gave no verdict (an error, a timeout, an answer without a verdict label).
  NG_ERR_JUDGE_FAILED: 'judge_failed',
  NG_ERR_SERVER_UNREACHABLE: 'server_unreachable',
  NG_ERR_BAD_RESULT: 'bad_result',
  NG_ERR_BAD_JSON: 'bad_result',
  // A rollout of a group its resources server's /verify_group did not score (group.ts).
  NG_ERR_GROUP_VERIFY: 'group_failed',
  // The model that plays the user (responses_api_agents/user_simulation_agent).
  NG_ERR_USER_MODEL_FAILED: 'model_unreachable',
  NG_ERR_USER_MODEL_TIMEOUT: 'timeout',
  // The user's own agent service behind remote_agent (responses_api_agents/remote_agent).
  NG_ERR_REMOTE_AGENT_FAILED: 'agent_unreachable',
  NG_ERR_REMOTE_AGENT_TIMEOUT: 'timeout',
  NG_ERR_REMOTE_AGENT_BAD_RESPONSE: 'bad_result',
};

/**
 * Codes of an answer that could not be used by a hop behind the agent (the model server's body
 * was not JSON, …): relayed by an agent, they are that agent's 5xx/4xx, not a bad agent answer.
 */
const RELAYED_BAD_RESULT: ReadonlySet<string> = new Set(['NG_ERR_BAD_RESULT', 'NG_ERR_BAD_JSON']);

/**
 * The class of an agent's error answer from its status and the code it carried (also for a failure
 * a queue worker recorded as status and code).
 */
export function classifyAnswer(status: number, code: unknown): FailureClass {
  if (status === 429 || status === 503) return 'rate_limited';
  const byCode = typeof code === 'string' && Object.hasOwn(CODE_CLASSES, code) ? CODE_CLASSES[code] : undefined;
  // An agent's answer that it could not use another server's answer is that agent's 5xx/4xx.
  if (byCode !== undefined && !RELAYED_BAD_RESULT.has(code as string)) return byCode;
  return status >= 500 ? 'http_5xx' : 'http_4xx';
}

/**
 * The class of one failed rollout, by code and status, never by the error's text. `err` is what
 * the /run call threw (null for a bad input row): the agent not reached (or timed out), or the
 * agent's error answer, whose `code` says what failed behind it (the model, a timeout, the verifier).
 */
export function classifyFailure(err: unknown): FailureClass {
  if (err === null || err === undefined) return 'bad_row';
  const code = (err as { code?: unknown }).code;
  const byCode = typeof code === 'string' && Object.hasOwn(CODE_CLASSES, code) ? CODE_CLASSES[code] : undefined;
  if (err instanceof TimeoutError) return 'timeout';
  if (err instanceof ServerUnreachableError) return code === 'NG_ERR_TIMEOUT' ? 'timeout' : 'agent_unreachable';
  if (err instanceof ServerResponseError) return classifyAnswer(err.status, code);
  // The agent's own answer was not a usable result, the collector did not score its group, or the
  // result row was marked as a judge failure (see failedRowError).
  return byCode === 'bad_result' || byCode === 'group_failed' || byCode === 'judge_failed' ? byCode : 'other';
}

/**
 * Upstream NeMo Gym's way of saying a row failed (`nemo_gym/judge.py` at HEAD: a verifier whose judge
 * failed answers 200 with the request, `reward: 0.0`, `_ng_failure_class: "judge_failed"` and
 * `_ng_failure_judge_error`). Such a row is a failure, not a reward: the error to record it with
 * (class judge_failed), or null for an ordinary result.
 */
export function failedRowError(row: Record<string, unknown>): NgError | null {
  const cls = row._ng_failure_class;
  if (typeof cls !== 'string' || !cls) return null;
  const why = typeof row._ng_failure_judge_error === 'string' ? `: ${row._ng_failure_judge_error}` : '';
  const text = `the agent answered a row marked _ng_failure_class: ${JSON.stringify(cls)}${why}`;
  return cls === 'judge_failed' ? new NgError('NG_ERR_JUDGE_FAILED', text) : new NgError('NG_ERR_BAD_RESULT', text);
}

/** The /verify request inside a failed row: the row without its reward and the failure marks. */
function requestOfFailedRow(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) if (k !== 'reward' && k !== '_ng_failure_class' && k !== '_ng_failure_judge_error') out[k] = v;
  return out;
}

/** The /verify request an agent's error answer carried back (`verify_request`), if any. */
function requestOfAnswer(body: string): Record<string, unknown> | undefined {
  try {
    const v = (JSON.parse(body) as { verify_request?: unknown }).verify_request;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a judge failure's record keeps so ng-reverify can score it later: the /verify request the agent
 * passed on with its error answer, or the one inside an upstream failed row (`failedRow`).
 */
export function judgeFailureRequest(cls: FailureClass, err: unknown, failedRow?: Record<string, unknown>): Record<string, unknown> | undefined {
  if (cls !== 'judge_failed') return undefined;
  if (failedRow) return requestOfFailedRow(failedRow);
  return err instanceof ServerResponseError ? requestOfAnswer(err.body) : undefined;
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
