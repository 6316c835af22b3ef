/**
 * The capture routes of a model server, served under a rollout's prefix:
 *   GET    /ng-rollout/<id>/capture     the rollout's captured calls (`?release=true` drops them after)
 *   DELETE /ng-rollout/<id>/capture     drops them ({"released": true|false})
 *   GET    /ng-rollout/<id>/trajectory  the rebuilt trajectory (buildTrajectory; releases the capture
 *                                       unless `?release=false`; `?mode=prefix_merging|per_call`)
 * `?require_token_ids=true` on the GETs answers 422 (NG_ERR_CAPTURE_NO_TOKEN_IDS) when a call has no ids.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CaptureNoTokenIdsError, RolloutIdError } from '../errors.js';
import { rolloutMarkOf } from './recorder.js';
import { ROLLOUT_PATH_PREFIX } from './rollout-id.js';
import type { CaptureStore, RolloutCapture } from './store.js';
import { buildTrajectory, trajectoryJson, TRAJECTORY_MODES, type TrajectoryMode } from './trajectory.js';

/** The rollout id of a request to a model server (its URL had `/ng-rollout/<id>/`), or null. */
export function requestRolloutId(request: FastifyRequest): string | null {
  return rolloutMarkOf(request.raw)?.rolloutId ?? null;
}

function idOf(request: FastifyRequest, route: string): string {
  const id = requestRolloutId(request);
  if (id === null) throw new RolloutIdError(`${route} is served per rollout: use /${ROLLOUT_PATH_PREFIX}/<rollout_id>${route}`);
  return id;
}

function flag(query: unknown, key: string, fallback: boolean): boolean {
  const v = (query as Record<string, unknown> | undefined)?.[key];
  if (v === undefined) return fallback;
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

export function mountCaptureRoutes(app: FastifyInstance, store: CaptureStore, serverName: string): void {
  app.get('/capture', async (request) => {
    const id = idOf(request, '/capture');
    const capture = store.get(id);
    if (flag(request.query, 'require_token_ids', false)) requireIds(capture, serverName);
    if (flag(request.query, 'release', false)) store.release(id);
    return capture;
  });
  app.delete('/capture', async (request) => ({ rollout_id: idOf(request, '/capture'), released: store.release(idOf(request, '/capture')) }));
  app.get('/trajectory', async (request, reply) => {
    const id = idOf(request, '/trajectory');
    const modeRaw = (request.query as Record<string, unknown> | undefined)?.mode ?? store.settings.builder;
    if (!(TRAJECTORY_MODES as readonly unknown[]).includes(modeRaw)) throw new RolloutIdError(`?mode= is one of ${TRAJECTORY_MODES.join(', ')}; got ${JSON.stringify(modeRaw)}`);
    const capture = store.get(id);
    if (flag(request.query, 'require_token_ids', false)) requireIds(capture, serverName);
    const trajectory = buildTrajectory(capture, modeRaw as TrajectoryMode);
    if (flag(request.query, 'release', true)) store.release(id);
    return reply.type('application/json').send(trajectoryJson(trajectory));
  });
}
