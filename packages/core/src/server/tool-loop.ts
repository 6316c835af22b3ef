/**
 * The tool loop every tool-calling agent runs: ask the model, run the function calls it makes
 * against the resources server (in order), feed the outputs back, until the model answers
 * without calling a tool. Also the two ends of a rollout around it (seed the resources session,
 * verify the response), and a per-call deadline for agents that bound each hop.
 */
import type { ServerClient } from '../client/client.js';
import { hopFailure, viaHop } from '../client/relay.js';
import { answerCode, HttpError, type NgCode } from '../errors.js';
import { RawJson } from '../http/raw-json.js';
import type { ServerResponse } from '../client/client.js';
import { fullResponseDump, type ResponseCreateParams } from '../openai/schemas.js';
import { settingValue } from '../config/settings.js';
import type { ConfigDict } from '../config/merge.js';
import { pyJsonDumps } from '../py/json.js';
import { addUsage } from '../responses.js';
import { TOOLS_PATH } from './describe.js';

export const DEFAULT_MAX_STEPS = 100;

export interface ToolLoopConfig {
  model_server: { name: string };
  resources_server: { name: string };
  /** Model calls of one loop at most (default {@link DEFAULT_MAX_STEPS}). */
  max_steps?: number | null;
}

type Json = Record<string, unknown>;
type Cookies = Record<string, string>;

export interface ToolLoopOptions {
  /** Tools whose call ends the loop once its output is in (e.g. `transfer_to_human_agents`). */
  endTools?: ReadonlySet<string>;
  /** Milliseconds each model call may take; past it the loop fails with NG_ERR_MODEL_TIMEOUT (unset: the client's own timeouts). */
  modelTimeoutMs?: number | null;
  /** Milliseconds each tool call may take; past it the loop fails with NG_ERR_TIMEOUT. */
  toolTimeoutMs?: number | null;
  /** The model session to continue (cookies of earlier calls of the same rollout). */
  modelCookies?: Cookies;
  /** A request without tools gets the resources server's own (see {@link offersServerTools}). */
  offerServerTools?: boolean;
}

/**
 * Whether an agent offers the resources server's tools to a row that lists none: its own block's
 * `offer_server_tools` when set, else the global setting of that name (default false: upstream
 * sends the row's tools as they are).
 */
export function offersServerTools(agentConfig: { offer_server_tools?: boolean | null }, globalConfig: ConfigDict): boolean {
  const own = agentConfig.offer_server_tools;
  return typeof own === 'boolean' ? own : settingValue(globalConfig, 'offer_server_tools') === true;
}

const serverToolsCache = new WeakMap<ServerClient, Map<string, Promise<Json[]>>>();

/**
 * The function tools a resources server declares (GET /ng_tools), fetched once per client and
 * server. A server that does not publish them (404) has none.
 */
export function serverTools(client: ServerClient, resources: string, signal?: AbortSignal): Promise<Json[]> {
  let byServer = serverToolsCache.get(client);
  if (!byServer) serverToolsCache.set(client, (byServer = new Map()));
  let tools = byServer.get(resources);
  if (!tools) {
    tools = client.get(resources, TOOLS_PATH, { signal }).then((res) => {
      if (res.status === 404) return [];
      if (!res.ok) throw hopFailure('resources', `resources server \`${resources}\` ${TOOLS_PATH}`, res);
      return res.json<Json[]>();
    });
    // A failed fetch is tried again by the next rollout.
    tools.catch(() => byServer.delete(resources));
    byServer.set(resources, tools);
  }
  return tools;
}

/**
 * The create params a model request is built from: `params` as they are, or — when they list no
 * tools and `offer` is true ({@link offersServerTools}) — with the resources server's own tools
 * (GET /ng_tools). Every agent that builds model requests from a task row goes through here.
 */
export async function withServerTools<P extends { tools?: unknown }>(params: P, offer: boolean, client: ServerClient, resources: string, signal?: AbortSignal): Promise<P> {
  if (!offer || (Array.isArray(params.tools) && params.tools.length > 0)) return params;
  const tools = await serverTools(client, resources, signal);
  return tools.length > 0 ? { ...params, tools } : params;
}

/** Why the loop stopped: an answer without tool calls, a truncated generation, the step limit, or an ending tool. */
export type ToolLoopEnd = 'answer' | 'incomplete' | 'max_steps' | 'end_tool';

export interface ToolLoopResult {
  /** The last model response, with `output` = every item of the loop and `usage` summed over its calls. */
  response: Json;
  resourcesCookies: Cookies;
  modelCookies: Cookies;
  end: ToolLoopEnd;
  /** The ending tool that was called (when `end` is `end_tool`). */
  endTool?: string;
  /** Model calls made. */
  steps: number;
}

/** What makes a model answer unusable for the loop (null when it is usable). */
export function responseProblem(response: unknown): string | null {
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

/**
 * A function call's arguments as the tool's request body, or the output the model is shown when
 * they are not JSON (upstream's text): a model's malformed call is part of its rollout, scored as
 * such, never a failed rollout.
 */
export function parseToolArguments(argumentsText: unknown): { ok: true; value: unknown } | { ok: false; output: string } {
  try {
    return { ok: true, value: JSON.parse(String(argumentsText ?? '')) };
  } catch (err) {
    return { ok: false, output: pyJsonDumps({ error: `Invalid tool call arguments: ${(err as Error).name}(${JSON.stringify((err as Error).message)})` }) };
  }
}

/** An item's type (an easy input message has only a role). */
export function itemType(item: Json): unknown {
  return item.type ?? (item.role !== undefined ? 'message' : undefined);
}

/**
 * Runs `call` with a signal that also aborts after `timeoutMs`; when that deadline (not the
 * caller's own signal) cut the call short, throws `timedOut()` instead. No deadline when
 * `timeoutMs` is unset or 0.
 */
export async function callWithin<T>(timeoutMs: number | null | undefined, signal: AbortSignal | undefined, call: (signal: AbortSignal | undefined) => Promise<T>, timedOut: () => Error): Promise<T> {
  if (!timeoutMs) return call(signal);
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    return await call(signal ? AbortSignal.any([signal, deadline]) : deadline);
  } catch (err) {
    if (deadline.aborted && !signal?.aborted) throw timedOut();
    throw err;
  }
}

/**
 * One tool call of a rollout: `POST /<name>` on the resources server in the rollout's session,
 * within `timeoutMs` (none: the client's own limits). `args` is the call's `arguments` text (sent
 * as it is once it parses as JSON) or, from code, a value. Arguments that are not JSON are not sent:
 * the output is the error upstream's agent shows the model, a model's mistake scored with its
 * rollout. A tool's error answer (404 unknown tool, 422 bad arguments, 500) is its output; a tool
 * that cannot be reached or times out throws (an infrastructure failure, never a reward).
 */
export async function callTool(
  client: ServerClient,
  resources: string,
  name: string,
  args: unknown,
  cookies: Cookies,
  options: { timeoutMs?: number | null; signal?: AbortSignal },
): Promise<{ output: string; cookies: Cookies }> {
  if (typeof args === 'string') {
    const parsed = parseToolArguments(args);
    if (!parsed.ok) return { output: parsed.output, cookies };
  }
  const body = args ?? {};
  const res = await callWithin(
    options.timeoutMs,
    options.signal,
    (s) => client.post(resources, `/${name}`, body, { cookies, retry: { retryStatuses: [] }, signal: s }),
    () => deadlineError(`tool \`${name}\` of resources server \`${resources}\``, options.timeoutMs!, 'NG_ERR_TIMEOUT'),
  );
  return { output: res.text, cookies: { ...cookies, ...res.cookies } };
}

/** The 504 of a hop that gave no answer within its deadline, coded `code`. */
export function deadlineError(what: string, timeoutMs: number, code: NgCode): HttpError {
  return new HttpError(504, `${what} gave no answer within ${timeoutMs / 1000} s`, undefined, code);
}

/** Input items of a create-params body (a string input is one user message). */
export function inputItems(params: { input?: unknown }): unknown[] {
  const input = params.input;
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  return Array.isArray(input) ? input : [];
}

export async function runToolLoop(
  params: ResponseCreateParams,
  config: ToolLoopConfig,
  client: ServerClient,
  incomingCookies: Cookies,
  /** The inbound request's signal: cancels the model and tool calls when our caller goes away. */
  signal?: AbortSignal,
  options: ToolLoopOptions = {},
): Promise<ToolLoopResult> {
  // Read-only below: every request is built from fresh copies.
  const body = await withServerTools(params as Json, options.offerServerTools === true, client, config.resources_server.name, signal);
  const input = inputItems(params);
  const newOutputs: Json[] = [];
  let modelCookies: Cookies = { ...options.modelCookies };
  let resourcesCookies: Cookies = { ...incomingCookies };
  const maxSteps = config.max_steps ?? DEFAULT_MAX_STEPS;
  const model = config.model_server.name;
  let usage: Json | null = null;
  let last: Json | null = null;
  let end: ToolLoopEnd = 'max_steps';
  let endTool: string | undefined;
  let step = 1;

  for (; ; step++) {
    const request = { ...body, input: [...input, ...newOutputs] };
    const res = await callWithin(
      options.modelTimeoutMs,
      signal,
      (s) => viaHop('model', client.post(model, '/v1/responses', request, { cookies: modelCookies, signal: s })),
      () => deadlineError(`model server \`${model}\``, options.modelTimeoutMs!, 'NG_ERR_MODEL_TIMEOUT'),
    );
    if (!res.ok) throw hopFailure('model', `model server \`${model}\``, res);
    modelCookies = { ...modelCookies, ...res.cookies };
    // The model server validated this Response against its schema before answering; here only
    // the parts the loop reads are checked (a second full validation per step would add nothing).
    const response = res.json<Json>();
    const problem = responseProblem(response);
    if (problem) throw new HttpError(502, `Received an invalid response from model server \`${model}\`: ${problem}`);
    last = response;
    usage = addUsage(usage, response.usage);
    const output = response.output as Json[];
    newOutputs.push(...output);

    // A truncated generation (max_output_tokens, content filter) ends the rollout.
    if (response.incomplete_details) {
      end = 'incomplete';
      break;
    }
    const calls = output.filter((o) => itemType(o) === 'function_call');
    const messages = output.filter((o) => itemType(o) === 'message' && o.role === 'assistant');
    if (calls.length === 0 && messages.length > 0) {
      end = 'answer';
      break;
    }

    for (const call of calls) {
      const name = String(call.name);
      const tool = await callTool(client, config.resources_server.name, name, String(call.arguments ?? ''), resourcesCookies, { timeoutMs: options.toolTimeoutMs, signal });
      resourcesCookies = tool.cookies;
      newOutputs.push({ type: 'function_call_output', call_id: call.call_id, output: tool.output });
      if (options.endTools?.has(name)) {
        end = 'end_tool';
        endTool = name;
        break;
      }
    }
    if (end === 'end_tool' || step >= maxSteps) break;
  }
  const response = fullResponseDump({ ...last!, output: newOutputs, usage: usage ?? last!.usage ?? null });
  return { response, resourcesCookies, modelCookies, end, ...(endTool === undefined ? {} : { endTool }), steps: step };
}

/** POST the row to the resources server's `/seed_session`; the session cookies to go on with. */
export async function seedRollout(client: ServerClient, resources: string, rowText: string, cookies: Cookies, signal?: AbortSignal): Promise<Cookies> {
  const seed = await client.post(resources, '/seed_session', rowText, { cookies, signal });
  if (!seed.ok) throw hopFailure('resources', `resources server \`${resources}\` /seed_session`, seed);
  return { ...cookies, ...seed.cookies };
}

/**
 * POST the row with `response` (and `extra` fields) added to the resources server's `/verify`;
 * the answer is checked. `rowText` is the row serialized once (its last character the closing brace).
 */
export async function verifyRollout(
  client: ServerClient,
  resources: string,
  row: Json,
  rowText: string,
  response: unknown,
  cookies: Cookies,
  signal?: AbortSignal,
  extra: Json = {},
) {
  const added = { ...extra, response };
  const clash = Object.keys(added).some((k) => Object.hasOwn(row, k));
  const tail = JSON.stringify(added).slice(1);
  const body = clash ? JSON.stringify({ ...row, ...added }) : rowText === '{}' ? `{${tail}` : `${rowText.slice(0, -1)},${tail}`;
  const verify = await viaHop('verify', client.post(resources, '/verify', body, { cookies, signal }));
  if (!verify.ok) {
    // A judge that gave no verdict: the request goes back with the failure, so ng-reverify can score it later.
    const judgeFailed = answerCode(verify.text) === 'NG_ERR_JUDGE_FAILED';
    throw hopFailure('verify', `resources server \`${resources}\` /verify`, verify, judgeFailed ? { verify_request: JSON.parse(body) as Json } : undefined);
  }
  return verify;
}

/**
 * The answer of an agent's `/run`: the verify answer passed on byte for byte when it is JSON (every
 * extra field, numbers as the server wrote them), with the fields of `added` the verifier did not
 * echo appended at its end.
 */
export function verifyAnswer(verify: ServerResponse, added: Json = {}): unknown {
  const type = verify.headers['content-type'];
  const answer = verify.json<unknown>();
  if (typeof type !== 'string' || !type.startsWith('application/json')) return Object.keys(added).length === 0 ? answer : { ...added, ...(answer as Json) };
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return new RawJson(verify.text);
  const missing = Object.keys(added).filter((k) => !Object.hasOwn(answer, k));
  if (missing.length === 0) return new RawJson(verify.text);
  const tail = JSON.stringify(Object.fromEntries(missing.map((k) => [k, added[k]]))).slice(1);
  const text = verify.text.trimEnd();
  return new RawJson(Object.keys(answer).length === 0 ? `{${tail}` : `${text.slice(0, -1)},${tail}`);
}
