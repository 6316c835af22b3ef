/**
 * OpenAI model server: passes `/v1/responses` and `/v1/chat/completions` through to any
 * OpenAI-compatible endpoint with the official `openai` client. The model named in the request
 * is replaced by the configured `openai_model`.
 */
import OpenAI from 'openai';
import { z } from 'zod';
import {
  ChatCompletionCreateParamsSchema,
  ChatCompletionSchema,
  ModelServerConfigSchema,
  ResponseCreateParamsSchema,
  ResponseSchema,
  checkBackendAnswer,
  createPooledFetch,
  backendErrorAnswer,
  defineModelServer,
  fullResponseDump,
  startIfMain,
} from '@nemo-gym/core';


export const OpenAIModelConfigSchema = ModelServerConfigSchema.extend({
  openai_base_url: z.string().min(1),
  openai_api_key: z.string(),
  openai_model: z.string().min(1),
  /** Retries of the client for 408/409/429/5xx answers and connection errors. */
  max_retries: z.number().int().min(0).default(2),
  /** Longest wait for one backend answer. */
  request_timeout_s: z.number().positive().default(3600),
  /** Sockets to the backend (requests beyond this wait for a free one). */
  max_connections_per_host: z.number().int().positive().default(1024),
});

export const server = defineModelServer({
  className: 'SimpleModelServer',
  configSchema: OpenAIModelConfigSchema,
  setup: (ctx) => ({
    client: new OpenAI({
      baseURL: ctx.config.openai_base_url,
      apiKey: ctx.config.openai_api_key,
      maxRetries: ctx.config.max_retries,
      timeout: ctx.config.request_timeout_s * 1000,
      fetch: createPooledFetch({ connections: ctx.config.max_connections_per_host, headersTimeoutMs: ctx.config.request_timeout_s * 1000, bodyTimeoutMs: ctx.config.request_timeout_s * 1000 }),
    }),
  }),
  responses: {
    body: ResponseCreateParamsSchema,
    handler: async (body, ctx) => {
      const url = `${ctx.config.openai_base_url.replace(/\/+$/, '')}/responses`;
      let answer: unknown;
      try {
        // The raw body, not the client's parsed object (which gains a computed `output_text`).
        answer = await readJson(await ctx.state.client.responses.create({ ...body, model: ctx.config.openai_model } as never).asResponse());
      } catch (err) {
        return backendErrorAnswer(err, url, ctx.config.openai_api_key);
      }
      return fullResponseDump(checkBackendAnswer(ResponseSchema, answer, 'Response', url));
    },
  },
  chatCompletions: {
    body: ChatCompletionCreateParamsSchema,
    handler: async (body, ctx) => {
      const url = `${ctx.config.openai_base_url.replace(/\/+$/, '')}/chat/completions`;
      let answer: unknown;
      try {
        answer = await readJson(await ctx.state.client.chat.completions.create({ ...body, model: ctx.config.openai_model } as never).asResponse());
      } catch (err) {
        return backendErrorAnswer(err, url, ctx.config.openai_api_key);
      }
      return checkBackendAnswer(ChatCompletionSchema, answer, 'chat completion', url);
    },
  },
});

/** Body of a successful backend answer as JSON (a SyntaxError for anything else). */
async function readJson(res: Response): Promise<unknown> {
  return JSON.parse(await res.text());
}

startIfMain(import.meta.url, server);
