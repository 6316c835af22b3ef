/**
 * table_bookings: a restaurant's booking desk, an environment for conversations with a simulated
 * user. The caller (played by user_simulation_agent's user model) wants a booking changed or
 * cancelled; the policy has to ask for what it needs, use the tools on the session's own copy of
 * the bookings, and hand over to a human when the request is outside its policy. Verify gives 1.0
 * when the session's bookings end exactly as the row's `expected_bookings`, else 0.0.
 */
import { z } from 'zod';
import { BaseVerifyRequestSchema, defineResourcesServer, ResourcesServerConfigSchema, SessionStore, startIfMain } from '@nemo-gym/core/server';

export const BookingSchema = z.object({
  booking_id: z.string(),
  name: z.string(),
  date: z.string(),
  time: z.string(),
  party_size: z.number().int().positive(),
  status: z.enum(['confirmed', 'cancelled']),
});
export type Booking = z.output<typeof BookingSchema>;

export const TableBookingsConfigSchema = ResourcesServerConfigSchema.extend({
  /** Seconds after its last call before an unverified session's bookings are dropped. */
  session_idle_ttl_s: z.number().positive().default(3600),
  max_sessions: z.number().int().positive().default(100_000),
  /** Party sizes above this are for a human (the policy must transfer). */
  max_party_size: z.number().int().positive().default(8),
});

export const SeedRequestSchema = z.object({ bookings: z.array(BookingSchema) }).loose();
export const VerifyRequestSchema = BaseVerifyRequestSchema.extend({ expected_bookings: z.array(BookingSchema) }).loose();

interface Desk {
  bookings: Map<string, Booking>;
  transferred: boolean;
}

const notFound = (id: string) => ({ error: `No booking with id ${JSON.stringify(id)}.` });

export const server = defineResourcesServer({
  className: 'TableBookingsResourcesServer',
  configSchema: TableBookingsConfigSchema,
  setup: ({ config }) => ({ desks: new SessionStore<Desk>({ idleTtlMs: config.session_idle_ttl_s * 1000, maxSessions: config.max_sessions, what: 'The bookings of this session' }).startSweeping() }),
  close: ({ state }) => {
    state.desks.close();
  },
  seedSession: {
    body: SeedRequestSchema,
    handler: ({ bookings }, ctx) => {
      ctx.state.desks.set(ctx.sessionId, { bookings: new Map(bookings.map((b: Booking) => [b.booking_id, { ...b }])), transferred: false });
      return {};
    },
  },
  tools: {
    find_bookings: {
      body: z.object({ name: z.string() }),
      handler: ({ name }, ctx) => {
        const wanted = name.trim().toLowerCase();
        return { bookings: [...deskOf(ctx).bookings.values()].filter((b) => b.name.toLowerCase() === wanted) };
      },
    },
    get_booking: {
      body: z.object({ booking_id: z.string() }),
      handler: ({ booking_id }, ctx) => deskOf(ctx).bookings.get(booking_id) ?? notFound(booking_id),
    },
    change_party_size: {
      body: z.object({ booking_id: z.string(), party_size: z.number().int().positive() }),
      handler: ({ booking_id, party_size }, ctx) => {
        const b = deskOf(ctx).bookings.get(booking_id);
        if (!b) return notFound(booking_id);
        if (b.status !== 'confirmed') return { error: `Booking ${booking_id} is ${b.status}.` };
        if (party_size > ctx.config.max_party_size) return { error: `Parties above ${ctx.config.max_party_size} need a human agent.` };
        b.party_size = party_size;
        return b;
      },
    },
    cancel_booking: {
      body: z.object({ booking_id: z.string() }),
      handler: ({ booking_id }, ctx) => {
        const b = deskOf(ctx).bookings.get(booking_id);
        if (!b) return notFound(booking_id);
        if (b.status !== 'confirmed') return { error: `Booking ${booking_id} is ${b.status}.` };
        b.status = 'cancelled';
        return b;
      },
    },
    transfer_to_human_agents: {
      body: z.object({ summary: z.string() }),
      handler: (_body, ctx) => {
        deskOf(ctx).transferred = true;
        return 'Transfer successful';
      },
    },
  },
  verify: {
    body: VerifyRequestSchema,
    handler: (body, ctx) => {
      const desk = ctx.state.desks.take(ctx.sessionId);
      if (!desk) {
        ctx.state.desks.assertNotDropped(ctx.sessionId);
        // Never seeded: nothing was changed.
      }
      const final = desk ? [...desk.bookings.values()] : [];
      const expected = body.expected_bookings;
      const same = final.length === expected.length && expected.every((e: Booking) => {
        const b = desk?.bookings.get(e.booking_id);
        return b !== undefined && b.status === e.status && b.party_size === e.party_size && b.date === e.date && b.time === e.time && b.name === e.name;
      });
      return { ...body, reward: same ? 1.0 : 0.0, transferred: desk?.transferred ?? false };
    },
  },
});

function deskOf(ctx: { sessionId: string; state: { desks: SessionStore<Desk> } }): Desk {
  ctx.state.desks.assertNotDropped(ctx.sessionId);
  let desk = ctx.state.desks.get(ctx.sessionId);
  if (!desk) {
    desk = { bookings: new Map(), transferred: false };
    ctx.state.desks.set(ctx.sessionId, desk);
  }
  return desk;
}

startIfMain(import.meta.url, server);
