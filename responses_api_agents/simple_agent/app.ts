/**
 * simple_agent: upstream's generic agent. `/v1/responses` runs the tool-calling loop;
 * `/run` is one whole rollout: seed the resources session, run the loop, verify.
 * Cookies are forwarded so seed, tools and verify share one resources-server session and
 * every model call shares one model session.
 */
import { z } from 'zod';
import { ModelServerRefSchema, ResourcesServerRefSchema } from '@nemo-gym/core/config';
import { fullCreateParamsDump, ResponseCreateParamsSchema, responseEvents } from '@nemo-gym/core/openai';
import { AgentServerConfigSchema, BaseRunRequestSchema, defineAgent, offersServerTools, runToolLoop, seedRollout, SseReply, startIfMain, verifyAnswer, verifyRollout } from '@nemo-gym/core/server';

export const SimpleAgentConfigSchema = AgentServerConfigSchema.extend({
  resources_server: ResourcesServerRefSchema,
  model_server: ModelServerRefSchema,
  max_steps: z.number().int().positive().nullable().optional(),
  /** Offer the resources server's tools when a row lists none (default: the global setting, false). */
  offer_server_tools: z.boolean().nullable().optional(),
});

export const server = defineAgent({
  className: 'SimpleAgent',
  configSchema: SimpleAgentConfigSchema,
  responses: {
    body: ResponseCreateParamsSchema,
    handler: async (body, ctx) => {
      // The model calls of the loop are never streamed; `stream: true` streams the loop's finished answer.
      const { stream, ...params } = body;
      const result = await runToolLoop(params, ctx.config, ctx.client, ctx.cookies, ctx.signal, { offerServerTools: offersServerTools(ctx.config, ctx.globalConfig) });
      ctx.setCookies({ ...result.resourcesCookies, ...result.modelCookies });
      return stream ? new SseReply(responseEvents(result.response)) : result.response;
    },
  },
  run: {
    body: BaseRunRequestSchema.loose(),
    handler: async (body, ctx) => {
      const { name: resources } = ctx.config.resources_server;
      const row = { ...body, responses_create_params: fullCreateParamsDump(body.responses_create_params) };
      // The row goes to /seed_session and again, with the response added at the end, to /verify:
      // it is serialized once.
      const rowText = JSON.stringify(row);
      const signal = ctx.signal;
      const cookies = await seedRollout(ctx.client, resources, rowText, ctx.cookies, signal);
      // Collection keeps its non-streaming path, whatever the row asks for.
      const { stream: _stream, ...params } = body.responses_create_params;
      const loop = await runToolLoop(params, ctx.config, ctx.client, cookies, signal, { offerServerTools: offersServerTools(ctx.config, ctx.globalConfig) });
      const verify = await verifyRollout(ctx.client, resources, row, rowText, loop.response, loop.resourcesCookies, signal);
      ctx.setCookies({ ...loop.resourcesCookies, ...loop.modelCookies });
      return verifyAnswer(verify);
    },
  },
});

startIfMain(import.meta.url, server);
