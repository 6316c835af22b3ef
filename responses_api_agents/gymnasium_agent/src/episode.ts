/**
 * One episode against a Gymnasium-style resources server (upstream's gymnasium_agent): `/reset`,
 * then model ↔ `/step` until the environment says terminated or truncated, or `max_steps` model
 * calls were made (then the rollout is truncated). Every step of the model's answer is sent as
 * `response`, with the row's other fields as metadata. The environment's `info.tool_outputs`
 * become `function_call_output` items and its observations user messages, appended to the
 * conversation the next model call sees and to the rollout's output (the model's own items are
 * kept as the model server returned them, token ids included).
 *
 * Failures are failures, never a reward: a reset or step the server could not do, a model call
 * that failed, or a step that took longer than `step_timeout_s` ends the rollout with an error
 * carrying its code (NG_ERR_ENV_RESET_FAILED, NG_ERR_ENV_STEP_FAILED, NG_ERR_TIMEOUT, …), which
 * the collector records.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { hopFailure, viaHop, type ServerClient, type ServerResponse } from '@nemo-gym/core/client';
import { HttpError, TimeoutError } from '@nemo-gym/core/errors';
import { addUsage, fullCreateParamsDump, fullResponseDump } from '@nemo-gym/core/openai';
import { EnvResetResponseSchema, EnvStepResponseSchema, STEP_KEY_FIELD, withServerTools, type EnvStepResponse, type Logger } from '@nemo-gym/core/server';

type Json = Record<string, unknown>;
type Cookies = Record<string, string>;

export type RewardAggregation = 'sum' | 'last' | 'max';

export interface EpisodeConfig {
  model_server: { name: string };
  resources_server: { name: string };
  max_steps: number;
  reward_aggregation: RewardAggregation;
  step_timeout_s: number | null;
}

export interface EpisodeOptions {
  /** A row without tools offers the model the resources server's (core's offersServerTools). */
  offerServerTools?: boolean;
}

export interface EpisodeResult {
  /** The verify-response shape: `responses_create_params`, `response`, `reward`, plus the episode's end. */
  answer: Json;
  cookies: Cookies;
}

interface Io {
  client: ServerClient;
  log: Logger;
  /** The inbound request's signal: cancels every call when our caller goes away. */
  signal: AbortSignal;
}

function aggregate(how: RewardAggregation, rewards: number[]): number {
  if (rewards.length === 0) return 0;
  if (how === 'last') return rewards[rewards.length - 1]!;
  if (how === 'max') return Math.max(...rewards);
  return rewards.reduce((a, b) => a + b, 0);
}

/** A user message item, as upstream's NeMoGymEasyInputMessage dumps it. */
function userMessage(content: string): Json {
  return { content, role: 'user', type: 'message' };
}

/** The parsed JSON of a 2xx answer, checked against `schema`; a body that does not fit is the server's fault (502). */
function parseAnswer<T>(res: ServerResponse, schema: z.ZodType<T>, what: string): T {
  const parsed = schema.safeParse(res.json());
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new HttpError(502, `${what} answered a body that is not what the Gymnasium protocol says: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

export async function runEpisode(row: Json, config: EpisodeConfig, io: Io, incoming: Cookies, options: EpisodeOptions = {}): Promise<EpisodeResult> {
  const resources = config.resources_server.name;
  const model = config.model_server.name;
  let envCookies: Cookies = { ...incoming };

  /** A call to the environment; with a timeout (step_timeout_s) that fails it as NG_ERR_TIMEOUT. */
  const envCall = async (path: string, body: unknown, what: string, idempotent = false): Promise<ServerResponse> => {
    const timeout = config.step_timeout_s === null ? undefined : AbortSignal.timeout(config.step_timeout_s * 1000);
    const signal = timeout ? AbortSignal.any([io.signal, timeout]) : io.signal;
    let res: ServerResponse;
    try {
      res = await viaHop('resources', io.client.post(resources, path, body, { cookies: envCookies, signal, ...(idempotent ? { requestClass: 'idempotent' as const } : {}) }));
    } catch (err) {
      if (timeout?.aborted && !io.signal.aborted) throw new TimeoutError(`${what} gave no answer within step_timeout_s = ${config.step_timeout_s} s; the rollout is recorded as a timeout`);
      throw err;
    }
    envCookies = { ...envCookies, ...res.cookies };
    if (!res.ok) throw hopFailure('resources', what, res);
    return res;
  };

  const resetRes = await envCall('/reset', row, `resources server \`${resources}\` /reset`);
  let closable = false;
  let result: EpisodeResult;
  try {
    const resetJson = resetRes.json<Json>();
    const resetInfo = resetJson && typeof resetJson === 'object' ? (resetJson.info as Json | undefined) : undefined;
    closable = resetInfo?.supports_explicit_close === true;
    const reset = parseAnswer(resetRes, EnvResetResponseSchema, `resources server \`${resources}\` /reset`);
    const keyed = reset.info.supports_step_idempotency === true;

    const params = { ...(await withServerTools(row.responses_create_params as Json, options.offerServerTools === true, io.client, resources, io.signal)) };
    delete params.stream;
    const input: unknown[] = typeof params.input === 'string' ? [userMessage(params.input)] : [...((params.input as unknown[]) ?? [])];
    if (reset.observation) input.push(userMessage(reset.observation));
    const base = { ...params, input };

    const outputs: Json[] = [];
    const rewards: number[] = [];
    let usage: Json | null = null;
    let modelCookies: Cookies = {};
    let last: Json | null = null;
    let end: EnvStepResponse | null = null;
    const episodeKey = randomUUID();

    for (let n = 1; n <= config.max_steps; n++) {
      const modelRes = await viaHop('model', io.client.post(model, '/v1/responses', { ...base, input: [...input, ...outputs] }, { cookies: modelCookies, signal: io.signal }));
      if (!modelRes.ok) throw hopFailure('model', `model server \`${model}\``, modelRes);
      modelCookies = { ...modelCookies, ...modelRes.cookies };
      const response = modelRes.json<Json>();
      if (!response || typeof response !== 'object' || !Array.isArray(response.output)) {
        throw new HttpError(502, `Received an invalid response from model server \`${model}\`: output: expected an array of output items`);
      }
      last = response;
      usage = addUsage(usage, response.usage);
      outputs.push(...(response.output as Json[]));

      const stepBody: Json = { ...row, response };
      if (keyed) stepBody[STEP_KEY_FIELD] = `${episodeKey}:${n}`;
      const what = `resources server \`${resources}\` /step (step ${n})`;
      const step = parseAnswer(await envCall('/step', stepBody, what, keyed), EnvStepResponseSchema, what);
      rewards.push(step.reward);
      end = step;
      if (step.terminated || step.truncated) break;
      const toolOutputs = step.info.tool_outputs;
      if (Array.isArray(toolOutputs)) {
        for (const t of toolOutputs as Json[]) {
          if (!t || typeof t.call_id !== 'string') throw new HttpError(502, `${what} answered info.tool_outputs with an entry without a call_id string`);
          outputs.push({ call_id: t.call_id, output: typeof t.output === 'string' ? t.output : JSON.stringify(t.output ?? null), type: 'function_call_output' });
        }
      }
      if (step.observation) outputs.push(userMessage(step.observation));
      if (n === config.max_steps) end = { ...step, truncated: true };
    }

    const response = fullResponseDump({ ...last!, output: outputs, usage: usage ?? last!.usage ?? null });
    const answer: Json = {
      responses_create_params: fullCreateParamsDump(base),
      response,
      reward: aggregate(config.reward_aggregation, rewards),
      terminated: end?.terminated ?? false,
      truncated: end?.truncated ?? true,
      info: end?.info ?? {},
      num_steps: rewards.length,
    };
    result = { answer, cookies: { ...envCookies, ...modelCookies } };
  } catch (err) {
    if (closable) {
      // The original failure is what the caller gets; a close that fails too is only logged.
      await envCall('/close', {}, `resources server \`${resources}\` /close`).catch((closeErr: unknown) => io.log.error(`closing the episode after a failed rollout failed too: ${String(closeErr)}`));
    }
    throw err;
  }
  if (closable) {
    try {
      await envCall('/close', {}, `resources server \`${resources}\` /close`);
    } catch (err) {
      const info = (result.answer.info as Json) ?? {};
      result.answer.info = { ...info, cleanup_warning: { operation: 'close', error_type: err instanceof Error ? err.name : typeof err, message: err instanceof Error ? err.message : String(err) } };
    }
  }
  return result;
}
