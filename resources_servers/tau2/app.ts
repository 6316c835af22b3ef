/**
 * tau2: tau2-bench's retail domain. Sixteen tools (users, orders, products, exchanges, returns,
 * cancellations, a calculator, a transfer) over a per-session copy of the retail database, each
 * answering exactly the text tau2's environment gives the agent; `seed_session` sets a session up
 * from a task row's `task_id` / `initial_state`; `verify` scores the rollout as tau2's evaluator
 * does (database check against the gold actions, action and communicate checks, NL assertions
 * through a judge model when one is configured) and returns tau2's `reward_info`.
 */
import { z } from 'zod';
import { ModelServerRefSchema } from '@nemo-gym/core/config';
import { HttpError } from '@nemo-gym/core/errors';
import { askJudge, outputText, ResponseCreateParamsSchema } from '@nemo-gym/core/openai';
import { BaseVerifyRequestSchema, defineResourcesServer, RawJson, requestSessionId, ResourcesServerConfigSchema, SessionStore, startIfMain, type HandlerContext } from '@nemo-gym/core/server';
import { DEFAULT_DATA_URL, loadRetailData, type RetailData } from './src/data.js';
import { RetailDb } from './src/db.js';
import { evaluate, initialDb, JudgeAnswerError, TaskSetupError, type Judge } from './src/evaluate.js';
import { EvaluationCriteriaSchema, InitialStateSchema, type Task } from './src/task.js';
import { getResponse, TOOL_NAMES } from './src/tools.js';

export const Tau2ConfigSchema = ResourcesServerConfigSchema.extend({
  /** The tau2 domain served (only retail is ported). */
  tau2_domain: z.literal('retail').default('retail'),
  /** Folder holding db.json, tasks.json, policy.md and split_tasks.json (default: searched, else downloaded). */
  data_dir: z.string().nullable().default(null),
  /** Where the data is downloaded from on first use; null disables downloading. */
  data_url: z.string().nullable().default(DEFAULT_DATA_URL),
  /** The model that judges NL assertions; without it NL_ASSERTION is left out of the reward (and said so in reward_info). */
  judge_model_server: ModelServerRefSchema.nullable().default(null),
  /** Create params of the judge call (tau2 judges with temperature 0). */
  judge_responses_create_params: ResponseCreateParamsSchema.default({ input: [], temperature: 0 }),
  /** Seconds after its last call before an unverified session's database is dropped. */
  session_idle_ttl_s: z.number().positive().default(3600),
  /** Upper bound on live sessions; the least recently used are dropped beyond it. */
  max_sessions: z.number().int().positive().default(100_000),
});
type Config = z.output<typeof Tau2ConfigSchema>;

export interface State {
  data: RetailData;
  tasks: Map<string, Task>;
  sessions: SessionStore<RetailDb>;
  timer: NodeJS.Timeout;
}

const NOT_SEEDED = 'Session not initialized. Please call seed_session first.';

/** The task fields of a row (the rest of the row is accepted and ignored). */
const TaskFieldsSchema = z.object({
  task_id: z.string().nullable().optional(),
  initial_state: InitialStateSchema.nullable().optional(),
  evaluation_criteria: EvaluationCriteriaSchema.nullable().optional(),
});

export const SeedSessionRequestSchema = TaskFieldsSchema.loose();

export const Tau2VerifyRequestSchema = BaseVerifyRequestSchema.extend({
  ...TaskFieldsSchema.shape,
  /** How the conversation ended (tau2's TerminationReason value, e.g. user_stop, agent_stop, max_steps); absent: scored. */
  termination_reason: z.string().nullable().optional(),
}).loose();

/** A tool's body: its keyword arguments. */
const ToolBodySchema = z.record(z.string(), z.unknown());

function sessionDb(ctx: { state: State; config: Config }, sessionId: string): RetailDb {
  const db = ctx.state.sessions.get(sessionId);
  if (db) return db;
  const reason = ctx.state.sessions.droppedReason(sessionId);
  if (reason) {
    const why = reason === 'idle' ? `it was idle for more than session_idle_ttl_s = ${ctx.config.session_idle_ttl_s} s` : `more than max_sessions = ${ctx.config.max_sessions} sessions were live`;
    throw new HttpError(410, `The database of this session was dropped because ${why}; raise that setting in the server config and run the rollout again.`);
  }
  throw new HttpError(400, NOT_SEEDED);
}

/** The row's initial state, else its task's (by `task_id`). */
function initialStateOf(state: State, row: z.output<typeof TaskFieldsSchema>) {
  if (row.initial_state !== undefined) return row.initial_state;
  return row.task_id ? state.tasks.get(row.task_id)?.initial_state : null;
}

function withSetupErrors<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof TaskSetupError) throw new HttpError(422, e.message);
    throw e;
  }
}

/** The tool's answer: tau2's ToolMessage content, byte for byte (JSON for a record, plain text for a str or an error). */
function toolAnswer(db: RetailDb, name: string, args: Record<string, unknown>): RawJson {
  return new RawJson(getResponse(db, name, args).content);
}

function judgeFor(ctx: HandlerContext<Config, State>): Judge {
  const ref = ctx.config.judge_model_server;
  if (!ref) return undefined;
  return async (system, user) => {
    const params = {
      ...ctx.config.judge_responses_create_params,
      input: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
    };
    const response = await askJudge(ctx.client, ref.name, params, ctx.signal);
    return outputText(response);
  };
}

export const server = defineResourcesServer({
  className: 'Tau2ResourcesServer',
  configSchema: Tau2ConfigSchema,
  setup: async ({ config, log }): Promise<State> => {
    const data = await loadRetailData({ dataDir: config.data_dir, downloadUrl: config.data_url ?? false, log: (m) => log.info(m) });
    const sessions = new SessionStore<RetailDb>({ idleTtlMs: config.session_idle_ttl_s * 1000, maxSessions: config.max_sessions });
    const timer = setInterval(() => sessions.sweep(), Math.min(60_000, config.session_idle_ttl_s * 1000));
    timer.unref();
    return { data, tasks: new Map(data.tasks.map((t) => [t.id, t])), sessions, timer };
  },
  close: ({ state }) => {
    clearInterval(state.timer);
    state.sessions.clear();
  },
  seedSession: {
    body: SeedSessionRequestSchema,
    handler: (body, ctx: HandlerContext<Config, State>) => {
      const db = withSetupErrors(() => initialDb(ctx.state.data.records, initialStateOf(ctx.state, body)));
      ctx.state.sessions.set(ctx.sessionId, db);
      return {};
    },
  },
  tools: Object.fromEntries(
    TOOL_NAMES.map((name) => [
      name,
      {
        body: ToolBodySchema,
        handler: (body: Record<string, unknown>, ctx: HandlerContext<Config, State>) => toolAnswer(sessionDb(ctx, ctx.sessionId), name, body),
      },
    ]),
  ),
  routes: (app, ctx) => {
    // Any other name: tau2's answer to a tool it does not have.
    app.post<{ Params: { name: string } }>('/:name', async (request, reply) => {
      sessionDb(ctx, requestSessionId(request));
      return reply.type('application/json').send(`Error: Tool '${request.params.name}' not found.`);
    });
  },
  verify: {
    body: Tau2VerifyRequestSchema,
    handler: async (body, ctx: HandlerContext<Config, State>) => {
      // The rollout ends here; scoring replays its calls from the task's initial state.
      ctx.state.sessions.delete(ctx.sessionId);
      const task = body.task_id ? ctx.state.tasks.get(body.task_id) : undefined;
      const criteria = body.evaluation_criteria !== undefined ? body.evaluation_criteria : task?.evaluation_criteria;
      if (criteria === undefined && body.task_id) throw new HttpError(422, `task_id ${JSON.stringify(body.task_id)} is not a task of the loaded tasks.json and the row carries no evaluation_criteria`);
      const input = body.responses_create_params.input;
      const items = [...(Array.isArray(input) ? input : typeof input === 'string' ? [{ role: 'user', content: input }] : []), ...body.response.output];
      let rewardInfo;
      try {
        rewardInfo = await evaluate({
          base: ctx.state.data.records,
          criteria,
          initialState: initialStateOf(ctx.state, body),
          items,
          terminationReason: body.termination_reason,
          judge: judgeFor(ctx),
        });
      } catch (e) {
        if (e instanceof TaskSetupError) throw new HttpError(422, e.message);
        if (e instanceof JudgeAnswerError) throw new HttpError(502, `judge model server \`${ctx.config.judge_model_server?.name}\`: ${e.message}`);
        throw e;
      }
      return { ...body, reward: rewardInfo.reward, reward_info: rewardInfo };
    },
  },
});

startIfMain(import.meta.url, server);
