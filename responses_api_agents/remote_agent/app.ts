/**
 * remote_agent: a thin proxy to an agent the user hosts as a service with one OpenAI-compatible
 * endpoint, `POST <agent_base_url>/v1/responses`. `/run` is one rollout: seed the resources
 * session, run the remote loop (src/loop.ts: the service decides, Gym runs the environment's tools
 * it asks for), verify. Cookies, the resources server and the row's other fields stay here.
 * Every failure of the service (down, an HTTP error, a hang, a malformed answer) is a coded error
 * answer, which the collector records as a failure: never a crash, never a reward.
 */
import pLimit from 'p-limit';
import { z } from 'zod';
import { ResourcesServerRefSchema, type ConfigDict } from '@nemo-gym/core/config';
import { HttpError } from '@nemo-gym/core/errors';
import { fullCreateParamsDump, ResponseCreateParamsSchema, responseEvents } from '@nemo-gym/core/openai';
import { AgentServerConfigSchema, BaseRunRequestSchema, callWithin, defineAgent, offersServerTools, seedRollout, SseReply, startIfMain, verifyAnswer, verifyRollout } from '@nemo-gym/core/server';
import { runRemoteLoop, type RemoteLoopOptions } from './src/loop.js';

/**
 * `agent_base_url` as the loop uses it (no trailing slash), or the reason it cannot be used:
 * `/v1/responses` is appended to it, so a query or fragment would swallow the path, and
 * credentials in it would end up in messages (the key goes in `agent_api_key`).
 */
export function agentBaseUrl(value: string): { url: string } | { problem: string } {
  const url = value.trim().replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { problem: 'expected an absolute http:// or https:// URL such as http://127.0.0.1:9000' };
  }
  if (parsed.username || parsed.password) return { problem: 'must not carry credentials (user:password@host); put the key in agent_api_key, which is sent as a Bearer token' };
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { problem: `expected an http:// or https:// URL, got ${parsed.protocol}//…` };
  if (url.includes('?') || url.includes('#')) return { problem: 'must not carry a query string or a fragment (/v1/responses is appended to it); put a key in agent_api_key' };
  return { url };
}

const seconds = z.number().positive();

export const RemoteAgentConfigSchema = AgentServerConfigSchema.extend({
  resources_server: ResourcesServerRefSchema,
  /** The service's base URL; the agent POSTs to `<agent_base_url>/v1/responses`. */
  agent_base_url: z.string().transform((value, ctx) => {
    const r = agentBaseUrl(value);
    if ('problem' in r) {
      ctx.addIssue({ code: 'custom', message: r.problem });
      return z.NEVER;
    }
    return r.url;
  }),
  /** Sent as `Authorization: Bearer <key>` when set (empty: none). A secret: masked in every dump, log and error. */
  agent_api_key: z.string().nullable().default(null),
  /** Calls to the service per rollout at most (default 100; upstream: unbounded). */
  max_steps: z.number().int().positive().nullable().optional(),
  /** Seconds one call to the service may take. */
  remote_responses_timeout_secs: seconds.default(1800),
  /** Seconds a whole rollout (/run: seed_session, every call and tool, verify) may take, from when it holds a slot; null: no bound of its own. */
  run_timeout_secs: seconds.nullable().default(2100),
  /** Rollouts (/run) in flight at once against the service; more wait for a slot. null: no limit here. */
  concurrency: z.number().int().positive().nullable().default(32),
  /** A row without tools: the service's requests carry the resources server's (GET /ng_tools); unset: the global setting of that name. */
  offer_server_tools: z.boolean().nullable().optional(),
});
export type RemoteAgentConfig = z.output<typeof RemoteAgentConfigSchema>;

function loopOptions(config: RemoteAgentConfig, globalConfig: ConfigDict): RemoteLoopOptions {
  return {
    target: { url: `${config.agent_base_url}/v1/responses`, apiKey: config.agent_api_key || null, timeoutMs: config.remote_responses_timeout_secs * 1000 },
    resources: config.resources_server.name,
    maxSteps: config.max_steps,
    offerServerTools: offersServerTools(config, globalConfig),
  };
}

export const server = defineAgent({
  className: 'RemoteAgent',
  configSchema: RemoteAgentConfigSchema,
  setup: ({ config }) => ({ slots: config.concurrency === null ? null : pLimit(config.concurrency) }),
  responses: {
    body: ResponseCreateParamsSchema,
    handler: async (body, ctx) => {
      // The service is always asked without streaming; `stream: true` streams the loop's finished answer.
      const { stream, ...params } = body;
      const result = await runRemoteLoop(params, loopOptions(ctx.config, ctx.globalConfig), ctx.client, ctx.cookies, ctx.signal);
      ctx.setCookies(result.resourcesCookies);
      return stream ? new SseReply(responseEvents(result.response)) : result.response;
    },
  },
  run: {
    body: BaseRunRequestSchema.loose(),
    handler: async (body, ctx) => {
      const config = ctx.config;
      const { name: resources } = config.resources_server;
      const timeoutS = config.run_timeout_secs;
      // The rollout's clock starts once it holds a slot: waiting for one is not the service's time.
      const rollout = () => callWithin(
        timeoutS === null ? null : timeoutS * 1000,
        ctx.signal,
        async (signal) => {
          const row = { ...body, responses_create_params: fullCreateParamsDump(body.responses_create_params) };
          const rowText = JSON.stringify(row);
          const cookies = await seedRollout(ctx.client, resources, rowText, ctx.cookies, signal);
          // The service gets the task's create params only: no other field of the row.
          const { stream: _stream, ...params } = body.responses_create_params;
          const loop = await runRemoteLoop(params, loopOptions(config, ctx.globalConfig), ctx.client, cookies, signal);
          const verify = await verifyRollout(ctx.client, resources, row, rowText, loop.response, loop.resourcesCookies, signal);
          ctx.setCookies(loop.resourcesCookies);
          return verifyAnswer(verify);
        },
        () =>
          new HttpError(
            504,
            `remote_agent: the rollout (seed_session, the calls to the service at ${config.agent_base_url} and the tools they asked for, verify) took longer than run_timeout_secs = ${timeoutS} s and was cancelled; raise run_timeout_secs, or lower max_steps`,
            undefined,
            'NG_ERR_TIMEOUT',
          ),
      );
      const slots = ctx.state.slots;
      return slots === null ? rollout() : slots(rollout);
    },
  },
});

startIfMain(import.meta.url, server);
