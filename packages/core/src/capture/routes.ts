/**
 * The capture routes of a model server, served under a rollout's prefix:
 *   GET    /ng-rollout/<id>/capture     the rollout's captured calls (`?release=true` drops them after)
 *   DELETE /ng-rollout/<id>/capture     drops them ({"released": true|false})
 *   GET    /ng-rollout/<id>/trajectory  the rebuilt trajectory (buildTrajectory; releases the capture
 *                                       unless `?release=false`; `?mode=prefix_merging|per_call`;
 *                                       `?prompt_ids=delta` writes each prompt that continues the
 *                                       previous one as its new tokens only, see expandPromptDeltas)
 * `?require_token_ids=true` on the GETs answers 422 (NG_ERR_CAPTURE_NO_TOKEN_IDS) when a call has no ids.
 *
 * They are answered on the server's fast path, straight from node:http (an agent fetches a
 * trajectory once per rollout, and it is the largest answer a model server gives), with or without
 * the prefix (without it, a 400 says how to call them).
 */
import { CaptureNoTokenIdsError, RolloutIdError } from '../errors.js';
import { RawJson } from '../http/raw-json.js';
import { ROLLOUT_PATH_PREFIX } from './rollout-id.js';
import type { CaptureStore, RolloutCapture } from './store.js';
import { buildTrajectory, trajectoryJson, TRAJECTORY_MODES, type PromptIds, type TrajectoryMode } from './trajectory.js';

/** The capture routes, as `<METHOD> <path>` (the path after the rollout prefix). */
export const CAPTURE_ROUTES = ['GET /capture', 'DELETE /capture', 'GET /trajectory'] as const;
export type CaptureRoute = (typeof CAPTURE_ROUTES)[number];

const ROUTE_SET: ReadonlySet<string> = new Set(CAPTURE_ROUTES);

export function isCaptureRoute(methodAndPath: string): methodAndPath is CaptureRoute {
  return ROUTE_SET.has(methodAndPath);
}

type Query = (key: string) => string | null | undefined;

function idOf(rolloutId: string | null, path: string): string {
  if (rolloutId === null) throw new RolloutIdError(`${path} is served per rollout: use /${ROLLOUT_PATH_PREFIX}/<rollout_id>${path}`);
  return rolloutId;
}

function flag(query: Query, key: string, fallback: boolean): boolean {
  const v = query(key);
  if (v === undefined || v === null) return fallback;
  if (v === 'true' || v === '1' || v === '') return true;
  if (v === 'false' || v === '0') return false;
  throw new RolloutIdError(`?${key}= takes true or false; got ${JSON.stringify(v)}`);
}

function requireIds(c: RolloutCapture, serverName: string): void {
  const missing = c.calls.filter((e) => !e.has_token_ids);
  if (missing.length === 0) return;
  throw new CaptureNoTokenIdsError(
    `rollout ${c.rollout_id}: ${missing.length} of ${c.calls.length} call(s) on model server \`${serverName}\` have no token ids (${missing[0]!.missing_ids_reason ?? 'the backend gave none'})`,
  );
}

/**
 * The answer of one capture route for a request whose URL had `/ng-rollout/<rolloutId>/` (null:
 * it had none, which is refused). Throws the route's HTTP errors.
 */
export function captureAnswer(route: CaptureRoute, rolloutId: string | null, query: Query, store: CaptureStore, serverName: string): RawJson {
  const path = route.slice(route.indexOf(' ') + 1);
  const id = idOf(rolloutId, path);
  if (route === 'DELETE /capture') return new RawJson(JSON.stringify({ rollout_id: id, released: store.release(id) }));
  if (route === 'GET /capture') {
    const capture = store.get(id);
    if (flag(query, 'require_token_ids', false)) requireIds(capture, serverName);
    if (flag(query, 'release', false)) store.release(id);
    return new RawJson(JSON.stringify(capture));
  }
  const modeRaw = query('mode') ?? store.settings.builder;
  if (!(TRAJECTORY_MODES as readonly unknown[]).includes(modeRaw)) throw new RolloutIdError(`?mode= is one of ${TRAJECTORY_MODES.join(', ')}; got ${JSON.stringify(modeRaw)}`);
  const promptIds = query('prompt_ids') ?? 'full';
  if (promptIds !== 'full' && promptIds !== 'delta') throw new RolloutIdError(`?prompt_ids= is full or delta; got ${JSON.stringify(promptIds)}`);
  const capture = store.get(id);
  if (flag(query, 'require_token_ids', false)) requireIds(capture, serverName);
  const trajectory = buildTrajectory(capture, modeRaw as TrajectoryMode);
  if (flag(query, 'release', true)) store.release(id);
  return new RawJson(trajectoryJson(trajectory, promptIds satisfies PromptIds));
}
