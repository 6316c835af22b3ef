/**
 * Rollout rows from tau2 tasks: the agent's system prompt (tau2's LLMAgent prompt around the
 * domain policy), the retail tools as Responses function tools, and the task fields the server and
 * the user simulator read (`task_id`, `initial_state`, `evaluation_criteria`, `user_scenario`,
 * `user_instructions` = `str(user_scenario)`, which tau2 hands its user simulator, and with tau2's
 * simulation guidelines `user_system_prompt`, the simulator's whole system prompt).
 */
import { TOOL_SCHEMAS } from './schemas.js';
import { userScenarioText, type Task } from './task.js';

/** tau2's `AGENT_INSTRUCTION` (tau2.agent.llm_agent). */
export const AGENT_INSTRUCTION = `You are a customer service agent that helps the user according to the <policy> provided below.
In each turn you can either:
- Send a message to the user.
- Make a tool call.
You cannot do both at the same time.

Try to be helpful and always follow the policy. Always make sure you generate valid JSON only.`;

/** The first message of every tau2 conversation, said by the agent before the user speaks. */
export const FIRST_AGENT_MESSAGE = 'Hi! How can I help you today?';

/** tau2's LLMAgent system prompt for a domain policy. */
export function agentSystemPrompt(policy: string): string {
  return `<instructions>\n${AGENT_INSTRUCTION}\n</instructions>\n<policy>\n${policy}\n</policy>`;
}

/** The retail tools as Responses API function tools. */
export function functionTools(): { type: 'function'; name: string; description: string; parameters: Record<string, unknown>; strict: false }[] {
  return TOOL_SCHEMAS.map((t) => ({ type: 'function' as const, name: t.name, description: t.description, parameters: t.parameters, strict: false as const }));
}

/**
 * tau2's user simulator system prompt (tau2.user.user_simulator, a user without tools and the
 * default persona): its simulation guidelines, then the task's `str(user_scenario)` in `<scenario>`.
 */
export function userSystemPrompt(guidelines: string, instructions: string): string {
  return `${guidelines}\n\n<scenario>\n${instructions}\n</scenario>`;
}

export interface RowOptions {
  /** The domain name written into each row. */
  domain?: string;
  /** tau2's simulation_guidelines.md: when given, rows carry `user_system_prompt` as tau2 builds it. */
  userGuidelines?: string;
  /** Extra `responses_create_params` keys (temperature, max_output_tokens, …). */
  createParams?: Record<string, unknown>;
}

/** One rollout row for a task. */
export function taskRow(task: Task, policy: string, options: RowOptions = {}): Record<string, unknown> {
  const instructions = userScenarioText(task.user_scenario);
  return {
    task_id: task.id,
    tau2_domain: options.domain ?? 'retail',
    responses_create_params: {
      ...options.createParams,
      input: [
        { role: 'system', content: agentSystemPrompt(policy) },
        { role: 'assistant', content: FIRST_AGENT_MESSAGE },
      ],
      tools: functionTools(),
    },
    initial_state: task.initial_state ?? null,
    evaluation_criteria: task.evaluation_criteria ?? null,
    user_scenario: task.user_scenario,
    user_instructions: instructions,
    ...(options.userGuidelines !== undefined ? { user_system_prompt: userSystemPrompt(options.userGuidelines, instructions) } : {}),
  };
}
