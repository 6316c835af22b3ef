import { afterEach, describe, expect, it } from 'vitest';
import { server } from '../app.js';
import { EndpointPool } from '../src/endpoints.js';
import type { VLLMBackend } from '../src/vllm.js';
import { FakeVLLM, sessionClient } from './stub.js';

describe('EndpointPool', () => {
  it('pins a session to one endpoint and places new sessions on the least busy one', async () => {
    const pool = new EndpointPool(['a', 'b', 'c']);
    const [a, b, c] = pool.endpoints;
    expect(pool.select('s1')).toBe(a);
    expect(pool.select('s2')).toBe(b); // same in-flight, fewer sessions
    expect(pool.select('s3')).toBe(c);
    expect(pool.select('s1')).toBe(a);
    a!.inFlight = 0;
    b!.inFlight = 5;
    c!.inFlight = 1;
    expect(pool.select('s4')).toBe(a);
    expect(pool.select('s2')).toBe(b); // busy, but pinned
  });

  it('keeps the pin table bounded (least recently used sessions are dropped)', () => {
    const pool = new EndpointPool(['a', 'b'], { maxSessions: 3 });
    for (let i = 0; i < 50; i++) pool.select(`s${i}`);
    expect(pool.pinnedSessions).toBe(3);
    expect(pool.endpoints.reduce((n, e) => n + e.sessions, 0)).toBe(3);
    expect(pool.pinnedEndpoint('s0')).toBeUndefined();
    expect(pool.pinnedEndpoint('s49')).toBeDefined();
    // Touching a session keeps it: s47 survives two newer sessions.
    pool.select('s47');
    pool.select('x1');
    pool.select('x2');
    expect(pool.pinnedEndpoint('s47')).toBeDefined();
    expect(pool.pinnedEndpoint('s48')).toBeUndefined();
  });

  it('takes an endpoint out after consecutive failures and re-places its sessions; a probe success brings it back', async () => {
    let aUp = false;
    const changes: string[] = [];
    const pool = new EndpointPool(['a', 'b'], {
      failureThreshold: 2,
      probe: async (url) => url !== 'a' || aUp,
      onChange: (e, h) => changes.push(`${e.url}:${h}`),
    });
    const [a, b] = pool.endpoints;
    expect(pool.select('s1')).toBe(a);
    pool.reportFailure(a!);
    expect(a!.healthy).toBe(true);
    pool.reportFailure(a!);
    expect(a!.healthy).toBe(false);
    expect(pool.select('s1')).toBe(b);
    expect(pool.select('s2')).toBe(b);
    await pool.probeAll();
    expect(a!.healthy).toBe(false);
    aUp = true;
    await pool.probeAll();
    expect(a!.healthy).toBe(true);
    expect(pool.select('s3')).toBe(a);
    expect(pool.select('s1')).toBe(b); // moved sessions stay where they went
    expect(changes).toEqual(['a:false', 'a:true']);
  });
});

describe('vllm_model with several endpoints', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  async function setup(n: number, extra: Record<string, unknown> = {}) {
    const stubs: FakeVLLM[] = [];
    for (let i = 0; i < n; i++) {
      const s = await new FakeVLLM().start();
      s.script = [{ content: `from ${i}` }];
      stubs.push(s);
      cleanups.push(() => s.stop());
    }
    const app = (await server.build({
      config: {
        name: 'policy_model', base_url: stubs.map((s) => `${s.url}/v1`), api_key: 'k', model: 'm',
        return_token_id_information: false, uses_reasoning_parser: true, health_check_interval_s: 0, unhealthy_after_failures: 1, ...extra,
      },
    })) as Awaited<ReturnType<typeof server.build>> & { ngContext: { state: VLLMBackend } };
    await app.listen({ host: '127.0.0.1', port: 0 });
    cleanups.push(() => app.close());
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/v1`;
    const chatCount = (s: FakeVLLM) => s.requests.filter((r) => r.path === '/v1/chat/completions').length;
    return { stubs, app, url, backend: app.ngContext.state, chatCount };
  }

  it('keeps every turn of a rollout on one endpoint and spreads rollouts over endpoints', async () => {
    const { stubs, url, chatCount } = await setup(2);
    const r1 = await sessionClient(url);
    const r2 = await sessionClient(url);
    for (let i = 0; i < 3; i++) {
      await r1.responses.create({ input: 'hi' });
      await r2.responses.create({ input: 'hi' });
    }
    expect(stubs.map(chatCount)).toEqual([3, 3]);
    // Each endpoint saw exactly one rollout's requests.
    const first = await r1.responses.create({ input: 'who?' });
    expect((first.output[0] as any).content[0].text).toBe('from 0');
  });

  it('places a new rollout on the endpoint with the fewest requests in flight', async () => {
    const { stubs, url, chatCount } = await setup(2);
    const busy = await sessionClient(url);
    const other = await sessionClient(url);
    await busy.responses.create({ input: 'pin' }); // -> endpoint 0
    await other.responses.create({ input: 'pin' }); // -> endpoint 1 (one session each now)
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const base = stubs[0]!.handler;
    stubs[0]!.handler = (req) => ({ ...(base(req) as object), gate });
    const pending = [busy.responses.create({ input: 'a' }), busy.responses.create({ input: 'b' })];
    while (chatCount(stubs[0]!) < 3) await new Promise((r) => setTimeout(r, 5));
    // Endpoint 0 has two requests in flight, endpoint 1 none; both have one session.
    const fresh = await sessionClient(url);
    const resp = await fresh.responses.create({ input: 'c' });
    expect((resp.output[0] as any).content[0].text).toBe('from 1');
    release();
    await Promise.all(pending);
    expect(stubs.map(chatCount)).toEqual([3, 2]);
  });

  it('fails over to a healthy endpoint when the pinned one goes down, and uses it again after it recovers', async () => {
    const { stubs, url, backend, chatCount } = await setup(2);
    const r1 = await sessionClient(url);
    expect(((await r1.responses.create({ input: 'x' })).output[0] as any).content[0].text).toBe('from 0');
    const port0 = stubs[0]!.port;
    await stubs[0]!.stop();
    // The pinned endpoint refuses connections: the call is retried on the other endpoint.
    expect(((await r1.responses.create({ input: 'x' })).output[0] as any).content[0].text).toBe('from 1');
    expect(backend.pool.endpoints[0]!.healthy).toBe(false);
    // New rollouts avoid the dead endpoint.
    const r2 = await sessionClient(url);
    expect(((await r2.responses.create({ input: 'x' })).output[0] as any).content[0].text).toBe('from 1');
    // The endpoint comes back; a health probe sees it and new rollouts go there again.
    await stubs[0]!.start(port0);
    await backend.pool.probeAll();
    expect(backend.pool.endpoints[0]!.healthy).toBe(true);
    const r3 = await sessionClient(url);
    expect(((await r3.responses.create({ input: 'x' })).output[0] as any).content[0].text).toBe('from 0');
    // The rollout that moved stays on its new endpoint.
    expect(((await r1.responses.create({ input: 'x' })).output[0] as any).content[0].text).toBe('from 1');
    expect(stubs[0]!.requests.some((r) => r.path === '/health')).toBe(true);
    expect(chatCount(stubs[1]!)).toBe(3);
  });

  it('runs periodic health probes against /health when configured', async () => {
    const { stubs } = await setup(2, { health_check_interval_s: 0.02 });
    while (!stubs.every((s) => s.requests.some((r) => r.path === '/health'))) await new Promise((r) => setTimeout(r, 10));
    expect(stubs[0]!.requests.find((r) => r.path === '/health')!.method).toBe('GET');
  });

  it('answers 502 when every endpoint is down', async () => {
    const { stubs, url } = await setup(2);
    await stubs[0]!.stop();
    await stubs[1]!.stop();
    const r = await sessionClient(url);
    const err = await r.responses.create({ input: 'x' }).catch((e) => e);
    expect(err.status).toBe(502);
    expect(err.message).toContain('could not reach the model backend');
  });
});
