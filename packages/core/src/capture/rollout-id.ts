/**
 * The identity of one rollout on the model server: the path segment of `/ng-rollout/<id>/…` and
 * the key its capture is kept under. Derived as upstream derives it (nemo_gym/rollout_correlation.py):
 * an explicit `_ng_rollout_id`, else `<task>-<repeat>` from `_ng_task_index` and
 * `_ng_rollout_index`, plus `-a<n>` for a re-dispatch (`_ng_attempt_index` > 0). A malformed
 * explicit id is refused, never rewritten: a rewritten key is one the caller cannot look up.
 */
import { RolloutIdError } from '../errors.js';

/** The first path segment of a per-rollout route. */
export const ROLLOUT_PATH_PREFIX = 'ng-rollout';
/** Letters, digits, dots, dashes and underscores, starting with a letter or digit (no `..`, no leading dot). */
export const ROLLOUT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Longest id accepted (it is a path segment and a map key). */
export const MAX_ROLLOUT_ID_LENGTH = 200;

export const ROLLOUT_ID_KEY = '_ng_rollout_id';
export const TASK_INDEX_KEY = '_ng_task_index';
export const ROLLOUT_INDEX_KEY = '_ng_rollout_index';
export const ATTEMPT_INDEX_KEY = '_ng_attempt_index';

/** Why `id` is not a rollout id, or null when it is one. */
export function rolloutIdProblem(id: unknown): string | null {
  if (typeof id !== 'string') return `a rollout id must be a string; got ${id === null ? 'null' : typeof id}`;
  if (id.length > MAX_ROLLOUT_ID_LENGTH) return `a rollout id is at most ${MAX_ROLLOUT_ID_LENGTH} characters; got ${id.length}`;
  if (!ROLLOUT_ID_PATTERN.test(id)) {
    return `a rollout id is letters, digits, dots, dashes or underscores, starting with a letter or digit; got ${JSON.stringify(id.slice(0, 80))}`;
  }
  return null;
}

function field(body: object, key: string): unknown {
  return (body as Record<string, unknown>)[key];
}

/**
 * The rollout id of a run request (`/run` body or a collector row), or null when it carries
 * neither an explicit id nor both indices. Throws RolloutIdError for a malformed explicit id or
 * attempt index.
 */
export function rolloutIdFromRunBody(body: unknown): string | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const explicit = field(body, ROLLOUT_ID_KEY);
  let id: string;
  if (explicit !== undefined && explicit !== null) {
    const problem = rolloutIdProblem(explicit);
    if (problem) throw new RolloutIdError(`${ROLLOUT_ID_KEY}: ${problem}`);
    id = explicit as string;
  } else {
    const task = field(body, TASK_INDEX_KEY);
    const repeat = field(body, ROLLOUT_INDEX_KEY);
    if (task === undefined || task === null || repeat === undefined || repeat === null) return null;
    if (!Number.isInteger(task) || !Number.isInteger(repeat) || (task as number) < 0 || (repeat as number) < 0) {
      throw new RolloutIdError(`${TASK_INDEX_KEY} and ${ROLLOUT_INDEX_KEY} must be non-negative integers; got ${JSON.stringify(task)} and ${JSON.stringify(repeat)}`);
    }
    id = `${task as number}-${repeat as number}`;
  }
  const attempt = field(body, ATTEMPT_INDEX_KEY);
  if (attempt !== undefined && attempt !== null) {
    if (!Number.isInteger(attempt) || (attempt as number) < 0) throw new RolloutIdError(`${ATTEMPT_INDEX_KEY} must be a non-negative integer; got ${JSON.stringify(attempt)}`);
    if ((attempt as number) > 0) id = `${id}-a${attempt as number}`;
  }
  return id;
}

/** `/ng-rollout/<id>` (no trailing slash): prepend it to a model server's base URL or route. */
export function rolloutPath(id: string): string {
  const problem = rolloutIdProblem(id);
  if (problem) throw new RolloutIdError(problem);
  return `/${ROLLOUT_PATH_PREFIX}/${id}`;
}

const PREFIX = `/${ROLLOUT_PATH_PREFIX}/`;

/** A URL with its per-rollout prefix taken off. */
export type RolloutPathMatch = { rolloutId: string; rest: string } | { problem: string };

/**
 * Splits `/ng-rollout/<id>/<rest>` into the id and `/<rest>` (query kept); null for a URL without
 * the prefix; `{ problem }` for a malformed id or a missing route after it.
 */
export function parseRolloutPath(url: string): RolloutPathMatch | null {
  if (!url.startsWith(PREFIX)) return null;
  const end = url.indexOf('/', PREFIX.length);
  const q = url.indexOf('?', PREFIX.length);
  const idEnd = end === -1 ? (q === -1 ? url.length : q) : q !== -1 && q < end ? q : end;
  let id = url.slice(PREFIX.length, idEnd);
  if (id.includes('%')) {
    try {
      id = decodeURIComponent(id);
    } catch {
      return { problem: `the rollout id in ${url.slice(0, 120)} is not valid percent-encoding` };
    }
  }
  const problem = rolloutIdProblem(id);
  if (problem) return { problem: `${problem} (in ${url.slice(0, 120)})` };
  if (end === -1 || (q !== -1 && q < end)) return { problem: `${url.slice(0, 120)} names a rollout but no route; use /${ROLLOUT_PATH_PREFIX}/<id>/v1/chat/completions, …/v1/responses, …/capture` };
  return { rolloutId: id, rest: url.slice(end) };
}
