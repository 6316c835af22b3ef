/**
 * Passing on the failure of a call to another server (an agent relaying its model or resources
 * server, a judge relaying its model). The error raised keeps the code of what failed behind the
 * hop, so the answer it becomes carries that code and the collector classifies the rollout the same
 * whichever hop saw the failure:
 *
 *   a model or timeout code from behind the hop     -> kept (NG_ERR_MODEL_TIMEOUT, NG_ERR_TIMEOUT, NG_ERR_MODEL_UNREACHABLE)
 *   a verifier's judge gave no verdict              -> kept (NG_ERR_JUDGE_FAILED)
 *   /verify answered an error, or could not be reached -> NG_ERR_VERIFY_FAILED
 *   the model server answered 5xx, or could not be reached -> NG_ERR_MODEL_UNREACHABLE
 *   anything else                                   -> the code the answer carried, if any
 */
import { answerCode, describeError, HttpError, NgError, type NgCode } from '../errors.js';
import type { ServerResponse } from './client.js';
import { passOnHeaders } from './retry.js';

/** Which call failed: the model, a resources server's tool or seed_session, or its /verify. */
export type Hop = 'model' | 'resources' | 'verify';

/** Codes that name what failed behind a hop: every relay keeps them. */
const KEPT: ReadonlySet<string> = new Set(['NG_ERR_TIMEOUT', 'NG_ERR_MODEL_TIMEOUT', 'NG_ERR_MODEL_UNREACHABLE', 'NG_ERR_JUDGE_FAILED']);

/** The code a failure of `hop` is passed on with (`inner`: the code the failure carried). */
export function relayedCode(hop: Hop, inner: NgCode | undefined, status?: number): NgCode | undefined {
  if (inner !== undefined && KEPT.has(inner)) return inner;
  if (hop === 'verify') return 'NG_ERR_VERIFY_FAILED';
  if (hop === 'model' && (status === undefined || status >= 500)) return 'NG_ERR_MODEL_UNREACHABLE';
  return inner;
}

/**
 * Turns a non-2xx answer from another server into a clear error for our caller. A rate limit or an
 * overload (429, 503) keeps its status and Retry-After, so the caller sees an infrastructure
 * failure to run again later, not a task error; it also says not to resend the caller's request
 * (the rollout had started: a session was seeded, tools may have run), so it is recorded, not
 * replayed. Other 4xx answer 422, 5xx 502; the code is {@link relayedCode}'s.
 */
export function hopFailure(hop: Hop, what: string, res: ServerResponse, extra?: Record<string, unknown>): HttpError {
  const passOn = res.status === 429 || res.status === 503;
  const status = passOn ? res.status : res.status >= 400 && res.status < 500 ? 422 : 502;
  const body = res.text.length > 4000 ? `${res.text.slice(0, 4000)}…` : res.text;
  return new HttpError(status, `${what} answered HTTP ${res.status} (${res.url}): ${body}`, passOn ? passOnHeaders(res.headers) : undefined, relayedCode(hop, answerCode(res.text), res.status), extra);
}

/**
 * The error to raise for a call to `hop` that threw (not reached, timed out): a model or verify
 * server that could not be reached answers 500 with the same detail as before, coded for what it
 * was; a timeout, a cancellation or a resources-server failure is passed on as it is.
 */
export function hopError(hop: Hop, err: unknown): unknown {
  if (hop === 'resources' || !(err instanceof NgError) || err.code !== 'NG_ERR_SERVER_UNREACHABLE') return err;
  return new HttpError(500, describeError(err), undefined, relayedCode(hop, err.code));
}

/** Awaits a call to `hop`; what it throws is raised as {@link hopError} says. */
export async function viaHop<T>(hop: Hop, call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw hopError(hop, err);
  }
}
