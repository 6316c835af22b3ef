/**
 * The one way a resources server asks a judge model: POST `/v1/responses` to a model server of the
 * deployment, cancelled with the verify request that asked, and answered with a checked Response.
 * Anything else (an HTTP error, a body that is not a Response) is a 502 naming the judge server,
 * so a broken judge is an infrastructure failure and never a reward.
 */
import type { ServerClient } from '../client/client.js';
import { compiled } from '../compiled-schema.js';
import { HttpError } from '../errors.js';
import { ResponseSchema, type NeMoGymResponse } from './schemas.js';

export async function askJudge(client: ServerClient, serverName: string, params: object, signal?: AbortSignal): Promise<NeMoGymResponse> {
  const res = await client.post(serverName, '/v1/responses', params, signal ? { signal } : {});
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
    );
  }
  return parsed.data;
}
