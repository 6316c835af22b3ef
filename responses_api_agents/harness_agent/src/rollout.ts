// Which model URL a harness is given for one rollout, the rollout's id, and the response built
// after the run: from the model server's token capture (`/ng-rollout/<id>/trajectory`) when
// capture is on, else from the harness's own event stream.
import { randomUUID } from 'node:crypto';
import { applyTrajectory, rolloutIdFromRunBody, rolloutPath, type Trajectory } from '@nemo-gym/core/capture';

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

export interface ModelRouting {
  /** Give the harness `<model_server>/ng-rollout/<id>/v1` instead of `<model_server>/v1`. */
  perRolloutRoutes: boolean;
}

/** The model server's address (`http://host:port`, no path) → the base URL (ending in `/v1`) a
 * harness of this rollout calls. */
export function modelBaseUrl(serverUrl: string, rolloutId: string, routing: ModelRouting): string {
  const root = serverUrl.replace(/\/+$/, '');
  return routing.perRolloutRoutes ? `${root}${rolloutPath(rolloutId)}/v1` : `${root}/v1`;
}

export interface AssembleInput {
  rolloutId: string;
  model: string;
  /** What the harness's own event stream says it did. */
  transcript: { output: Record<string, unknown>[]; usage: { input_tokens: number; output_tokens: number } };
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
 * with their token ids) when there is one, else the items rebuilt from the harness's event stream
 * (no token ids). With capture on, anything short of one whole chain masks the sample, with the
 * builder's reason; `metadata.trajectory_source` says where the output came from.
 */
export function assembleResponse(input: AssembleInput): AssembledResponse {
  const { input_tokens, output_tokens } = input.transcript.usage;
  const base = {
    id: `resp_${input.rolloutId}`,
    created_at: Math.floor(Date.now() / 1000),
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: { rollout_id: input.rolloutId, trajectory_source: 'harness_events' },
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
  const source = applied.replaced ? `capture_${t.mode}` : 'harness_events';
  const response = { ...applied.response, metadata: { rollout_id: input.rolloutId, trajectory_source: source } };
  return { response, maskSample: applied.mask_sample, failureReason: applied.mask_sample ? applied.failure_reason : null };
}
