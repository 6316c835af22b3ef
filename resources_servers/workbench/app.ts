/**
 * workbench: the WorkBench workplace environment. 27 tools (email, calendar, analytics, project
 * management, CRM, company directory) over tables that each session gets a fresh copy of at
 * `seed_session`; verify replays the model's function calls and the ground truth in two fresh
 * environments and gives 1.0 when the five tables end up equal.
 */
import { z } from 'zod';
import { HttpError } from '@nemo-gym/core/errors';
import { LaxInt, pyJsonDumps } from '@nemo-gym/core/py';
import { BaseSeedSessionRequestSchema, BaseVerifyRequestSchema, defineResourcesServer, RawJson, requestSessionId, ResourcesServerConfigSchema, notAnObjectDetail, SessionStore, startIfMain, validationError, type HandlerContext } from '@nemo-gym/core/server';
import { WorkerPool } from '@nemo-gym/core/workers';
import { DEFAULT_CSV_DATA_URL, loadWorkbenchData, type WorkbenchData } from './src/data.js';
import { PyException, type Value } from './src/py.js';
import { predictedCalls, reward } from './src/replay.js';
import { callTool, Environment, TOOLS } from './src/tools.js';

export const WorkbenchConfigSchema = ResourcesServerConfigSchema.extend({
  /** Folder holding upstream's csv_data (processed/*.csv and raw/email_addresses.csv). */
  csv_data_dir: z.string().nullable().optional(),
  /** Where the data is downloaded from on first use when no folder has it; null disables downloading. */
  csv_data_url: z.string().nullable().default(DEFAULT_CSV_DATA_URL),
  /** Seconds after its last call before an unverified session's environment is dropped. */
  session_idle_ttl_s: z.number().positive().default(3600),
  /** Upper bound on live sessions; the least recently used are dropped beyond it. */
  max_sessions: z.number().int().positive().default(100_000),
  /** Worker threads that replay the call lists of /verify (0: on the event loop; default: cores - 1, at least 1). */
  verify_workers: z.number().int().min(0).nullable().default(null),
  /** Time limit of one verify's replay in a worker, in seconds. */
  verify_timeout_s: z.number().positive().default(60),
});
type Config = z.output<typeof WorkbenchConfigSchema>;

/** A tool's body: any JSON object (upstream's model allows every key). */
const ToolBodySchema = z.custom<Record<string, unknown>>((v) => v !== null && typeof v === 'object' && !Array.isArray(v), {
  message: 'Input should be a valid dictionary or object to extract fields from',
});

const FunctionCallSchema = z.record(z.string(), z.string());
export const WorkbenchVerifyRequestSchema = BaseVerifyRequestSchema.extend({
  ground_truth: z.union([z.array(FunctionCallSchema), z.string()]),
  id: LaxInt,
  category: z.string(),
  environment_name: z.string(),
});

export interface State {
  data: WorkbenchData;
  /** The folder the tables were read from (workers read it again). */
  dataDir: string;
  sessions: SessionStore<Environment>;
  pool: WorkerPool | null;
}

const NOT_SEEDED = 'Session not initialized. Please call seed_session first.';

function sessionEnvironment(state: State, sessionId: string): Environment {
  const env = state.sessions.get(sessionId);
  if (env) return env;
  state.sessions.assertNotDropped(sessionId);
  throw new HttpError(400, NOT_SEEDED);
}

/** The tool route's answer body, serialized as upstream's FastAPI does (compact, floats as Python writes them). */
function toolAnswer(output: Value): RawJson {
  return new RawJson(pyJsonDumps({ output }, { separators: [',', ':'], ensureAscii: false }));
}

/**
 * `POST /<name>`: the tool with the body's non-null keys as keyword arguments. Every Python-level
 * failure becomes `Error executing tool '<name>': <message>` (HTTP 200), which the agent shows
 * the model so that it can correct itself.
 */
export function runToolRoute(state: State, sessionId: string, name: string, body: unknown, log?: { error(m: string): void }): RawJson {
  if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) {
    throw validationError(notAnObjectDetail(body));
  }
  const env = sessionEnvironment(state, sessionId);
  const kwargs = Object.entries((body ?? {}) as Record<string, Value>).filter(([, v]) => v !== null);
  try {
    return toolAnswer(callTool(env, name, kwargs));
  } catch (e) {
    if (!(e instanceof PyException)) log?.error(`tool ${name} failed: ${(e as Error).stack ?? String(e)}`);
    return toolAnswer(`Error executing tool '${name}': ${e instanceof Error ? e.message : String(e)}`);
  }
}

export const server = defineResourcesServer({
  className: 'WorkbenchResourcesServer',
  configSchema: WorkbenchConfigSchema,
  setup: async ({ config, log }): Promise<State> => {
    const { dir, data } = await loadWorkbenchData({
      csvDataDir: config.csv_data_dir,
      downloadUrl: config.csv_data_url ?? false,
      log: (m) => log.info(m),
    });
    const sessions = new SessionStore<Environment>({
      idleTtlMs: config.session_idle_ttl_s * 1000,
      maxSessions: config.max_sessions,
      what: 'The environment of this session',
    }).startSweeping();
    const pool =
      config.verify_workers !== 0
        ? new WorkerPool(new URL('./src/worker.ts', import.meta.url), {
            size: config.verify_workers ?? undefined,
            taskTimeoutMs: config.verify_timeout_s * 1000,
          })
        : null;
    // start the worker and read the tables there before the first rollout arrives
    if (pool) await pool.run('verifyReward', [dir, [], []]);
    return { data, dataDir: dir, sessions, pool };
  },
  close: async ({ state }) => {
    state.sessions.close();
    await state.pool?.close();
  },
  seedSession: {
    body: BaseSeedSessionRequestSchema.loose(),
    handler: (_body, ctx: HandlerContext<Config, State>) => {
      ctx.state.sessions.set(ctx.sessionId, new Environment(ctx.state.data));
      return {};
    },
  },
  tools: Object.fromEntries(
    [...TOOLS.keys()].map((name) => [
      name,
      {
        body: ToolBodySchema,
        handler: (body: Record<string, unknown>, ctx: HandlerContext<Config, State>) =>
          runToolRoute(ctx.state, ctx.sessionId, name, body, ctx.log),
      },
    ]),
  ),
  routes: (app, { state, log }) => {
    // Any other name: upstream's catch-all route answers with the KeyError text (after the session check).
    app.post<{ Params: { name: string } }>('/:name', async (request, reply) => {
      const out = runToolRoute(state, requestSessionId(request), request.params.name, request.body, log);
      return reply.status(out.status).type('application/json').send(out.text);
    });
  },
  verify: {
    body: WorkbenchVerifyRequestSchema,
    handler: async (body, ctx: HandlerContext<Config, State>) => {
      // The rollout ends here: its environment is no longer needed (verify replays from scratch).
      ctx.state.sessions.delete(ctx.sessionId);
      const predicted = predictedCalls(body.response.output as unknown[]);
      const { pool, data, dataDir } = ctx.state;
      const r = pool ? await pool.run<number>('verifyReward', [dataDir, predicted, body.ground_truth]) : reward(data, predicted, body.ground_truth, true);
      return { responses_create_params: body.responses_create_params, response: body.response, reward: r };
    },
  },
});

startIfMain(import.meta.url, server);
