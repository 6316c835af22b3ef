/**
 * GET /ng_status reports the requests a server is working on (ng-status shows it, and replica
 * routing sends new sessions to the least busy replica by it): a request counts until its answer
 * is made, and an event-stream answer until its last event is sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { z } from 'zod';
import { defineResourcesServer, ResourcesServerConfigSchema, SseReply } from '@nemo-gym/core/server';

const gates: (() => void)[] = [];
const gate = () => new Promise<void>((resolve) => gates.push(resolve));

async function* slowEvents(): AsyncGenerator<{ data: string }> {
  yield { data: '{"n":1}' };
  await gate();
  yield { data: '{"n":2}' };
}

const server = defineResourcesServer({
  className: 'InFlightServer',
  configSchema: ResourcesServerConfigSchema,
  tools: {
    slow: {
      body: z.object({}),
      handler: async () => {
        await gate();
        return { done: true };
      },
    },
    stream: { body: z.object({}), handler: () => new SseReply(slowEvents()) },
  },
  verify: { body: z.object({}).loose(), handler: (b) => ({ ...b, reward: 0 }) },
});

let base = '';
const dispatcher = new Agent();
let app: Awaited<ReturnType<typeof server.build>>;
beforeAll(async () => {
  app = await server.build({ config: { name: 'busy', host: '127.0.0.1', port: 0, entrypoint: 'app.ts', domain: 'other' } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  for (const open of gates.splice(0)) open();
  await dispatcher.close();
  await app.close();
});

const inFlight = async () => ((await (await request(`${base}/ng_status`, { dispatcher })).body.json()) as { in_flight: number }).in_flight;
const post = (path: string) => request(`${base}${path}`, { dispatcher, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
const until = async (cond: () => Promise<boolean> | boolean) => {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > 3000) throw new Error('condition not reached within 3 s');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('in-flight count', () => {
  it('counts a request until its answer', async () => {
    expect(await inFlight()).toBe(0);
    const pending = post('/slow');
    await until(() => gates.length === 1);
    expect(await inFlight()).toBe(1);
    gates.shift()!();
    expect(((await (await pending).body.json()) as { done: boolean }).done).toBe(true);
    expect(await inFlight()).toBe(0);
  });

  it('counts an event stream until its last event', async () => {
    const res = await post('/stream');
    const reader = res.body[Symbol.asyncIterator]();
    const first = Buffer.from(((await reader.next()).value as Uint8Array)).toString();
    expect(first).toContain('"n":1');
    await until(() => gates.length === 1);
    expect(await inFlight()).toBe(1);
    gates.shift()!();
    let rest = '';
    for (let r = await reader.next(); !r.done; r = await reader.next()) rest += Buffer.from(r.value as Uint8Array).toString();
    expect(rest).toContain('"n":2');
    await until(async () => (await inFlight()) === 0);
  });

  it('stops counting an event stream whose client left', async () => {
    const res = await post('/stream');
    const reader = res.body[Symbol.asyncIterator]();
    await reader.next();
    await until(() => gates.length === 1);
    expect(await inFlight()).toBe(1);
    res.body.destroy();
    await until(async () => (await inFlight()) === 0);
    gates.shift()!();
  });
});
