/**
 * simple_agent: upstream's generic agent. `/v1/responses` runs the tool-calling loop;
 * `/run` is one whole rollout: seed the resources session, run the loop, verify.
 * Cookies are forwarded so seed, tools and verify share one resources-server session and
 * every model call shares one model session.
 */
import { z } from 'zod';
import { hopFailure, viaHop } from '@nemo-gym/core/client';
import { ModelServerRefSchema, ResourcesServerRefSchema } from '@nemo-gym/core/config';
import { fullCreateParamsDump, ResponseCreateParamsSchema, responseEvents } from '@nemo-gym/core/openai';
import { AgentServerConfigSchema, BaseRunRequestSchema, defineAgent, RawJson, SseReply, startIfMain } from '@nemo-gym/core/server';
import { runAgentLoop } from './src/loop.js';

export const SimpleAgentConfigSchema = AgentServerConfigSchema.extend({
  resources_server: ResourcesServerRefSchema,
  model_server: ModelServerRefSchema,
  max_steps: z.number().int().positive().nullable().optional(),
});

export const server = defineAgent({
  className: 'SimpleAgent',
  configSchema: SimpleAgentConfigSchema,
  responses: {
    body: ResponseCreateParamsSchema,
    handler: async (body, ctx) => {
      // The model calls of the loop are never streamed; `stream: true` streams the loop's finished answer.
      const { stream, ...params } = body;
      const result = await runAgentLoop(params, ctx.config, ctx.client, ctx.cookies, ctx.signal);
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
      const seed = await ctx.client.post(resources, '/seed_session', rowText, { cookies: ctx.cookies, signal });
      if (!seed.ok) throw hopFailure('resources', `resources server \`${resources}\` /seed_session`, seed);
      const cookies = { ...ctx.cookies, ...seed.cookies };
      // Collection keeps its non-streaming path, whatever the row asks for.
      const { stream: _stream, ...params } = body.responses_create_params;
      const loop = await runAgentLoop(params, ctx.config, ctx.client, cookies, signal);
      const verifyBody = 'response' in row ? JSON.stringify({ ...row, response: loop.response }) : `${rowText.slice(0, -1)},"response":${JSON.stringify(loop.response)}}`;
      const verify = await viaHop('verify', ctx.client.post(resources, '/verify', verifyBody, { cookies: loop.resourcesCookies, signal }));
      if (!verify.ok) throw hopFailure('verify', `resources server \`${resources}\` /verify`, verify);
      ctx.setCookies({ ...loop.resourcesCookies, ...loop.modelCookies });
      // A JSON answer is passed on byte for byte (every extra field, numbers as the server wrote them).
      const type = verify.headers['content-type'];
      if (typeof type === 'string' && type.startsWith('application/json')) return new RawJson(verify.text);
      return verify.json();
    },
  },
});

startIfMain(import.meta.url, server);
