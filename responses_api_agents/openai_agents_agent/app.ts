/**
 * openai_agents_agent: an OpenAI Agents SDK agent (`@openai/agents`) as a NeMo Gym agent. The
 * agent is built per rollout exactly as a user of the SDK builds one — `new Agent`, `tool()`,
 * `run()` — and runs the SDK's own tool-calling loop. Its model is the SDK's Responses API model
 * on an `openai` client whose base URL is this rollout's route on the model server
 * (`<model server>/ng-rollout/<id>/v1`), so every call is captured with its token ids; its tools are
 * the row's tools, each a `POST /<tool>` on the resources server in the rollout's session.
 * defineInProcessAgent does the rest: seed, verify, the response rebuilt from the capture.
 */
import OpenAI from 'openai';
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool, type AgentInputItem, type FunctionTool, type ModelSettings } from '@openai/agents';
import { defineInProcessAgent, startIfMain, type AgentTool } from '@nemo-gym/core/server';

// Traces would be sent to OpenAI's tracing endpoint: rollouts stay on this machine.
setTracingDisabled(true);

/** Model turns of one run at most (the SDK's MaxTurnsExceeded ends the rollout as a recorded failure). */
const MAX_TURNS = 30;

/** A row tool as an SDK function tool: the SDK's loop calls `execute`, which posts to the resources server. */
function sdkTool(t: AgentTool): FunctionTool {
  const execute = (args: unknown) => t.call(args);
  // The row's JSON Schema goes to the model as it is; the SDK parses the arguments as JSON.
  const parameters = t.parameters as Parameters<typeof tool>[0]['parameters'];
  return tool({ name: t.name, description: t.description, parameters, strict: t.strict, execute } as Parameters<typeof tool>[0]) as FunctionTool;
}

/**
 * The row's input as SDK input items. The SDK knows system, user and assistant messages; a
 * `developer` message is given as a system message (chat templates render both the same way).
 */
function sdkInput(items: Record<string, unknown>[]): AgentInputItem[] {
  return items.map((i) => (i.role === 'developer' ? { ...i, role: 'system' } : i) as unknown as AgentInputItem);
}

export const server = defineInProcessAgent({
  className: 'OpenAIAgentsAgent',
  agent: async (ctx) => {
    const client = new OpenAI({ baseURL: ctx.modelBaseUrl, apiKey: ctx.apiKey, maxRetries: 0 });
    const p = ctx.params;
    const modelSettings: ModelSettings = {
      ...(typeof p.temperature === 'number' ? { temperature: p.temperature } : {}),
      ...(typeof p.top_p === 'number' ? { topP: p.top_p } : {}),
      ...(typeof p.max_output_tokens === 'number' ? { maxTokens: p.max_output_tokens } : {}),
      ...(typeof p.parallel_tool_calls === 'boolean' ? { parallelToolCalls: p.parallel_tool_calls } : {}),
    };
    const agent = new Agent({
      name: 'nemo_gym_agent',
      instructions: typeof p.instructions === 'string' ? p.instructions : undefined,
      model: new OpenAIResponsesModel(client, ctx.model),
      modelSettings,
      tools: ctx.tools.map(sdkTool),
    });
    const result = await run(agent, sdkInput(ctx.input), { signal: ctx.signal, maxTurns: MAX_TURNS });
    return typeof result.finalOutput === 'string' ? result.finalOutput : JSON.stringify(result.finalOutput ?? '');
  },
});

startIfMain(import.meta.url, server);
