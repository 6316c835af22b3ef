/**
 * The one way a resources server asks a judge model: POST `/v1/responses` to a model server of the
 * deployment, cancelled with the verify request that asked, and answered with a checked Response.
 * Anything else (an HTTP error, a body that is not a Response) is a 502 naming the judge server,
 * so a broken judge is an infrastructure failure and never a reward. {@link askJudge} keeps the
 * code of what failed behind the judge (NG_ERR_MODEL_UNREACHABLE, NG_ERR_MODEL_TIMEOUT).
 *
 * A verifier asks through {@link askJudgeForVerdict}: every way the judge can fail to give a
 * verdict (an HTTP error, a timeout, an unreachable server, and, with {@link verdictOf} finding
 * neither label, an answer with no verdict) becomes one {@link judgeFailed} error, code
 * NG_ERR_JUDGE_FAILED, which the collector records as a `judge_failed` rollout, apart from a
 * judged-wrong answer (reward 0). `unparseable_verdict_is_wrong` keeps the anchor's (upstream
 * 818984b8e) scoring of an answer without a verdict as wrong, where recorded rewards depend on it.
 */
import type { ServerClient } from '../client/client.js';
import { compiled } from '../compiled-schema.js';
import { viaHop } from '../client/relay.js';
import { answerCode, describeError, HttpError, NgError } from '../errors.js';
import { ResponseSchema, type NeMoGymResponse } from './schemas.js';

export async function askJudge(client: ServerClient, serverName: string, params: object, signal?: AbortSignal): Promise<NeMoGymResponse> {
  const res = await viaHop('model', client.post(serverName, '/v1/responses', params, signal ? { signal } : {}));
  let body: unknown;
  try {
    body = res.json();
  } catch {
    body = undefined;
  }
  const parsed = compiled(ResponseSchema).safeParse(body);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new HttpError(
      502,
      `judge model server \`${serverName}\` answered /v1/responses with HTTP ${res.status} and a body that is not a Response (${issues}); check the judge_model_server config and that server's logs`,
      undefined,
      // What failed behind the judge (an unreachable backend, a timeout) is passed on by code.
      answerCode(res.text),
    );
  }
  return parsed.data;
}

/** The error of a judge that gave no verdict: 502, NG_ERR_JUDGE_FAILED; `why` says what happened. */
export function judgeFailed(why: string): HttpError {
  return new HttpError(502, why, undefined, 'NG_ERR_JUDGE_FAILED');
}

/**
 * {@link askJudge}, with every failure of the judge (an error answer, a timeout, an unreachable
 * server) raised as {@link judgeFailed}, naming the code it had. A verify request that was cancelled
 * stays cancelled (its error is raised as it is).
 */
export async function askJudgeForVerdict(client: ServerClient, serverName: string, params: object, signal?: AbortSignal): Promise<NeMoGymResponse> {
  try {
    return await askJudge(client, serverName, params, signal);
  } catch (err) {
    if (signal?.aborted || !(err instanceof NgError) || err.code === 'NG_ERR_CLIENT_GONE') throw err;
    const code = err.code === 'NG_ERR_HTTP' ? '' : ` (${err.code})`;
    throw judgeFailed(`the judge gave no verdict${code}: ${err instanceof HttpError && typeof err.detail === 'string' ? err.detail : describeError(err)}`);
  }
}

/**
 * The verdict in a judge's text: true when `yes` comes first, false when `no` comes first, null when
 * neither label is there (no verdict: a judge failure, unless the server scores it as wrong).
 */
export function verdictOf(text: string, yes: string, no: string): boolean | null {
  const y = text.indexOf(yes);
  const n = text.indexOf(no);
  if (y < 0 && n < 0) return null;
  return y >= 0 && (n < 0 || y < n);
}

/** The error for a judge answer with neither label (the start of the answer is quoted). */
export function noVerdict(serverName: string, labels: readonly string[], text: string): HttpError {
  const shown = text.length > 300 ? `${text.slice(0, 300)}…` : text;
  return judgeFailed(
    `judge model server \`${serverName}\` answered without a verdict (none of ${labels.join(', ')}): ${JSON.stringify(shown)}; ` +
      'set unparseable_verdict_is_wrong: true to score such answers 0 as upstream 818984b8e did',
  );
}
