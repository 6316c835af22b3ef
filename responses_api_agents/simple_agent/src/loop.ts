/**
 * The agent loop: ask the model, run the function calls it makes against the resources
 * server (in order), feed the outputs back, until the model answers without calling a tool.
 */
import { hopFailure, viaHop, type ServerClient } from '@nemo-gym/core/client';
import { HttpError } from '@nemo-gym/core/errors';
import { addUsage, fullResponseDump, type ResponseCreateParams } from '@nemo-gym/core/openai';
import { pyJsonDumps } from '@nemo-gym/core/py';

export const DEFAULT_MAX_STEPS = 100;

export interface LoopConfig {
  name: string;
  model_server: { name: string };
  resources_server: { name: string };
  max_steps?: number | null;
}

type Json = Record<string, unknown>;
type Cookies = Record<string, string>;

export interface LoopResult {
  response: Json;
  resourcesCookies: Cookies;
  modelCookies: Cookies;
}

/** What makes a model answer unusable for the loop (null when it is usable). */
function loopProblem(response: unknown): string | null {
  if (response === null || typeof response !== 'object' || Array.isArray(response)) return '(root): expected a Response object';
  const output = (response as Json).output;
  if (!Array.isArray(output)) return 'output: expected an array of output items';
  for (let i = 0; i < output.length; i++) {
    const item = output[i] as Json | null;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return `output.${i}: expected an output item object`;
    if (itemType(item) === 'function_call') {
      for (const k of ['name', 'arguments', 'call_id']) if (typeof item[k] !== 'string') return `output.${i}.${k}: expected a string`;
    }
  }
  return null;
}

function itemType(item: Json): unknown {
  return item.type ?? (item.role !== undefined ? 'message' : undefined);
}

export async function runAgentLoop(
  params: ResponseCreateParams,
  config: LoopConfig,
  client: ServerClient,
  incomingCookies: Cookies,
  /** The inbound request's signal: cancels the model and tool calls when our caller goes away. */
  signal?: AbortSignal,
): Promise<LoopResult> {
  // Read-only below: every request is built from fresh copies.
  const body = params as Json;
  const input: unknown[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input as unknown[]);
  const newOutputs: Json[] = [];
  let modelCookies: Cookies = {};
  let resourcesCookies: Cookies = { ...incomingCookies };
  const maxSteps = config.max_steps ?? DEFAULT_MAX_STEPS;
  let usage: Json | null = null;
  let last: Json | null = null;

  for (let step = 1; ; step++) {
    const res = await viaHop('model', client.post(config.model_server.name, '/v1/responses', { ...body, input: [...input, ...newOutputs] }, { cookies: modelCookies, signal }));
    if (!res.ok) throw hopFailure('model', `model server \`${config.model_server.name}\``, res);
    modelCookies = { ...modelCookies, ...res.cookies };
    // The model server validated this Response against its schema before answering; here only
    // the parts the loop reads are checked (a second full validation per step would add nothing).
    const response = res.json<Json>();
    const problem = loopProblem(response);
    if (problem) throw new HttpError(502, `Received an invalid response from model server \`${config.model_server.name}\`: ${problem}`);
    last = response;
    usage = addUsage(usage, response.usage);
    const output = response.output as Json[];
    newOutputs.push(...output);

    // A truncated generation (max_output_tokens, content filter) ends the rollout.
    if (response.incomplete_details) break;
    const calls = output.filter((o) => itemType(o) === 'function_call');
    const messages = output.filter((o) => itemType(o) === 'message' && o.role === 'assistant');
    if (calls.length === 0 && messages.length > 0) break;

    for (const call of calls) {
      let args: unknown;
      let outputText: string;
      try {
        args = JSON.parse(String(call.arguments ?? ''));
      } catch (err) {
        args = undefined;
        outputText = pyJsonDumps({ error: `Invalid tool call arguments: ${(err as Error).name}(${JSON.stringify((err as Error).message)})` });
      }
      if (args !== undefined) {
        const toolRes = await client.post(config.resources_server.name, `/${String(call.name)}`, args, { cookies: resourcesCookies, retry: { retryStatuses: [] }, signal });
        // Tool errors (404 unknown tool, 422 bad arguments, 500) are the tool's output: the model sees them.
        resourcesCookies = { ...resourcesCookies, ...toolRes.cookies };
        outputText = toolRes.text;
      }
      newOutputs.push({ type: 'function_call_output', call_id: call.call_id, output: outputText! });
    }
    if (step >= maxSteps) break;
  }
  const response = fullResponseDump({ ...last!, output: newOutputs, usage: usage ?? last!.usage ?? null });
  return { response, resourcesCookies, modelCookies };
}
