/** The test helpers themselves: both transports answer the same, sessions keep their cookies. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BaseVerifyRequestSchema, defineResourcesServer, ResourcesServerConfigSchema } from '@nemo-gym/core/server';
import { globalConfigFor, startStubServer, textResponse, useTestServer } from '@nemo-gym/core/testing';

const server = defineResourcesServer({
  className: 'HelperTest',
  configSchema: ResourcesServerConfigSchema,
  setup: () => new Map<string, number>(),
  tools: {
    bump: {
      body: z.object({ by: z.number() }),
      handler: ({ by }, ctx) => {
        const n = (ctx.state.get(ctx.sessionId) ?? 0) + by;
        ctx.state.set(ctx.sessionId, n);
        return { n };
      },
    },
  },
  verify: { body: BaseVerifyRequestSchema, handler: (b, ctx) => ({ ...b, reward: ctx.state.get(ctx.sessionId) ?? 0 }) },
});

const injected = useTestServer(server, { config: { name: 'h', domain: 'other' } });
const served = useTestServer(server, { config: { name: 'h', domain: 'other' }, listen: true });

describe('testing helpers', () => {
  it('inject and HTTP answer the same status and bytes, with the session cookie', async () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const body of [{ by: 2 }, { by: 'x' }, undefined]) {
      const [a, b] = await Promise.all([injected.post('/bump', body), served.post('/bump', body)]);
      expect([a.status, a.text]).toEqual([b.status, b.text]);
      expect(a.cookie.startsWith('HelperTest___h=')).toBe(true);
      expect(b.cookie.startsWith('HelperTest___h=')).toBe(true);
    }
  });

  it('a session sends back the cookies it was given; separate sessions stay apart', async () => {
    for (const srv of [injected, served]) {
      const one = srv.session();
      const two = srv.session();
      await one.post('/bump', { by: 1 });
      await one.post('/bump', { by: 2 });
      await two.post('/bump', { by: 10 });
      expect((await one.post('/verify', { responses_create_params: { input: [] }, response: textResponse('x') })).json.reward).toBe(3);
      expect((await two.post('/verify', { responses_create_params: { input: [] }, response: textResponse('x') })).json.reward).toBe(10);
      expect(one.cookieHeader).toContain('HelperTest___h=');
    }
  });

  it('a stub server records requests and answers per route; a global config names it', async () => {
    const stub = await startStubServer({ '/v1/responses': (req, i) => ({ json: { i, echo: req.body } }) });
    try {
      const cfg = globalConfigFor({ m: { kind: 'responses_api_models', impl: 'stub', port: stub.port } });
      expect(cfg).toEqual({ m: { responses_api_models: { stub: { host: '127.0.0.1', port: stub.port } } } });
      const r = await fetch(`${stub.url}/v1/responses`, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
      expect(await r.json()).toEqual({ i: 0, echo: { a: 1 } });
      expect((await fetch(`${stub.url}/nope`, { method: 'POST' })).status).toBe(404);
      expect(stub.requestsTo('/v1/responses')).toHaveLength(1);
      expect(stub.requests.map((q) => q.path)).toEqual(['/v1/responses', '/nope']);
    } finally {
      await stub.close();
    }
  });
});
