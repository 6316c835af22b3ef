/**
 * The one way a resources server asks a judge model: POST `/v1/responses` to a model server of the
 * deployment, cancelled with the verify request that asked, and answered with a checked Response.
 * Anything else (an HTTP error, a body that is not a Response) is a 502 naming the judge server,
 * so a broken judge is an infrastructure failure and never a reward. The judge's failure keeps its
 * code (NG_ERR_MODEL_UNREACHABLE, NG_ERR_MODEL_TIMEOUT) in the verify answer.
 */
import type { ServerClient } from '../client/client.js';
import { compiled } from '../compiled-schema.js';
import { viaHop } from '../client/relay.js';
import { answerCode, HttpError } from '../errors.js';
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
