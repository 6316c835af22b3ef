/**
 * ai_sdk_agent: an AI SDK agent (`ai` with `@ai-sdk/openai`) as a NeMo Gym agent. The run is the
 * SDK's own tool loop — `generateText` with tools and a step limit — on the OpenAI provider's
 * Responses API model, whose base URL is this rollout's route on the model server
 * (`<model server>/ng-rollout/<id>/v1`), so every call is captured with its token ids. The tools
 * are the row's tools (`tool` + `jsonSchema`), each a `POST /<tool>` on the resources server in the
 * rollout's session. defineInProcessAgent does the rest.
 *
 * `ai` 6 and `@ai-sdk/openai` 3 are the last lines that run on Node 20 (`ai` 7 needs Node 22).
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, tool, type ModelMessage, type ToolSet } from 'ai';
import { defineInProcessAgent, startIfMain, type AgentTool } from '@nemo-gym/core/server';

/** Model calls of one run at most. */
const MAX_STEPS = 30;

function sdkTools(tools: readonly AgentTool[]): ToolSet {
  const set: ToolSet = {};
  for (const t of tools) {
    set[t.name] = tool({ description: t.description, inputSchema: jsonSchema(t.parameters), execute: (args: unknown) => t.call(args) });
  }
  return set;
}

/** The text of a message content (a string, or text parts). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (p !== null && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
}

/** The row's input as AI SDK messages (`developer` is given as `system`). */
function sdkMessages(items: Record<string, unknown>[]): ModelMessage[] {
  return items.map((i) => {
    const text = textOf(i.content);
    if (i.role === 'system' || i.role === 'developer') return { role: 'system', content: text };
    if (i.role === 'assistant') return { role: 'assistant', content: text };
    return { role: 'user', content: text };
  });
}

export const server = defineInProcessAgent({
  className: 'AiSdkAgent',
  agent: async (ctx) => {
    const openai = createOpenAI({ baseURL: ctx.modelBaseUrl, apiKey: ctx.apiKey });
    const p = ctx.params;
    const result = await generateText({
      model: openai.responses(ctx.model),
      ...(typeof p.instructions === 'string' ? { system: p.instructions } : {}),
      messages: sdkMessages(ctx.input),
      tools: sdkTools(ctx.tools),
      stopWhen: stepCountIs(MAX_STEPS),
      abortSignal: ctx.signal,
      maxRetries: 0,
      ...(typeof p.temperature === 'number' ? { temperature: p.temperature } : {}),
      ...(typeof p.top_p === 'number' ? { topP: p.top_p } : {}),
      ...(typeof p.max_output_tokens === 'number' ? { maxOutputTokens: p.max_output_tokens } : {}),
      // Send the whole history on each call: with `store` on, the provider refers to earlier items by id.
      providerOptions: { openai: { store: false, ...(typeof p.parallel_tool_calls === 'boolean' ? { parallelToolCalls: p.parallel_tool_calls } : {}) } },
    });
    return result.text;
  },
});

startIfMain(import.meta.url, server);
