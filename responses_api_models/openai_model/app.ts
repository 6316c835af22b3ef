/**
 * OpenAI model server: passes `/v1/responses` and `/v1/chat/completions` through to any
 * OpenAI-compatible endpoint. Like upstream, it posts JSON with a bearer key over its own
 * keep-alive pool (a thin client, not the SDK); the model named in the request is replaced by
 * the configured `openai_model`.
 */
import { Agent } from 'undici';
import { z } from 'zod';
import {
  ChatCompletionCreateParamsSchema,
  ChatCompletionSchema,
  ModelServerConfigSchema,
  ResponseCreateParamsSchema,
  ResponseSchema,
  backendErrorAnswer,
  checkBackendAnswer,
  defineModelServer,
  fullResponseDump,
  postJson,
  startIfMain,
} from '@nemo-gym/core';

export const OpenAIModelConfigSchema = ModelServerConfigSchema.extend({
  openai_base_url: z.string().min(1),
  openai_api_key: z.string(),
  openai_model: z.string().min(1),
  /** Retries for 408/409/429/5xx answers and refused or reset connections. */
  max_retries: z.number().int().min(0).default(2),
  /** Longest wait for one backend answer. */
  request_timeout_s: z.number().positive().default(3600),
  /** Sockets to the backend (requests beyond this wait for a free one). */
  max_connections_per_host: z.number().int().positive().default(1024),
});

/** What the OpenAI SDKs retry: timeouts aside, 408, 409, 429 and every 5xx. */
const RETRY_STATUSES: ReadonlySet<number> = new Set([408, 409, 429, ...Array.from({ length: 100 }, (_, i) => 500 + i)]);

export const server = defineModelServer({
  className: 'SimpleModelServer',
  configSchema: OpenAIModelConfigSchema,
  setup: (ctx) => {
    const cfg = ctx.config;
    const timeoutMs = cfg.request_timeout_s * 1000;
    const base = cfg.openai_base_url.replace(/\/+$/, '');
    const dispatcher = new Agent({
      connections: cfg.max_connections_per_host,
      keepAliveTimeout: 15_000,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connect: { keepAlive: true, keepAliveInitialDelay: 60_000 },
    });
    const call = (path: string, body: Record<string, unknown>) =>
      postJson(`${base}${path}`, { ...body, model: cfg.openai_model }, {
        apiKey: cfg.openai_api_key,
        timeoutMs,
        maxAttempts: cfg.max_retries + 1,
        retryStatuses: RETRY_STATUSES,
        retryConnectionErrors: true,
        keepServerErrorStatus: true,
        dispatcher,
        log: (msg) => ctx.log.warn(msg),
      });
    return { base, dispatcher, call };
  },
  close: async (ctx) => {
    await ctx.state.dispatcher.close();
  },
  responses: {
    body: ResponseCreateParamsSchema,
    handler: async (body, ctx) => {
      const url = `${ctx.state.base}/responses`;
      let answer: unknown;
      try {
        answer = await ctx.state.call('/responses', body);
      } catch (err) {
        return backendErrorAnswer(err, url, ctx.config.openai_api_key);
      }
      return fullResponseDump(checkBackendAnswer(ResponseSchema, answer, 'Response', url));
    },
  },
  chatCompletions: {
    body: ChatCompletionCreateParamsSchema,
    handler: async (body, ctx) => {
      const url = `${ctx.state.base}/chat/completions`;
      let answer: unknown;
      try {
        answer = await ctx.state.call('/chat/completions', body);
      } catch (err) {
        return backendErrorAnswer(err, url, ctx.config.openai_api_key);
      }
      return checkBackendAnswer(ChatCompletionSchema, answer, 'chat completion', url);
    },
  },
});

startIfMain(import.meta.url, server);
