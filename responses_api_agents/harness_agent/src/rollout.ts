// Which model URL a harness is given for one rollout, and the rollout's id. The one place that
// changes when the model servers serve per-rollout routes (`/ng-rollout/<rollout_id>/…`) and
// record token captures: `perRolloutRoutes` switches the URL, `captureAssembly` the response.
import { randomUUID } from 'node:crypto';
import { HarnessError } from './errors.js';

/** Upstream's rollout ids: letters, digits, `.`, `_`, `-`; at most 128 characters. */
const ROLLOUT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export interface RolloutIdentity {
  /** `_ng_rollout_id` when the row gives one, else `<task>-<repeat>` (plus `-a<n>` for a re-dispatch). */
  id: string;
  /** The id came from the row or the collector (not made up here). */
  derived: boolean;
}

function intField(row: Record<string, unknown>, key: string): number | null {
  const v = row[key];
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null;
}

/**
 * The rollout's id as upstream derives it: an explicit `_ng_rollout_id`, else
 * `<_ng_task_index>-<_ng_rollout_index>` with `-a<n>` when `_ng_attempt` > 1, else a fresh id.
 * A malformed explicit id is refused (null): the caller answers 422.
 */
export function rolloutIdentity(row: Record<string, unknown>): RolloutIdentity | null {
  const explicit = row._ng_rollout_id;
  if (explicit !== undefined && explicit !== null) {
    if (typeof explicit !== 'string' || !ROLLOUT_ID.test(explicit)) return null;
    return { id: explicit, derived: true };
  }
  const task = intField(row, '_ng_task_index');
  const repeat = intField(row, '_ng_rollout_index');
  if (task !== null && repeat !== null) {
    const attempt = intField(row, '_ng_attempt');
    return { id: `${task}-${repeat}${attempt !== null && attempt > 1 ? `-a${attempt - 1}` : ''}`, derived: true };
  }
  return { id: `r${randomUUID().replaceAll('-', '').slice(0, 16)}`, derived: false };
}

export interface ModelRouting {
  /** Give the harness `<model_server>/ng-rollout/<id>/v1` instead of `<model_server>/v1`.
   * Off until every model server serves the per-rollout routes. */
  perRolloutRoutes: boolean;
}

/** The model server's address (`http://host:port`, no path) → the base URL (ending in `/v1`) a
 * harness of this rollout calls. */
export function modelBaseUrl(serverUrl: string, rolloutId: string, routing: ModelRouting): string {
  const root = serverUrl.replace(/\/+$/, '');
  return routing.perRolloutRoutes ? `${root}/ng-rollout/${encodeURIComponent(rolloutId)}/v1` : `${root}/v1`;
}

export interface AssembleInput {
  rolloutId: string;
  model: string;
  /** What the harness's own event stream says it did. */
  transcript: { output: Record<string, unknown>[]; usage: { input_tokens: number; output_tokens: number } };
  /** Rebuild the generation items from the model server's token capture (not available yet). */
  capture: boolean;
}

/**
 * The rollout's Responses object. Today: the items rebuilt from the harness's event stream (no
 * token ids: a trainer cannot train on them). With capture: the model server's trajectory for
 * `rolloutId` (prefix-chained generation items with their token ids), the one switch to turn on
 * when the capture lands.
 */
export async function assembleResponse(input: AssembleInput): Promise<Record<string, unknown>> {
  if (input.capture) throw new HarnessError('token capture is not available on the model servers yet');
  const { input_tokens, output_tokens } = input.transcript.usage;
  return {
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
}
