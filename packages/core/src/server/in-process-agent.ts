/**
 * An agent server made from one function: the user's own agent (an OpenAI Agents SDK, LangGraph.js
 * or AI SDK agent, or plain code) runs in this process with its own tool-calling loop. `/run` does
 * what simple_agent's does around it — seed the resources session, run the agent, verify — and the
 * agent only sees:
 *
 *   - the task row and its input items,
 *   - `modelBaseUrl`: the model server's per-rollout route `<model server>/ng-rollout/<id>/v1`
 *     (OpenAI-compatible: `/chat/completions`, `/responses`), so every model call is captured with
 *     its token ids, and a placeholder API key,
 *   - the row's tools as callable functions with their JSON schemas (each call is `POST /<tool>` on
 *     the resources server with the rollout's session cookie); a row that lists none gets the
 *     resources server's own tools when `offer_server_tools` is on (as simple_agent),
 *   - an AbortSignal (the caller went away, or `timeout_s` passed).
 *
 * The response given to `/verify` is rebuilt from the model server's capture (capture/
 * rollout-response.ts, the same assembly harness_agent uses): the main chain's items with token
 * ids, `mask_sample` and the reason when the capture cannot vouch for the sample. Without token ids
 * (a backend that gives none) the output is the agent's own record: its tool calls with their
 * outputs, then its final answer. A function that throws, a tool call that could not reach the
 * resources server (even if the framework swallowed the error), or a timeout is a recorded failure
 * with its code — never a reward.
 */
import { z } from 'zod';
import { assembleResponse, fetchTrajectory, modelBaseUrl, releaseCapture, rolloutApiKey, rolloutIdentity, trajectorySummary, type RolloutIdentity } from '../capture/rollout-response.js';
import type { ServerClient } from '../client/client.js';
import { ModelServerRefSchema, ResourcesServerRefSchema } from '../config/instances.js';
import { AgentFunctionError, describeError, HttpError, NgError, RolloutIdError } from '../errors.js';
import { fullCreateParamsDump, ResponseCreateParamsSchema, type ResponseCreateParams } from '../openai/schemas.js';
import { AgentServerConfigSchema } from './config.js';
import type { ServerDefinition, SetupContext } from './define.js';
import { BaseRunRequestSchema, defineAgent } from './kinds.js';
import type { Logger } from './logger.js';
import { callTool, deadlineError, inputItems, offersServerTools, seedRollout, verifyAnswer, verifyRollout, withServerTools } from './tool-loop.js';

type Json = Record<string, unknown>;
type Cookies = Record<string, string>;

export const InProcessAgentConfigSchema = AgentServerConfigSchema.extend({
  resources_server: ResourcesServerRefSchema,
  model_server: ModelServerRefSchema,
  /** Model name the agent asks for (the model server serves its own model whatever the name). */
  model: z.string().min(1).default('policy'),
  /** Wall-clock limit of one agent run, seconds; past it the agent's signal aborts and the rollout fails with NG_ERR_TIMEOUT. */
  timeout_s: z.coerce.number().positive().default(900),
  /** Limit of one tool call, seconds (null: the client's own timeouts); past it the call fails with NG_ERR_TIMEOUT. */
  tool_timeout_s: z.coerce.number().positive().nullable().default(null),
  /** Give the agent the per-rollout route and build the response from the model server's token
   * capture; off: `<model server>/v1` and the agent's own record (no token ids). */
  capture: z.boolean().default(true),
  /** A row without tools gets the resources server's (GET /ng_tools); unset: the global setting of that name. */
  offer_server_tools: z.boolean().nullable().optional(),
});
export type InProcessAgentConfig = z.output<typeof InProcessAgentConfigSchema>;

/** One tool of the row, callable: `call` posts the arguments to `/<name>` on the resources server. */
export interface AgentTool {
  readonly name: string;
  readonly description: string;
  /** The tool's JSON Schema (an object schema), as the row gives it. */
  readonly parameters: Json;
  readonly strict: boolean;
  /**
   * Runs the tool with `args` (an object, or its JSON text) and resolves to the tool's answer text,
   * which is what the model should see — error answers too (404 unknown tool, 422 bad arguments),
   * as simple_agent feeds them back. Rejects only when the resources server could not be reached or
   * the call timed out; that rollout is then a recorded failure whatever the agent does next.
   */
  call(args: unknown): Promise<string>;
}

export interface AgentRunContext<C = InProcessAgentConfig, S = undefined> {
  /** The task row as `/run` got it (with `responses_create_params` in full). */
  readonly row: Readonly<Json>;
  /** The row's create params (input, tools, sampling settings); with the server's tools when offered (`offer_server_tools`). */
  readonly params: ResponseCreateParams;
  /** The row's input as Responses input items (a string input is one user message). */
  readonly input: Json[];
  readonly tools: readonly AgentTool[];
  /** OpenAI-compatible base URL for this rollout's model calls (ends in `/v1`). */
  readonly modelBaseUrl: string;
  /** A placeholder key for clients that require one (the model server does not read it). */
  readonly apiKey: string;
  /** The model name to ask for (`model` in the config). */
  readonly model: string;
  readonly rolloutId: string;
  /** Aborts when the caller goes away or `timeout_s` passes: pass it to the framework's run. */
  readonly signal: AbortSignal;
  readonly config: C;
  readonly state: S;
  readonly log: Logger;
}

/** The agent: runs the task with its own loop and resolves to its final answer (text). */
export type AgentFunction<C = InProcessAgentConfig, S = undefined> = (ctx: AgentRunContext<C, S>) => Promise<string | null | undefined>;

export interface InProcessAgentInput<CS extends z.ZodType<InProcessAgentConfig>, S> {
  className: string;
  /** Defaults to {@link InProcessAgentConfigSchema}; extend it for settings of your own. */
  configSchema?: CS;
  setup?: (ctx: SetupContext<z.output<CS>>) => S | Promise<S>;
  close?: (ctx: SetupContext<z.output<CS>> & { state: S }) => void | Promise<void>;
  agent: AgentFunction<z.output<CS>, S>;
}

/** One call the agent made through its tools, in call order. */
interface ToolEvent {
  name: string;
  arguments: string;
  output: string;
}

/** The tools of one rollout: the resources session they share and what was called. */
class RolloutTools {
  readonly events: ToolEvent[] = [];
  /** The first call that could not reach the resources server (or timed out). */
  failure: unknown = null;
  constructor(
    private readonly client: ServerClient,
    private readonly resources: string,
    public cookies: Cookies,
    private readonly timeoutMs: number | null,
  ) {}

  tools(params: ResponseCreateParams, signal: AbortSignal): AgentTool[] {
    const out: AgentTool[] = [];
    for (const t of (params.tools ?? []) as Json[]) {
      if (t.type !== 'function' || typeof t.name !== 'string') continue;
      const name = t.name;
      out.push({
        name,
        description: typeof t.description === 'string' ? t.description : '',
        parameters: t.parameters !== null && typeof t.parameters === 'object' ? (t.parameters as Json) : { type: 'object', properties: {} },
        strict: t.strict === true,
        call: (args) => this.call(name, args, signal),
      });
    }
    return out;
  }

  private async call(name: string, args: unknown, signal: AbortSignal): Promise<string> {
    const text = typeof args === 'string' ? args : JSON.stringify(args ?? {});
    try {
      // Arguments that are not JSON get the answer simple_agent gives the model.
      const tool = await callTool(this.client, this.resources, name, args, this.cookies, { timeoutMs: this.timeoutMs, signal });
      this.cookies = tool.cookies;
      this.events.push({ name, arguments: text, output: tool.output });
      return tool.output;
    } catch (err) {
      this.failure ??= err;
      throw err;
    }
  }

  /** The agent's own record as Responses output items: each tool call with its output, then the answer. */
  transcript(rolloutId: string, answer: string): Json[] {
    const items: Json[] = [];
    this.events.forEach((e, k) => {
      const callId = `call_${rolloutId}_${k}`;
      items.push({ type: 'function_call', id: `fc_${rolloutId}_${k}`, call_id: callId, name: e.name, arguments: e.arguments, status: 'completed' });
      items.push({ type: 'function_call_output', call_id: callId, output: e.output });
    });
    items.push({ type: 'message', id: `msg_${rolloutId}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: answer, annotations: [] }] });
    return items;
  }
}

/** The error answer of a rollout the agent function could not finish: coded, naming the rollout. */
function functionFailure(rolloutId: string, className: string, err: unknown): HttpError {
  const detail = { code: AgentFunctionError.code, message: `rollout ${rolloutId} (${className}): the agent function failed: ${describeError(err)}`, rollout_id: rolloutId };
  return new HttpError(500, detail, undefined, AgentFunctionError.code);
}

/** A tool call that could not reach the resources server or timed out: its own coded error, else a function failure. */
function toolFailure(rolloutId: string, className: string, err: unknown): unknown {
  return err instanceof NgError ? err : functionFailure(rolloutId, className, err);
}

/**
 * Runs `fn` with a signal that aborts when `parent` does or after `timeoutMs`; settles at that
 * moment even if `fn` ignores its signal (its late result is dropped). A timeout rejects with the
 * 504 NG_ERR_TIMEOUT error, a cancelled caller with the parent's reason; what `fn` itself throws is
 * passed through.
 */
async function runWithin<T>(fn: (signal: AbortSignal) => Promise<T>, parent: AbortSignal, timeoutMs: number, what: string): Promise<T> {
  parent.throwIfAborted();
  const ac = new AbortController();
  const onParent = () => ac.abort(parent.reason);
  parent.addEventListener('abort', onParent, { once: true });
  const timer = setTimeout(() => ac.abort(deadlineError(what, timeoutMs, 'NG_ERR_TIMEOUT')), timeoutMs);
  const stopped = new Promise<never>((_, reject) => ac.signal.addEventListener('abort', () => reject(ac.signal.reason), { once: true }));
  try {
    return await Promise.race([Promise.resolve().then(() => fn(ac.signal)), stopped]);
  } finally {
    clearTimeout(timer);
    parent.removeEventListener('abort', onParent);
  }
}

function identityOf(row: Json): RolloutIdentity {
  try {
    return rolloutIdentity(row);
  } catch (err) {
    if (err instanceof RolloutIdError) throw new HttpError(422, err.message, undefined, RolloutIdError.code);
    throw err;
  }
}

/**
 * An agent server whose rollouts run `agent`. `/run` takes a task row; `/v1/responses` is not
 * offered (the agent needs a row and a resources session, not just a prompt).
 */
export function defineInProcessAgent<CS extends z.ZodType<InProcessAgentConfig> = typeof InProcessAgentConfigSchema, S = undefined>(input: InProcessAgentInput<CS, S>): ServerDefinition<z.output<CS>, S> {
  const { className, agent } = input;
  return defineAgent({
    className,
    configSchema: (input.configSchema ?? InProcessAgentConfigSchema) as CS,
    ...(input.setup ? { setup: input.setup } : {}),
    ...(input.close ? { close: input.close } : {}),
    responses: {
      body: ResponseCreateParamsSchema,
      handler: () => {
        throw new HttpError(501, `${className} has no /v1/responses: its agent runs a task row against a resources session; POST the row to /run instead`);
      },
    },
    run: {
      body: BaseRunRequestSchema.loose(),
      handler: async (body: z.output<typeof BaseRunRequestSchema> & Json, ctx) => {
        const config = ctx.config as InProcessAgentConfig;
        const row: Json = { ...body, responses_create_params: fullCreateParamsDump(body.responses_create_params) };
        const identity = identityOf(row);
        const rowText = JSON.stringify(row);
        const signal = ctx.signal;
        const resources = config.resources_server.name;
        const cookies = await seedRollout(ctx.client, resources, rowText, ctx.cookies, signal);

        const capture = config.capture;
        // One address for the agent's calls and the trajectory request: the capture lives in that process.
        const modelUrl = ctx.client.baseUrl(config.model_server.name);
        const tools = new RolloutTools(ctx.client, resources, cookies, config.tool_timeout_s === null ? null : config.tool_timeout_s * 1000);
        const params = await withServerTools(body.responses_create_params, offersServerTools(config, ctx.globalConfig), ctx.client, resources, signal);
        const started = Date.now();
        let answer: string;
        try {
          const out = await runWithin(
            (runSignal) =>
              agent({
                row,
                params,
                input: inputItems(params) as Json[],
                tools: tools.tools(params, runSignal),
                modelBaseUrl: modelBaseUrl(modelUrl, identity.id, { perRolloutRoutes: capture }),
                apiKey: rolloutApiKey('ng-agent'),
                model: config.model,
                rolloutId: identity.id,
                signal: runSignal,
                config: ctx.config,
                state: ctx.state,
                log: ctx.log,
              }),
            signal,
            config.timeout_s * 1000,
            `the agent function of ${className} (timeout_s)`,
          );
          if (out !== null && out !== undefined && typeof out !== 'string') throw new TypeError(`it resolved to ${typeof out}, not the final answer text (a string)`);
          answer = out ?? '';
        } catch (err) {
          if (capture) await releaseCapture(modelUrl, identity.id);
          // The caller went away, or timeout_s passed: that is the failure, whatever the agent threw after.
          if (signal.aborted || (err instanceof HttpError && err.code === 'NG_ERR_TIMEOUT')) throw err;
          if (tools.failure !== null) throw toolFailure(identity.id, className, tools.failure);
          throw functionFailure(identity.id, className, err);
        }
        // A tool call that failed for want of the resources server fails the rollout, even when the framework carried on.
        if (tools.failure !== null) {
          if (capture) await releaseCapture(modelUrl, identity.id);
          throw toolFailure(identity.id, className, tools.failure);
        }

        const trajectory = capture ? await fetchTrajectory(ctx.client, modelUrl, identity.id, signal) : null;
        const assembled = assembleResponse({
          rolloutId: identity.id,
          model: config.model,
          transcript: { output: tools.transcript(identity.id, answer), usage: { input_tokens: 0, output_tokens: 0 } },
          transcriptSource: 'agent_tool_calls',
          trajectory,
        });
        const verify = await verifyRollout(ctx.client, resources, row, rowText, assembled.response, tools.cookies, signal);
        ctx.setCookies(verify.cookies);
        const agentRun = { rollout_id: identity.id, duration_ms: Date.now() - started, final_answer: answer, tool_calls: tools.events.length, trajectory: trajectorySummary(trajectory) };
        // A sample the capture cannot vouch for stays in the output, flagged (never silently trained).
        return verifyAnswer(verify, assembled.maskSample ? { agent_run: agentRun, mask_sample: true, failure_reason: assembled.failureReason } : { agent_run: agentRun });
      },
    },
  });
}
