/**
 * One call to the user's agent service (`POST <agent_base_url>/v1/responses`) and the checks on
 * its answer. The service is outside the project: nothing it answers is trusted until it is a
 * Responses API object whose items the loop can act on, and every way it can fail is a coded
 * error that names the step, the item and what to fix.
 */
import type { ServerClient } from '@nemo-gym/core/client';
import { passOnHeaders } from '@nemo-gym/core/client';
import { describeError, HttpError, NgError } from '@nemo-gym/core/errors';
import { redactSecret, ResponseSchema, type NeMoGymResponse } from '@nemo-gym/core/openai';
import { callWithin } from '@nemo-gym/core/server';
import { RemoteAgentBadResponseError, RemoteAgentFailedError, RemoteAgentTimeoutError } from './errors.js';

type Json = Record<string, unknown>;
type Cookies = Record<string, string>;

/** Where the service is and how each call to it is bounded. */
export interface ServiceTarget {
  /** `<agent_base_url>/v1/responses`. */
  url: string;
  /** Sent as `Authorization: Bearer …`; never in a message, a log line or a failure record. */
  apiKey: string | null;
  /** Milliseconds one call may take (`remote_responses_timeout_secs`). */
  timeoutMs: number;
}

/** Connection attempts per call: a POST is resent only when it provably never reached the service (see core's retry.ts). */
const CONNECT_ATTEMPTS = 3;

/** Characters of the service's answer quoted in an error. */
const QUOTED = 500;

/** The start of a text the service wrote, for a message: the API key masked wherever the service echoed it. */
const quote = (text: string, apiKey: string | null): string => redactSecret(text.length > QUOTED ? `${text.slice(0, QUOTED)}… (${text.length} bytes)` : text, apiKey);

/** The service's answer to one call: the Response and the cookies it set. */
export interface ServiceAnswer {
  response: NeMoGymResponse;
  cookies: Cookies;
}

/**
 * POSTs `request` to the service with the service's own cookies of this rollout (and no other),
 * and returns its answer once it is a valid Responses API object. `step` (1-based) is the loop
 * step, for the messages.
 */
export async function callService(client: ServerClient, target: ServiceTarget, request: Json, cookies: Cookies, step: number, signal: AbortSignal | undefined): Promise<ServiceAnswer> {
  const where = `the remote agent service at ${target.url} (step ${step})`;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  let res;
  try {
    res = await callWithin(
      target.timeoutMs,
      signal,
      (s) => client.requestUrl(target.url, request, { method: 'POST', headers, cookies, retry: { maxAttempts: CONNECT_ATTEMPTS }, signal: s }),
      () =>
        new RemoteAgentTimeoutError(
          `${where} gave no answer within remote_responses_timeout_secs = ${target.timeoutMs / 1000} s; the call was cancelled. Raise remote_responses_timeout_secs if the service legitimately works longer per call, or look in its log for why it hangs.`,
        ),
    );
  } catch (err) {
    if (err instanceof RemoteAgentTimeoutError || signal?.aborted) throw err;
    // The client's own bounds (http_connect/headers/body_timeout_s) are timeouts too.
    if (err instanceof NgError && err.code === 'NG_ERR_TIMEOUT') throw new RemoteAgentTimeoutError(`${where} timed out: ${describeError(err)}`, { cause: err });
    throw new RemoteAgentFailedError(`could not reach ${where}: ${describeError(err)}. Start the service, or fix agent_base_url in the remote_agent config.`, { cause: err });
  }
  if (res.status < 200 || res.status >= 300) {
    const location = res.headers.location;
    const redirect = res.status >= 300 && res.status < 400 ? ` (a redirect${location ? ` to ${String(location)}` : ''}, which is not followed: set agent_base_url to the final address)` : '';
    const message = `${where} answered HTTP ${res.status}${redirect}: ${quote(res.text, target.apiKey)}`;
    // A rate limit or an overload stays one (after the client's own retries), and says not to resend the rollout.
    if (res.status === 429 || res.status === 503) throw new HttpError(res.status, message, passOnHeaders(res.headers), 'NG_ERR_REMOTE_AGENT_FAILED');
    throw new RemoteAgentFailedError(message);
  }
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch (err) {
    throw new RemoteAgentBadResponseError(`${where} answered HTTP ${res.status} with a body that is not JSON (${(err as Error).message}): ${quote(res.text, target.apiKey)}. The body must be one Responses API object.`);
  }
  const parsed = ResponseSchema.safeParse(body);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new RemoteAgentBadResponseError(`${where} answered with something that is not a Responses API object: ${problems}. Answer as the openai client types a Response (docs/remote-agents.md).`);
  }
  const response = body as NeMoGymResponse;
  // A Response that reports its own failure is one: calling again would only repeat it.
  if (response.status === 'failed' || (response.error !== null && response.error !== undefined)) {
    throw new RemoteAgentFailedError(`${where} answered a Response that reports a failure (status ${JSON.stringify(response.status ?? null)}): ${quote(JSON.stringify(response.error ?? null), target.apiKey)}`);
  }
  // The raw body, not zod's copy: the items go into the trajectory exactly as the service wrote them.
  return { response, cookies: res.cookies };
}

/** A tool call the service asks Gym to run: an unpaired `function_call` of its answer. */
export interface ToolAsk {
  item: Json;
  name: string;
  callId: string;
  /** The `arguments` text as the service wrote it (not JSON: the tool's output says so, as simple_agent's does). */
  argumentsText: string;
}

/** Routes of every resources server that are not tools: a call to them is never sent. */
const NOT_TOOLS: ReadonlySet<string> = new Set(['seed_session', 'verify', 'aggregate_metrics']);
/** A tool route name: one path segment. */
const TOOL_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

/**
 * The calls of one answer Gym must run: its `function_call` items without a
 * `function_call_output` of the same `call_id` in the same answer (paired ones are the service's
 * own tool records and pass through untouched), in order. Throws RemoteAgentBadResponseError for
 * an ask Gym cannot run.
 */
export function unpairedCalls(output: readonly Json[], where: string, apiKey: string | null): ToolAsk[] {
  const answered = new Set<string>();
  const asks = new Map<string, { item: Json; index: number }>();
  for (const [index, item] of output.entries()) {
    if (item.type === 'function_call_output') {
      answered.add(item.call_id as string);
      asks.delete(item.call_id as string);
    } else if (item.type === 'function_call' && !answered.has(item.call_id as string)) {
      const callId = item.call_id as string;
      const seen = asks.get(callId);
      if (seen) throw new RemoteAgentBadResponseError(`${where}: output.${seen.index} and output.${index} are two unpaired function_call items with call_id ${JSON.stringify(callId)}; each call Gym runs needs its own call_id.`);
      asks.set(callId, { item, index });
    }
  }
  const out: ToolAsk[] = [];
  for (const [callId, { item, index }] of asks) {
    const name = item.name as string;
    const at = `${where}: output.${index} (function_call ${JSON.stringify(name)}, call_id ${JSON.stringify(callId)})`;
    if (!TOOL_NAME.test(name) || NOT_TOOLS.has(name)) {
      throw new RemoteAgentBadResponseError(`${at} names no tool route (${NOT_TOOLS.has(name) ? `/${name} is a built-in route of every resources server` : 'a tool name is one path segment of letters, digits, "_", "-" and "."'}); ask only for the tools in the request's \`tools\`.`);
    }
    const argumentsText = item.arguments as string;
    out.push({ item, name, callId, argumentsText });
  }
  return out;
}
