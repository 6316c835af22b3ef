/**
 * The remote loop: call the user's service with the conversation so far, run the calls it asks
 * for on the resources server (in the rollout's session), append their outputs and call it again,
 * until it answers with an assistant message and no unpaired call, its answer is incomplete, or
 * max_steps calls were made.
 *
 * What the service sees is the task's create params with the conversation in `input` (and the
 * resources server's tools when the row lists none and `offer_server_tools` is on), and its own
 * cookies of this rollout. The resources server's session cookies, our own session, the row's
 * other fields (`verifier_metadata`, the task's answer key) never leave this process.
 */
import type { ServerClient } from '@nemo-gym/core/client';
import { addUsage, fullResponseDump, type ResponseCreateParams } from '@nemo-gym/core/openai';
import { callTool, DEFAULT_MAX_STEPS, inputItems, itemType, withServerTools } from '@nemo-gym/core/server';
import { callService, unpairedCalls, type ServiceTarget } from './service.js';

type Json = Record<string, unknown>;
type Cookies = Record<string, string>;

/** Why the loop stopped: a final answer, an incomplete answer, or the step limit. */
export type RemoteLoopEnd = 'answer' | 'incomplete' | 'max_steps';

export interface RemoteLoopResult {
  /** The service's last answer with `output` = every item of the rollout and `usage` summed over its calls. */
  response: Json;
  resourcesCookies: Cookies;
  end: RemoteLoopEnd;
  /** Calls made to the service. */
  steps: number;
}

export interface RemoteLoopOptions {
  target: ServiceTarget;
  resources: string;
  /** Service calls per rollout at most (default: core's DEFAULT_MAX_STEPS, as simple_agent's model calls). */
  maxSteps: number | null | undefined;
  /** A request without tools carries the resources server's (`offer_server_tools`, see core's offersServerTools). */
  offerServerTools: boolean;
}

export async function runRemoteLoop(
  params: Omit<ResponseCreateParams, 'stream'>,
  options: RemoteLoopOptions,
  client: ServerClient,
  incomingCookies: Cookies,
  signal: AbortSignal | undefined,
): Promise<RemoteLoopResult> {
  const withTools = await withServerTools(params, options.offerServerTools, client, options.resources, signal);
  const input = inputItems(params);
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const items: Json[] = [];
  let resourcesCookies: Cookies = { ...incomingCookies };
  // The service's own session: only the cookies it set, echoed back within this rollout.
  let serviceCookies: Cookies = {};
  let usage: Json | null = null;
  let last: Json | null = null;
  let end: RemoteLoopEnd = 'max_steps';
  let step = 1;

  for (; ; step++) {
    const request = { ...withTools, input: [...input, ...items] };
    const answer = await callService(client, options.target, request, serviceCookies, step, signal);
    serviceCookies = { ...serviceCookies, ...answer.cookies };
    const response = answer.response as Json;
    last = response;
    usage = addUsage(usage, response.usage);
    const output = response.output as Json[];
    items.push(...output);
    if (response.incomplete_details) {
      end = 'incomplete';
      break;
    }
    const asks = unpairedCalls(output, `the remote agent service at ${options.target.url} (step ${step})`, options.target.apiKey);
    if (asks.length === 0 && output.some((o) => itemType(o) === 'message' && o.role === 'assistant')) {
      end = 'answer';
      break;
    }
    for (const ask of asks) {
      // Arguments that are not JSON are the model's mistake, part of its rollout: the service is told, as simple_agent tells the model.
      const tool = await callTool(client, options.resources, ask.name, ask.argumentsText, resourcesCookies, { signal });
      resourcesCookies = tool.cookies;
      items.push({ type: 'function_call_output', call_id: ask.callId, output: tool.output });
    }
    if (step >= maxSteps) break;
  }
  const response = fullResponseDump({ ...last!, output: items, usage: usage ?? last!.usage ?? null });
  return { response, resourcesCookies, end, steps: step };
}
