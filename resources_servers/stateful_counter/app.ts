/**
 * stateful_counter: per-rollout state through the session cookie. `seed_session` sets the
 * counter, `increment_counter` adds to it, `get_counter_value` reads it, and verify gives 1.0
 * when the counter equals `expected_count`.
 */
import { z } from 'zod';
import { HttpError } from '@nemo-gym/core/errors';
import { LaxInt } from '@nemo-gym/core/py';
import { BaseVerifyRequestSchema, defineResourcesServer, requestSessionId, ResourcesServerConfigSchema, startIfMain } from '@nemo-gym/core/server';
import { CounterStore } from './src/store.js';

/** A call for a session whose counter was dropped before its verify: never score it as a plain miss. */
function expired(store: CounterStore, sessionId: string, config: { session_idle_ttl_s: number; max_sessions: number }): void {
  const reason = store.droppedReason(sessionId);
  if (!reason) return;
  const why =
    reason === 'idle'
      ? `it was idle for more than session_idle_ttl_s = ${config.session_idle_ttl_s} s`
      : `more than max_sessions = ${config.max_sessions} sessions were live`;
  throw new HttpError(410, `The counter of this session was dropped because ${why}; raise that setting in the server config and run the rollout again.`);
}

export const StatefulCounterConfigSchema = ResourcesServerConfigSchema.extend({
  /** Seconds after its last call before an unverified session's counter is dropped. */
  session_idle_ttl_s: z.number().positive().default(3600),
  /** Upper bound on live sessions; the least recently used are dropped beyond it. */
  max_sessions: z.number().int().positive().default(100_000),
});

export const SeedSessionRequestSchema = z.object({ initial_count: LaxInt });
export const IncrementCounterRequestSchema = z.object({ count: LaxInt });
export const StatefulCounterVerifyRequestSchema = BaseVerifyRequestSchema.extend({ expected_count: LaxInt });

interface State {
  store: CounterStore;
  timer: NodeJS.Timeout;
}

export const server = defineResourcesServer({
  className: 'StatefulCounterResourcesServer',
  configSchema: StatefulCounterConfigSchema,
  setup: ({ config }): State => {
    const store = new CounterStore({ idleTtlMs: config.session_idle_ttl_s * 1000, maxSessions: config.max_sessions });
    // idle sessions are also swept without traffic; the timer never keeps the process alive
    const timer = setInterval(() => store.sweep(), Math.min(60_000, config.session_idle_ttl_s * 1000));
    timer.unref();
    return { store, timer };
  },
  close: ({ state }) => {
    clearInterval(state.timer);
    state.store.clear();
  },
  seedSession: {
    body: SeedSessionRequestSchema,
    handler: ({ initial_count }, ctx) => {
      ctx.state.store.seed(ctx.sessionId, initial_count);
      return {};
    },
  },
  tools: {
    increment_counter: {
      body: IncrementCounterRequestSchema,
      handler: ({ count }, ctx) => {
        expired(ctx.state.store, ctx.sessionId, ctx.config);
        const current = ctx.state.store.setDefault(ctx.sessionId, 0);
        ctx.state.store.set(ctx.sessionId, current + count);
        return { success: true };
      },
    },
  },
  routes: (app, { state, config }) => {
    // Takes no arguments: answers with or without a JSON body, like upstream.
    app.post('/get_counter_value', async (request, reply) => {
      const sessionId = requestSessionId(request);
      expired(state.store, sessionId, config);
      return reply.type('application/json').send(JSON.stringify({ count: state.store.setDefault(sessionId, 0) }));
    });
  },
  verify: {
    body: StatefulCounterVerifyRequestSchema,
    handler: (body, ctx) => {
      expired(ctx.state.store, ctx.sessionId, ctx.config);
      // The rollout ends here, so its counter is freed.
      const counter = ctx.state.store.take(ctx.sessionId);
      const reward = counter === undefined ? 0.0 : body.expected_count === counter ? 1.0 : 0.0;
      return { responses_create_params: body.responses_create_params, response: body.response, reward };
    },
  },
});

startIfMain(import.meta.url, server);
