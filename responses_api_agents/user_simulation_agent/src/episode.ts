/**
 * One conversation between the policy and a simulated user. Turns alternate: the user model
 * writes a message (from its own system prompt and the row's instructions), then the policy runs
 * core's tool loop (model ↔ tools) until it answers in text; and so on, until the user writes a
 * stop signal, the user has had `max_turns` turns, the policy calls an ending tool, or a policy
 * turn ends without an answer (step limit, truncated generation).
 *
 * Only the policy's generations carry token ids. A user turn enters the trajectory as an input
 * item, `{type: "message", role: "user", content: <text>}`, built from the user model's text
 * alone, so token ids the user model server may return never reach it.
 */
import { hopFailure, type ServerClient } from '@nemo-gym/core/client';
import { NgError } from '@nemo-gym/core/errors';
import { fullResponseDump, outputText, type ResponseCreateParams } from '@nemo-gym/core/openai';
import { addUsage } from '@nemo-gym/core/openai';
import { callWithin, inputItems, itemType, runToolLoop, withServerTools, type ToolLoopConfig } from '@nemo-gym/core/server';
import { UserModelFailedError, UserModelTimeoutError } from './errors.js';
import { flippedConversation } from './prompt.js';

type Json = Record<string, unknown>;
type Cookies = Record<string, string>;

export interface EpisodeConfig extends ToolLoopConfig {
  user_model_server: { name: string };
  user_responses_create_params: Json;
  stop_signals: string[];
  end_tools: string[];
  max_turns: number;
  policy_timeout_s: number | null;
  user_timeout_s: number;
  tool_timeout_s: number | null;
}

/**
 * How the conversation ended. `user_stop` and `agent_stop` are tau2-bench's names (its evaluator
 * scores only these two); the others end a conversation early.
 */
export type TerminationReason = 'user_stop' | 'agent_stop' | 'max_turns' | 'max_steps' | 'incomplete';

/** What the conversation cost and how it ended, besides the policy's own response. */
export interface EpisodeStats {
  /** The signal the user ended with (when `termination_reason` is `user_stop`). */
  stop_signal: string | null;
  /** The tool that ended the conversation (when `termination_reason` is `agent_stop`). */
  end_tool: string | null;
  user_turns: number;
  policy_turns: number;
  policy_model_calls: number;
  user_model_calls: number;
  /** The user model's token usage, summed; the policy's is `response.usage`. */
  user_usage: Json | null;
}

export interface EpisodeResult {
  /** The policy's response: `output` holds every new item in order (user turns, policy outputs, tool outputs), `usage` the policy's calls only. */
  response: Json;
  termination_reason: TerminationReason;
  stats: EpisodeStats;
  resourcesCookies: Cookies;
  modelCookies: Cookies;
}

function isUserMessage(item: unknown): boolean {
  return item !== null && typeof item === 'object' && itemType(item as Json) === 'message' && (item as Json).role === 'user';
}

/** The first configured stop signal the text contains (tau2 ends on a signal anywhere in the message). */
export function stopSignalIn(text: string, signals: readonly string[]): string | null {
  for (const s of signals) if (s !== '' && text.includes(s)) return s;
  return null;
}

/** One call to the user model: its text, or a coded failure (never a reward). */
async function askUser(client: ServerClient, config: EpisodeConfig, systemPrompt: string, conversation: readonly unknown[], cookies: Cookies, signal: AbortSignal | undefined): Promise<{ text: string; usage: unknown; cookies: Cookies }> {
  const name = config.user_model_server.name;
  const what = `user model server \`${name}\``;
  const body = { ...config.user_responses_create_params, input: [{ role: 'system', content: systemPrompt }, ...flippedConversation(conversation)] };
  const timeoutMs = config.user_timeout_s * 1000;
  let res;
  try {
    res = await callWithin(
      timeoutMs,
      signal,
      (s) => client.post(name, '/v1/responses', body, { cookies, signal: s }),
      () => new UserModelTimeoutError(`${what} gave no answer within ${config.user_timeout_s} s (user_timeout_s)`),
    );
  } catch (err) {
    if (err instanceof UserModelTimeoutError || signal?.aborted) throw err;
    const timedOut = err instanceof NgError && err.code === 'NG_ERR_TIMEOUT';
    const Err = timedOut ? UserModelTimeoutError : UserModelFailedError;
    throw new Err(`${what} could not be reached: ${(err as Error).message}`, { cause: err });
  }
  // A rate limit or an overload keeps its status and Retry-After: the collector records it as such.
  if (res.status === 429 || res.status === 503) throw hopFailure('model', what, res);
  if (!res.ok) throw new UserModelFailedError(`${what} answered HTTP ${res.status} (${res.url}): ${res.text.slice(0, 2000)}`);
  let response: unknown;
  try {
    response = res.json();
  } catch {
    throw new UserModelFailedError(`${what} answered a body that is not JSON: ${res.text.slice(0, 200)}`);
  }
  const text = outputText(response as Json);
  if (text.trim() === '') throw new UserModelFailedError(`${what} answered without any text (output: ${JSON.stringify((response as Json)?.output ?? null).slice(0, 500)})`);
  return { text, usage: (response as Json).usage, cookies: { ...cookies, ...res.cookies } };
}

/** `systemPrompt`: the user model's system prompt, instructions included (see prompt.ts). */
/** `offerServerTools`: a row without tools offers the policy the resources server's (core's offersServerTools). */
export async function runEpisode(
  rowParams: ResponseCreateParams,
  systemPrompt: string,
  config: EpisodeConfig,
  client: ServerClient,
  incomingCookies: Cookies,
  signal?: AbortSignal,
  { offerServerTools = false }: { offerServerTools?: boolean } = {},
): Promise<EpisodeResult> {
  const params = await withServerTools(rowParams, offerServerTools, client, config.resources_server.name, signal);
  const input = inputItems(params);
  const items: Json[] = [];
  const endTools = new Set(config.end_tools);
  const stats: EpisodeStats = { stop_signal: null, end_tool: null, user_turns: 0, policy_turns: 0, policy_model_calls: 0, user_model_calls: 0, user_usage: null };
  let resourcesCookies: Cookies = { ...incomingCookies };
  let modelCookies: Cookies = {};
  // The user's model session is its own: it never shares the policy's cookies (even on one server).
  let userCookies: Cookies = {};
  let policyUsage: Json | null = null;
  let last: Json | null = null;
  let termination: TerminationReason;
  // The user speaks first unless the row already ends with a user message.
  let userNext = !isUserMessage(input.at(-1));

  for (;;) {
    if (userNext) {
      if (stats.user_turns >= config.max_turns) {
        termination = 'max_turns';
        break;
      }
      const user = await askUser(client, config, systemPrompt, [...input, ...items], userCookies, signal);
      userCookies = user.cookies;
      stats.user_model_calls++;
      stats.user_turns++;
      stats.user_usage = addUsage(stats.user_usage, user.usage);
      items.push({ type: 'message', role: 'user', content: user.text });
      const stop = stopSignalIn(user.text, config.stop_signals);
      if (stop !== null) {
        stats.stop_signal = stop;
        termination = 'user_stop';
        break;
      }
    }
    userNext = true;
    const turn = await runToolLoop({ ...params, input: [...input, ...items] } as ResponseCreateParams, config, client, resourcesCookies, signal, {
      endTools,
      modelTimeoutMs: config.policy_timeout_s === null ? null : config.policy_timeout_s * 1000,
      toolTimeoutMs: config.tool_timeout_s === null ? null : config.tool_timeout_s * 1000,
      modelCookies,
    });
    resourcesCookies = turn.resourcesCookies;
    modelCookies = turn.modelCookies;
    stats.policy_turns++;
    stats.policy_model_calls += turn.steps;
    policyUsage = addUsage(policyUsage, turn.response.usage);
    last = turn.response;
    items.push(...(turn.response.output as Json[]));
    if (turn.end === 'end_tool') {
      stats.end_tool = turn.endTool ?? null;
      termination = 'agent_stop';
      break;
    }
    if (turn.end !== 'answer') {
      termination = turn.end;
      break;
    }
  }

  const base: Json = last ?? {
    // The user ended the conversation before the policy said anything: an empty policy response.
    id: `resp_usersim_${Date.now().toString(36)}`,
    created_at: Math.floor(Date.now() / 1000),
    model: String((params as Json).model ?? ''),
    object: 'response',
    parallel_tool_calls: (params as Json).parallel_tool_calls ?? true,
    tool_choice: (params as Json).tool_choice ?? 'auto',
    tools: (params as Json).tools ?? [],
  };
  const response = fullResponseDump({ ...base, output: items, usage: policyUsage });
  return { response, termination_reason: termination, stats, resourcesCookies, modelCookies };
}
