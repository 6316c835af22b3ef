import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  backoffDelay,
  BaseVerifyRequestSchema,
  decodeSession,
  DEFAULT_RETRY,
  defineResourcesServer,
  encodeSession,
  HttpError,
  parseRetryAfter,
  RawJson,
  ResourcesServerConfigSchema,
  ServerClient,
  ServerUnreachableError,
} from '@nemo-gym/core';

const server = defineResourcesServer({
  className: 'TestResourcesServer',
  configSchema: ResourcesServerConfigSchema,
  setup: () => ({ counts: new Map<string, number>() }),
  tools: {
    bump: {
      body: z.object({ by: z.number().int() }),
      handler: ({ by }, ctx) => {
        const n = (ctx.state.counts.get(ctx.sessionId) ?? 0) + by;
        ctx.state.counts.set(ctx.sessionId, n);
        return { count: n };
      },
    },
    teapot: { body: z.object({}), handler: () => { throw new HttpError(418, 'short and stout'); } },
    boom: { body: z.object({}), handler: () => { throw new Error('kaput'); } },
    py: { body: z.object({}), handler: () => new RawJson('{"x": 4.0}') },
    whoami: { body: z.object({}).loose(), handler: (_b, ctx) => ({ session: ctx.sessionId.length > 0 }) },
  },
  verify: { body: BaseVerifyRequestSchema, handler: (b) => ({ ...b, reward: 0.5 }) },
});

describe('server runtime', () => {
  let app: Awaited<ReturnType<typeof server.build>>;
  beforeAll(async () => {
    app = await server.build({ config: { name: 'test_res', domain: 'other' } });
  });
  afterAll(async () => app.close());

  it('answers readiness at GET /', async () => {
    const res = await app.inject({ method: 'GET', url: '/' });
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('answers 422 naming the failing path, FastAPI-style', async () => {
    const res = await app.inject({ method: 'POST', url: '/bump', payload: { by: 'x' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0].loc).toEqual(['body', 'by']);
    const missing = await app.inject({ method: 'POST', url: '/bump', payload: {} });
    expect(missing.json().detail[0]).toMatchObject({ type: 'missing', loc: ['body', 'by'], msg: 'Field required' });
    const empty = await app.inject({ method: 'POST', url: '/bump', headers: { 'content-type': 'application/json' }, payload: '' });
    expect(empty.statusCode).toBe(422);
    const broken = await app.inject({ method: 'POST', url: '/bump', headers: { 'content-type': 'application/json' }, payload: '{"by": ' });
    expect(broken.statusCode).toBe(422);
    expect(broken.json().detail[0].type).toBe('json_invalid');
  });

  it('HttpError keeps its status; other errors are a short 500', async () => {
    const t = await app.inject({ method: 'POST', url: '/teapot', payload: {} });
    expect(t.statusCode).toBe(418);
    expect(t.json()).toEqual({ detail: 'short and stout' });
    const b = await app.inject({ method: 'POST', url: '/boom', payload: {} });
    expect(b.statusCode).toBe(500);
    expect(b.json()).toBe('Error: kaput');
  });

  it('a route whose schema accepts {} takes a request with no body', async () => {
    const res = await app.inject({ method: 'POST', url: '/whoami' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ session: true });
  });

  it('RawJson bodies are sent byte for byte', async () => {
    const res = await app.inject({ method: 'POST', url: '/py', payload: {} });
    expect(res.body).toBe('{"x": 4.0}');
  });

  it('keeps state per session through the signed cookie', async () => {
    const first = await app.inject({ method: 'POST', url: '/bump', payload: { by: 2 } });
    const raw = first.headers['set-cookie'];
    const cookie = (Array.isArray(raw) ? raw[0] : raw) as string;
    expect(cookie).toMatch(/^TestResourcesServer___test_res=/);
    const value = cookie.split(';')[0]!;
    const second = await app.inject({ method: 'POST', url: '/bump', payload: { by: 3 }, headers: { cookie: value } });
    expect(second.json()).toEqual({ count: 5 });
    const fresh = await app.inject({ method: 'POST', url: '/bump', payload: { by: 1 } });
    expect(fresh.json()).toEqual({ count: 1 });
    const forged = await app.inject({ method: 'POST', url: '/bump', payload: { by: 1 }, headers: { cookie: value.replace(/.$/, 'x') } });
    expect(forged.json()).toEqual({ count: 1 });
  });

  it('rejects an invalid config with the key path', async () => {
    await expect(server.build({ config: { name: 'x', domain: 'nope' } })).rejects.toThrow(/domain/);
  });
});

describe('session signing', () => {
  it('round-trips and rejects tampering', () => {
    const v = encodeSession('abc', 'secret');
    expect(decodeSession(v, 'secret')).toBe('abc');
    expect(decodeSession(v, 'other')).toBeNull();
    expect(decodeSession('abc.zzz', 'secret')).toBeNull();
  });
});

describe('retry policy', () => {
  it('backs off exponentially with jitter, capped', () => {
    const p = { ...DEFAULT_RETRY, initialDelayMs: 500, maxDelayMs: 8000 };
    expect(backoffDelay(p, 1, null, () => 0)).toBe(250);
    expect(backoffDelay(p, 1, null, () => 1)).toBe(500);
    expect(backoffDelay(p, 3, null, () => 1)).toBe(2000);
    expect(backoffDelay(p, 10, null, () => 1)).toBe(8000);
  });
  it('honours Retry-After in seconds and as a date', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThan(3000);
    expect(backoffDelay(DEFAULT_RETRY, 1, '4', () => 0)).toBe(4000);
  });
});

describe('ServerClient', () => {
  let http: Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    http = createServer((req, res) => {
      hits++;
      if (req.url === '/flaky' && hits % 3 !== 0) {
        res.writeHead(503, { 'retry-after': '0' });
        res.end('busy');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ['A___a=1; Path=/', 'B___b=2; Path=/'] });
      res.end(JSON.stringify({ cookie: req.headers.cookie ?? null }));
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    port = (http.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => http.close(() => r())));

  const globalConfig = () => ({ target: { resources_servers: { x: { host: '127.0.0.1', port } } } });

  it('retries 503 with backoff and then succeeds', async () => {
    hits = 0;
    const client = new ServerClient({ globalConfig: globalConfig(), retry: { initialDelayMs: 1, maxDelayMs: 5 } });
    const res = await client.post('target', '/flaky', {});
    expect(res.status).toBe(200);
    expect(res.attempts).toBe(3);
    await client.close();
  });

  it('sends cookies only when given, and parses Set-Cookie', async () => {
    const client = new ServerClient({ globalConfig: globalConfig() });
    const a = await client.post('target', '/x', {});
    expect(a.json()).toEqual({ cookie: null });
    expect(a.cookies).toEqual({ A___a: '1', B___b: '2' });
    const b = await client.post('target', '/x', {}, { cookies: a.cookies });
    expect(b.json()).toEqual({ cookie: 'A___a=1; B___b=2' });
    await client.close();
  });

  it('names an unknown server', () => {
    const client = new ServerClient({ globalConfig: globalConfig() });
    expect(() => client.baseUrl('nobody')).toThrow(/No running server instance named `nobody`/);
  });

  it('gives up on a refused connection after the budget', async () => {
    const client = new ServerClient({ globalConfig: { gone: { resources_servers: { x: { host: '127.0.0.1', port: 1 } } } }, retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 2 } });
    await expect(client.post('gone', '/x', {})).rejects.toBeInstanceOf(ServerUnreachableError);
    await client.close();
  });
});
