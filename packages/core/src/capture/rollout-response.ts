/**
 * The agent's side of per-rollout capture, for every agent whose model calls are made by code it
 * does not control (a harness CLI, an agent framework): the rollout's id, the model base URL that
 * code is given, the trajectory read back from the model server afterwards, and the response built
 * from it — the capture's rebuilt main chain with its token ids when there is one, else the
 * agent's own record of what it did (no token ids), with `mask_sample` and the reason whenever
 * the capture cannot vouch for the sample.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { ServerClient } from '../client/client.js';
import { describeError } from '../errors.js';
import { rolloutIdFromRunBody, rolloutPath } from './rollout-id.js';
import { applyTrajectory, expandPromptDeltas, type Trajectory } from './trajectory.js';

type Json = Record<string, unknown>;

export interface RolloutIdentity {
  /** `_ng_rollout_id` when the row gives one, else `<task>-<repeat>` (plus `-a<n>` for a re-dispatch). */
  id: string;
  /** The id came from the row or the collector (not made up here). */
  derived: boolean;
}

/**
 * The rollout's id as upstream derives it (`rolloutIdFromRunBody`: an explicit `_ng_rollout_id`,
 * else `<_ng_task_index>-<_ng_rollout_index>` plus `-a<n>` for `_ng_attempt_index` > 0), else a
 * fresh id. Throws RolloutIdError (a 400 answer) for a malformed explicit id or index.
 */
export function rolloutIdentity(row: Record<string, unknown>): RolloutIdentity {
  const id = rolloutIdFromRunBody(row);
  return id !== null ? { id, derived: true } : { id: `r${randomUUID().replaceAll('-', '').slice(0, 16)}`, derived: false };
}

/** A per-rollout API key for code that insists on one (the model servers ignore it); never a real secret. */
export function rolloutApiKey(prefix: string): string {
  return `${prefix}-${randomBytes(12).toString('hex')}`;
}

export interface ModelRouting {
  /** Give `<model_server>/ng-rollout/<id>/v1` instead of `<model_server>/v1`. */
  perRolloutRoutes: boolean;
}

/** The model server's address (`http://host:port`, no path) → the base URL (ending in `/v1`) the
 * agent's code calls for this rollout. */
export function modelBaseUrl(serverUrl: string, rolloutId: string, routing: ModelRouting): string {
  const root = serverUrl.replace(/\/+$/, '');
  return routing.perRolloutRoutes ? `${root}${rolloutPath(rolloutId)}/v1` : `${root}/v1`;
}

/**
 * The rollout's trajectory from the model server (which drops the capture as it answers). No
 * capture (the agent's code never reached the model through its route, or the capture expired) or
 * an unreadable answer is not a reason to lose the scored rollout: the row is masked with the reason.
 */
export async function fetchTrajectory(client: ServerClient, server: string, rolloutId: string, signal: AbortSignal): Promise<Trajectory | { unavailable: string }> {
  try {
    // Sent once: the answer releases the capture, so a resent request would find nothing.
    // Prompts as deltas: a quarter of the bytes for the model server to write and this agent to read.
    const res = await client.requestUrl(`${server}${rolloutPath(rolloutId)}/trajectory?prompt_ids=delta`, undefined, { method: 'GET', requestClass: 'once', signal });
    if (!res.ok) return { unavailable: res.error().message };
    const t = res.json<Trajectory>();
    if (t === null || typeof t !== 'object' || !Array.isArray(t.output) || typeof t.mask_sample !== 'boolean') return { unavailable: `the model server's trajectory answer is not a trajectory: ${res.text.slice(0, 200)}` };
    const problem = expandPromptDeltas(t.output);
    if (problem !== null) return { unavailable: `the model server's trajectory answer has prompts that do not read as deltas: ${problem}` };
    return t;
  } catch (err) {
    signal.throwIfAborted();
    return { unavailable: describeError(err) };
  }
}

/** Frees the capture of a rollout that failed before its trajectory was read (best effort: the TTL frees it otherwise). */
export async function releaseCapture(server: string, rolloutId: string): Promise<void> {
  // ServerClient sends GET and POST only; this is one best-effort DELETE.
  await fetch(`${server}${rolloutPath(rolloutId)}/capture`, { method: 'DELETE', signal: AbortSignal.timeout(10_000) })
    .then((r) => r.body?.cancel())
    .catch(() => undefined);
}

export interface AssembleInput {
  rolloutId: string;
  model: string;
  /** What the agent's own record says it did (its event stream, its tool calls). */
  transcript: { output: Record<string, unknown>[]; usage: { input_tokens: number; output_tokens: number } };
  /** Where `transcript` came from: `metadata.trajectory_source` when the capture does not replace it. */
  transcriptSource: string;
  /** The model server's trajectory of the rollout (capture on), or why there is none; null with capture off. */
  trajectory: Trajectory | { unavailable: string } | null;
}

export interface AssembledResponse {
  response: Record<string, unknown>;
  /** The row must not be trained on (capture on and the trajectory is incomplete or ambiguous). */
  maskSample: boolean;
  failureReason: string | null;
}

/**
 * The rollout's Responses object. Its output is the capture's rebuilt main chain (generation items
 * with their token ids) when there is one, else the transcript's items (no token ids). With capture
 * on, anything short of one whole chain masks the sample, with the builder's reason;
 * `metadata.trajectory_source` says where the output came from.
 */
export function assembleResponse(input: AssembleInput): AssembledResponse {
  const { input_tokens, output_tokens } = input.transcript.usage;
  const base = {
    id: `resp_${input.rolloutId}`,
    created_at: Math.floor(Date.now() / 1000),
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: { rollout_id: input.rolloutId, trajectory_source: input.transcriptSource },
    model: input.model,
    object: 'response',
    output: input.transcript.output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    status: 'completed',
    usage: { input_tokens, input_tokens_details: { cached_tokens: 0 }, output_tokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input_tokens + output_tokens },
  };
  const t = input.trajectory;
  if (t === null) return { response: base, maskSample: false, failureReason: null };
  if ('unavailable' in t) return { response: base, maskSample: true, failureReason: `no token capture for rollout ${input.rolloutId}: ${t.unavailable}` };
  const applied = applyTrajectory(base, t);
  const source = applied.replaced ? `capture_${t.mode}` : input.transcriptSource;
  const response = { ...applied.response, metadata: { rollout_id: input.rolloutId, trajectory_source: source } };
  return { response, maskSample: applied.mask_sample, failureReason: applied.mask_sample ? applied.failure_reason : null };
}

/** What goes beside the response on the row about the trajectory (the counts, not the token ids). */
export function trajectorySummary(t: Trajectory | { unavailable: string } | null): Json | null {
  if (t === null) return null;
  if ('unavailable' in t) return { unavailable: t.unavailable };
  return { mode: t.mode, chains: t.chains.length, quarantined: t.quarantined.length, metrics: t.metrics };
}
