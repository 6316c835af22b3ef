/**
 * gymnasium_agent: runs Gymnasium-style resources servers (reset/step). `/run` is one episode:
 * `/reset`, then model ↔ `/step` until terminated, truncated or `max_steps`; the answer is the
 * rollout row (`responses_create_params`, `response`, `reward` aggregated over the steps, and
 * `terminated`, `truncated`, `info` of the last step). `/v1/responses` passes one model call on.
 */
import { z } from 'zod';
import { hopFailure, viaHop } from '@nemo-gym/core/client';
import { ModelServerRefSchema, ResourcesServerRefSchema } from '@nemo-gym/core/config';
import { ResponseCreateParamsSchema } from '@nemo-gym/core/openai';
import { AgentServerConfigSchema, BaseRunRequestSchema, defineAgent, offersServerTools, RawJson, startIfMain } from '@nemo-gym/core/server';
import { runEpisode } from './src/episode.js';

export const GymnasiumAgentConfigSchema = AgentServerConfigSchema.extend({
  resources_server: ResourcesServerRefSchema,
  model_server: ModelServerRefSchema,
  /** Model calls per episode at most; an episode still open then is truncated. */
  max_steps: z.number().int().min(1).default(10),
  /** How the per-step rewards become the rollout's reward. */
  reward_aggregation: z.enum(['sum', 'last', 'max']).default('sum'),
  /** Seconds each /reset, /step and /close may take (null: the client's HTTP timeouts). */
  step_timeout_s: z.number().positive().nullable().default(null),
  /** A row without tools: the model is offered the resources server's (GET /ng_tools); unset: the global setting of that name. */
  offer_server_tools: z.boolean().nullable().optional(),
});

export const server = defineAgent({
  className: 'GymnasiumAgent',
  configSchema: GymnasiumAgentConfigSchema,
  responses: {
    body: ResponseCreateParamsSchema,
    handler: async (body, ctx) => {
      const model = ctx.config.model_server.name;
      const res = await viaHop('model', ctx.client.post(model, '/v1/responses', { ...body, stream: false }, { cookies: ctx.cookies, signal: ctx.signal }));
      if (!res.ok) throw hopFailure('model', `model server \`${model}\``, res);
      ctx.setCookies(res.cookies);
      return new RawJson(res.text);
    },
  },
  run: {
    body: BaseRunRequestSchema.loose(),
    handler: async (body, ctx) => {
      const { answer, cookies } = await runEpisode(body as Record<string, unknown>, ctx.config, { client: ctx.client, log: ctx.log, signal: ctx.signal }, ctx.cookies, { offerServerTools: offersServerTools(ctx.config, ctx.globalConfig) });
      ctx.setCookies(cookies);
      return answer;
    },
  },
});

startIfMain(import.meta.url, server);
