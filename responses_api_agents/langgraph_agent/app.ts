/**
 * langgraph_agent: a LangGraph.js agent as a NeMo Gym agent. The graph is LangGraph's prebuilt
 * ReAct agent (`createReactAgent`: a model node and a tool node in a loop) over `ChatOpenAI` from
 * `@langchain/openai`, built per rollout as a user of the library builds it. The model talks to this
 * rollout's route on the model server (`<model server>/ng-rollout/<id>/v1`, Responses API), so every
 * call is captured with its token ids; the tools are the row's tools, each a `POST /<tool>` on the
 * resources server in the rollout's session. defineInProcessAgent does the rest.
 */
import { tool, type StructuredToolInterface } from '@langchain/core/tools';
import type { BaseMessageLike } from '@langchain/core/messages';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { defineInProcessAgent, startIfMain, type AgentTool } from '@nemo-gym/core/server';

/** Graph steps of one run at most (a model turn and its tool node are two); past it LangGraph throws GraphRecursionError. */
const RECURSION_LIMIT = 60;

/** A row tool as a LangChain tool: its JSON Schema as the schema, the call posted to the resources server. */
function langchainTool(t: AgentTool): StructuredToolInterface {
  return tool((args: unknown) => t.call(args), { name: t.name, description: t.description, schema: t.parameters }) as unknown as StructuredToolInterface;
}

/** The row's input as LangChain message-likes (`developer` is given as `system`). */
function langchainMessages(items: Record<string, unknown>[]): BaseMessageLike[] {
  return items.map((i) => ({ role: i.role === 'developer' ? 'system' : String(i.role), content: textOf(i.content) }) as BaseMessageLike);
}

/** The text of a message content (a string, or text parts). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (p !== null && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
}

export const server = defineInProcessAgent({
  className: 'LangGraphAgent',
  agent: async (ctx) => {
    const p = ctx.params;
    const llm = new ChatOpenAI({
      model: ctx.model,
      apiKey: ctx.apiKey,
      configuration: { baseURL: ctx.modelBaseUrl },
      useResponsesApi: true,
      maxRetries: 0,
      ...(typeof p.temperature === 'number' ? { temperature: p.temperature } : {}),
      ...(typeof p.top_p === 'number' ? { topP: p.top_p } : {}),
      ...(typeof p.max_output_tokens === 'number' ? { maxTokens: p.max_output_tokens } : {}),
    });
    const graph = createReactAgent({ llm, tools: ctx.tools.map(langchainTool), ...(typeof p.instructions === 'string' ? { prompt: p.instructions } : {}) });
    const state = await graph.invoke({ messages: langchainMessages(ctx.input) }, { signal: ctx.signal, recursionLimit: RECURSION_LIMIT });
    const last = state.messages.at(-1);
    return last ? textOf(last.content) : '';
  },
});

startIfMain(import.meta.url, server);
