/**
 * Gymnasium-style environments on a resources server (upstream's `GymnasiumServer`): the server
 * answers `POST /reset` (start an episode: observation | null, info) and `POST /step` (apply the
 * model's response: observation | null, reward, terminated, truncated, info), and `POST /close`
 * (end the episode now). `gymnasium_agent` drives them: reset, then model ↔ step.
 *
 * The episode of a session lives in a SessionStore (idle TTL and a cap, like every per-session
 * state). Two things upstream leaves to each environment are done here once:
 * - a step carrying a step key (`_ng_step_request_id`) is applied once: a retry of the last key
 *   (the connection was lost after the server had the request) gets the first answer again;
 * - steps of one session run one after another, and a step after the episode ended is refused.
 * The reset answer's info says so (`supports_step_idempotency`, `supports_explicit_close`), as
 * upstream's environments that offer them do, so upstream's agent uses them too.
 */
import { z } from 'zod';
import { HttpError, NgError } from '../errors.js';
import { ResponseCreateParamsSchema, ResponseSchema, type NeMoGymResponse } from '../openai/schemas.js';
import { ResourcesServerConfigSchema } from './config.js';
import type { HandlerContext, Route, SetupContext } from './define.js';
import { SessionStore } from './session-store.js';

type Json = Record<string, unknown>;

/** The field of a /step body that carries the step key (upstream's name). */
export const STEP_KEY_FIELD = '_ng_step_request_id';
/** The longest step key accepted. */
const MAX_STEP_KEY = 128;

export const EnvResetRequestSchema = z.looseObject({ responses_create_params: ResponseCreateParamsSchema });
export const EnvStepRequestSchema = EnvResetRequestSchema.extend({
  response: ResponseSchema,
  [STEP_KEY_FIELD]: z.string().min(1).max(MAX_STEP_KEY).optional(),
});
export const EnvResetResponseSchema = z.object({ observation: z.string().nullable().default(null), info: z.record(z.string(), z.unknown()).default({}) });
export const EnvStepResponseSchema = z.object({
  observation: z.string().nullable().default(null),
  reward: z.number().default(0),
  terminated: z.boolean().default(false),
  truncated: z.boolean().default(false),
  info: z.record(z.string(), z.unknown()).default({}),
});
export type EnvResetResponse = z.infer<typeof EnvResetResponseSchema>;
export type EnvStepResponse = z.infer<typeof EnvStepResponseSchema>;

/** The config of a Gymnasium-style server: how long an unused episode is kept, and how many at most. */
export const GymnasiumServerConfigSchema = ResourcesServerConfigSchema.extend({
  /** Seconds after its last call before an episode that was not closed is dropped. */
  session_idle_ttl_s: z.number().positive().default(3600),
  /** Upper bound on open episodes; the least recently used are dropped beyond it. */
  max_sessions: z.number().int().positive().default(100_000),
});

/** What `reset` returns: the first observation (null: the row's prompt as it is) and info. */
export interface ResetResult {
  observation?: string | null;
  info?: Json;
}

/** What `step` returns (upstream's 5-tuple). */
export interface StepResult {
  /** The next user message, or null. */
  observation?: string | null;
  reward?: number;
  /** The episode ended on its own (game over, task solved). */
  terminated?: boolean;
  /** The episode was cut short by the environment. */
  truncated?: boolean;
  /** Anything the environment reports; `tool_outputs` ({call_id, output}[]) answers the model's function calls. */
  info?: Json;
}

/** One session's episode: its id and the state the environment keeps for it (undefined before reset). */
export interface Episode<E> {
  readonly id: string;
  state: E | undefined;
}

/**
 * A Gymnasium-style environment, declared in `defineResourcesServer({ gymnasium: … })`. `metadata`
 * is the row without `responses_create_params` (and without the step key); `action` is the
 * model's response of this turn.
 */
export interface GymnasiumEnv<C, S, E = unknown> {
  /** Starts an episode (default: no observation, the row's prompt as it is). */
  reset?(metadata: Json, episode: Episode<E>, ctx: HandlerContext<C, S>): ResetResult | Promise<ResetResult>;
  step(action: NeMoGymResponse, metadata: Json, episode: Episode<E>, ctx: HandlerContext<C, S>): StepResult | Promise<StepResult>;
  /** Releases what an episode holds: called once when it ends, is closed, is reset again or is dropped. */
  close?(episode: Episode<E>, ctx: SetupContext<C> & { state: S }): void | Promise<void>;
}

/** The `{call_id, output}` an environment puts in `info.tool_outputs` for one function call (upstream's `tool_output`). */
export function toolOutput(call: { call_id: string }, result: unknown): { call_id: string; output: string } {
  return { call_id: call.call_id, output: typeof result === 'string' ? result : JSON.stringify(result ?? null) };
}

interface EpisodeEntry {
  episode: Episode<unknown>;
  /** Terminated or truncated: no new step is applied. */
  ended: boolean;
  released: boolean;
  /** The last keyed step and its answer (a promise: a retry that arrives while it runs waits for it). */
  last: { key: string; answer: Promise<EnvStepResponse> } | undefined;
  /** The tail of this episode's steps, so they run one after another. */
  tail: Promise<unknown>;
  running: number;
}

type AnyRoute = Route<unknown, unknown, z.ZodType>;

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

function checkResult<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new TypeError(`${what} returned an invalid result: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

/** The /reset, /step and /close routes of one server instance (made once per build). */
export function gymnasiumRoutes<C, S>(className: string, env: GymnasiumEnv<C, S, unknown>, setupCtx: SetupContext<C> & { state: S }): { path: string; route: AnyRoute }[] {
  const config = setupCtx.config as { session_idle_ttl_s?: unknown; max_sessions?: unknown };
  const ttl = typeof config.session_idle_ttl_s === 'number' ? config.session_idle_ttl_s : 3600;
  const cap = typeof config.max_sessions === 'number' ? config.max_sessions : 100_000;

  const release = (entry: EpisodeEntry): Promise<void> => {
    if (entry.released) return Promise.resolve();
    entry.released = true;
    return Promise.resolve()
      .then(() => env.close?.(entry.episode, setupCtx))
      .then(
        () => {
          entry.episode.state = undefined;
        },
        (err: unknown) => {
          entry.episode.state = undefined;
          setupCtx.log.error(`${className}: closing episode ${entry.episode.id} failed: ${describe(err)}`);
        },
      );
  };
  const store = new SessionStore<EpisodeEntry>({
    idleTtlMs: ttl * 1000,
    maxSessions: cap,
    isBusy: (e) => e.running > 0,
    onDrop: (_id, e) => void release(e),
    what: 'The episode of this session',
  }).startSweeping();

  const metadataOf = (body: Json): Json => {
    const { responses_create_params: _p, response: _r, [STEP_KEY_FIELD]: _k, ...rest } = body;
    return rest;
  };

  const reset: AnyRoute = {
    body: EnvResetRequestSchema,
    handler: async (body, ctx) => {
      const c = ctx as HandlerContext<C, S>;
      const previous = store.take(c.sessionId);
      if (previous) {
        // A reset on a session with an open episode ends it first (after a step still running on it).
        await previous.tail;
        await release(previous);
      }
      const entry: EpisodeEntry = { episode: { id: c.sessionId, state: undefined }, ended: false, released: false, last: undefined, tail: Promise.resolve(), running: 0 };
      let result: EnvResetResponse;
      try {
        const out = env.reset ? await env.reset(metadataOf(body as Json), entry.episode, c) : {};
        result = checkResult(EnvResetResponseSchema, out, `${className}.reset`);
      } catch (err) {
        await release(entry);
        if (err instanceof NgError && err.code !== 'NG_ERR_INTERNAL') throw err;
        throw new NgError('NG_ERR_ENV_RESET_FAILED', `${className}: reset failed: ${describe(err)}`, { cause: err });
      }
      store.set(c.sessionId, entry);
      return { observation: result.observation, info: { ...result.info, supports_step_idempotency: true, supports_explicit_close: true } };
    },
  };

  const applyStep = async (entry: EpisodeEntry, body: Json, c: HandlerContext<C, S>): Promise<EnvStepResponse> => {
    if (entry.ended || entry.released) throw new NgError('NG_ERR_ENV_NO_EPISODE', `${className}: the episode of this session has ended; call /reset to start another`);
    let result: EnvStepResponse;
    try {
      const out = await env.step(body.response as NeMoGymResponse, metadataOf(body), entry.episode, c);
      result = checkResult(EnvStepResponseSchema, out, `${className}.step`);
    } catch (err) {
      if (err instanceof NgError && err.code !== 'NG_ERR_INTERNAL') throw err;
      throw new NgError('NG_ERR_ENV_STEP_FAILED', `${className}: step failed: ${describe(err)}`, { cause: err });
    }
    if (result.terminated || result.truncated) {
      // Kept (without its state) until /close or idleness, so a retried last step is still answered.
      entry.ended = true;
      await release(entry);
    }
    return result;
  };

  const step: AnyRoute = {
    body: EnvStepRequestSchema,
    handler: (body, ctx) => {
      const c = ctx as HandlerContext<C, S>;
      const b = body as Json;
      const entry = store.get(c.sessionId);
      if (!entry) {
        throw store.droppedError(c.sessionId) ?? new NgError('NG_ERR_ENV_NO_EPISODE', `${className}: this session has no episode; call /reset first with the same session cookie`);
      }
      const key = b[STEP_KEY_FIELD] as string | undefined;
      if (key !== undefined && entry.last?.key === key) return entry.last.answer;
      entry.running++;
      const answer = entry.tail.then(() => applyStep(entry, b, c)).finally(() => entry.running--);
      entry.tail = answer.catch(() => undefined);
      if (key !== undefined) entry.last = { key, answer };
      return answer;
    },
  };

  const close: AnyRoute = {
    body: z.looseObject({}),
    handler: async (_body, ctx) => {
      const entry = store.take(ctx.sessionId);
      if (entry) {
        await entry.tail;
        await release(entry);
      }
      return {};
    },
  };

  return [
    { path: '/reset', route: reset },
    { path: '/step', route: step },
    { path: '/close', route: close },
  ];
}

/** The /verify of a Gymnasium-style server that has none: it scores in /step. */
export function noVerifyRoute(className: string): AnyRoute {
  return {
    body: z.looseObject({}),
    handler: () => {
      throw new HttpError(501, `${className} is a Gymnasium-style environment: it scores in /step, not /verify; run it with gymnasium_agent`);
    },
  };
}
