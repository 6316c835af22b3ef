/**
 * vLLM model server: the Responses API (`/v1/responses`) and Chat Completions
 * (`/v1/chat/completions`) on top of one or more vLLM OpenAI-compatible endpoints; `stream: true`
 * streams from vLLM.
 */
import { ChatCompletionCreateParamsSchema, ResponseCreateParamsSchema } from '@nemo-gym/core/openai';
import { ModelServerConfigSchema, defineModelServer, startIfMain } from '@nemo-gym/core/server';
import { resolveVLLMConfig, VLLMModelConfigFields } from './src/config.js';
import { VLLMBackend } from './src/vllm.js';

export const VLLMModelConfigSchema = ModelServerConfigSchema.extend(VLLMModelConfigFields);

export const server = defineModelServer({
  className: 'VLLMModel',
  configSchema: VLLMModelConfigSchema,
  setup: (ctx) => new VLLMBackend(resolveVLLMConfig(ctx.config), ctx.log),
  responses: {
    body: ResponseCreateParamsSchema,
    handler: (body, ctx) => (body.stream ? ctx.state.responsesStream(body, ctx.sessionId, ctx.capture) : ctx.state.responses(body, ctx.sessionId, ctx.signal, ctx.capture)),
  },
  chatCompletions: {
    body: ChatCompletionCreateParamsSchema,
    handler: (body, ctx) => (body.stream ? ctx.state.chatCompletionsStream(body, ctx.sessionId, ctx.capture) : ctx.state.chatCompletions(body, ctx.sessionId, ctx.signal, false, ctx.capture)),
  },
  countTokens: (params, ctx) => ctx.state.countTokens(params, ctx.sessionId, ctx.signal),
  close: (ctx) => ctx.state.close(),
  models: (ctx) => ctx.state.models(),
});

startIfMain(import.meta.url, server);
