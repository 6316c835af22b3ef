/**
 * stateful_counter: per-rollout state through the session cookie. `seed_session` sets the
 * counter, `increment_counter` adds to it, `get_counter_value` reads it, and verify gives 1.0
 * when the counter equals `expected_count`.
 */
import { z } from 'zod';
import { LaxInt } from '@nemo-gym/core/py';
import { BaseVerifyRequestSchema, defineResourcesServer, requestSessionId, ResourcesServerConfigSchema, startIfMain } from '@nemo-gym/core/server';
import { CounterStore } from './src/store.js';

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
}

export const server = defineResourcesServer({
  className: 'StatefulCounterResourcesServer',
  configSchema: StatefulCounterConfigSchema,
  setup: ({ config }): State => {
    // A call for a session whose counter was dropped before its verify answers 410: never scored as a plain miss.
    const store = new CounterStore({ idleTtlMs: config.session_idle_ttl_s * 1000, maxSessions: config.max_sessions, what: 'The counter of this session' });
    return { store: store.startSweeping() };
  },
  close: ({ state }) => {
    state.store.close();
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
        ctx.state.store.assertNotDropped(ctx.sessionId);
        const current = ctx.state.store.setDefault(ctx.sessionId, 0);
        ctx.state.store.set(ctx.sessionId, current + count);
        return { success: true };
      },
    },
  },
  routes: (app, { state }) => {
    // Takes no arguments: answers with or without a JSON body, like upstream.
    app.post('/get_counter_value', async (request, reply) => {
      const sessionId = requestSessionId(request);
      state.store.assertNotDropped(sessionId);
      return reply.type('application/json').send(JSON.stringify({ count: state.store.setDefault(sessionId, 0) }));
    });
  },
  verify: {
    body: StatefulCounterVerifyRequestSchema,
    handler: (body, ctx) => {
      ctx.state.store.assertNotDropped(ctx.sessionId);
      // The rollout ends here, so its counter is freed.
      const counter = ctx.state.store.take(ctx.sessionId);
      const reward = counter === undefined ? 0.0 : body.expected_count === counter ? 1.0 : 0.0;
      return { responses_create_params: body.responses_create_params, response: body.response, reward };
    },
  },
});

startIfMain(import.meta.url, server);
