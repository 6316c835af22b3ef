import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ServerClient } from '@nemo-gym/core/client';
import { HttpError } from '@nemo-gym/core/errors';
import { ServerUnreachableError } from '../src/errors.js';
import { BaseVerifyRequestSchema, decodeSession, defineResourcesServer, RawJson, ResourcesServerConfigSchema } from '@nemo-gym/core/server';
import { encodeSession } from '../src/server/session.js';

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
    created: { body: z.object({}), handler: () => new RawJson('{"made": true}', 201) },
    relay: {
      body: z.object({}),
      handler: (_b, ctx) => {
        ctx.setCookies({ Model___m: 'v1' });
        return { seen: ctx.cookies };
      },
    },
    whoami: { body: z.object({}).loose(), handler: (_b, ctx) => ({ session: ctx.sessionId.length > 0 }) },
  },
  verify: { body: BaseVerifyRequestSchema, handler: (b) => ({ ...b, reward: 0.5 }) },
});

interface Answer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json(): any;
}
interface Call {
  method: 'GET' | 'POST';
  url: string;
  payload?: unknown;
  headers?: Record<string, string>;
}
type App = Awaited<ReturnType<typeof server.build>>;

/** Fastify's in-process inject (its own router) and real HTTP over a socket (the JSON fast path). */
const transports: [string, (app: App) => (c: Call) => Promise<Answer>][] = [
  ['inject', (app) => async (c) => {
    const res = await app.inject({ method: c.method, url: c.url, headers: c.headers, payload: c.payload as never });
    return { statusCode: res.statusCode, headers: res.headers as Answer["headers"], body: res.body, json: () => JSON.parse(res.body) };
  }],
  ['http', (app) => async (c) => {
    const { port } = app.server.address() as { port: number };
    const headers: Record<string, string> = { ...c.headers };
    let body: string | undefined;
    if (typeof c.payload === 'string') body = c.payload;
    else if (c.payload !== undefined) {
      body = JSON.stringify(c.payload);
      headers['content-type'] ??= 'application/json';
    }
    const res = await request(`http://127.0.0.1:${port}${c.url}`, { method: c.method, headers, body });
    const text = await res.body.text();
    return { statusCode: res.statusCode, headers: res.headers, body: text, json: () => JSON.parse(text) };
  }],
];

describe.each(transports)('server runtime (%s)', (kind, transport) => {
  let app: App;
  let call: (c: Call) => Promise<Answer>;
  beforeAll(async () => {
    app = await server.build({ config: { name: 'test_res', domain: 'other' } });
    if (kind === 'http') await app.listen({ host: '127.0.0.1', port: 0 });
    call = transport(app);
  });
  afterAll(async () => app.close());

  it('answers readiness at GET /', async () => {
    const res = await call({ method: 'GET', url: '/' });
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('answers 422 naming the failing path, FastAPI-style', async () => {
    const res = await call({ method: 'POST', url: '/bump', payload: { by: 'x' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0].loc).toEqual(['body', 'by']);
    const missing = await call({ method: 'POST', url: '/bump', payload: {} });
    expect(missing.json().detail[0]).toMatchObject({ type: 'missing', loc: ['body', 'by'], msg: 'Field required' });
    const empty = await call({ method: 'POST', url: '/bump', headers: { 'content-type': 'application/json' }, payload: '' });
    expect(empty.statusCode).toBe(422);
    expect(empty.json().detail[0]).toMatchObject({ type: 'missing', loc: ['body'] });
    const broken = await call({ method: 'POST', url: '/bump', headers: { 'content-type': 'application/json; charset=utf-8' }, payload: '{"by": ' });
    expect(broken.statusCode).toBe(422);
    expect(broken.json().detail[0].type).toBe('json_invalid');
    expect(broken.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('HttpError keeps its status; other errors are a short 500', async () => {
    const t = await call({ method: 'POST', url: '/teapot', payload: {} });
    expect(t.statusCode).toBe(418);
    expect(t.json()).toEqual({ detail: 'short and stout' });
    const b = await call({ method: 'POST', url: '/boom', payload: {} });
    expect(b.statusCode).toBe(500);
    expect(b.json()).toBe('Error: kaput');
    // Even a failed call carries the session cookie.
    expect(String(b.headers['set-cookie'])).toMatch(/^TestResourcesServer___test_res=/);
  });

  it('a route whose schema accepts {} takes a request with no body', async () => {
    const res = await call({ method: 'POST', url: '/whoami' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ session: true });
  });

  it('RawJson bodies are sent byte for byte, with their status', async () => {
    const res = await call({ method: 'POST', url: '/py', payload: {} });
    expect(res.body).toBe('{"x": 4.0}');
    const created = await call({ method: 'POST', url: '/created', payload: {} });
    expect(created.statusCode).toBe(201);
    expect(created.body).toBe('{"made": true}');
  });

  it('keeps state per session through the signed cookie', async () => {
    const first = await call({ method: 'POST', url: '/bump', payload: { by: 2 } });
    const raw = first.headers['set-cookie'];
    const cookie = (Array.isArray(raw) ? raw[0] : raw) as string;
    expect(cookie).toMatch(/^TestResourcesServer___test_res=/);
    const value = cookie.split(';')[0]!;
    const second = await call({ method: 'POST', url: '/bump', payload: { by: 3 }, headers: { cookie: value } });
    expect(second.json()).toEqual({ count: 5 });
    const fresh = await call({ method: 'POST', url: '/bump', payload: { by: 1 } });
    expect(fresh.json()).toEqual({ count: 1 });
    const forged = await call({ method: 'POST', url: '/bump', payload: { by: 1 }, headers: { cookie: value.replace(/.$/, 'x') } });
    expect(forged.json()).toEqual({ count: 1 });
  });

  it('sets the cookies a handler adds before its own session cookie, and sees the request cookies', async () => {
    const res = await call({ method: 'POST', url: '/relay', payload: {}, headers: { cookie: 'Other___x=abc; Third___y=1' } });
    expect(res.json()).toEqual({ seen: { Other___x: 'abc', Third___y: '1' } });
    const set = res.headers['set-cookie'] as string[];
    expect(set).toHaveLength(2);
    expect(set[0]).toMatch(/^Model___m=v1; Path=\/;/);
    expect(set[1]).toMatch(/^TestResourcesServer___test_res=/);
  });

  it('answers an unknown route with 404 and a non-JSON body on a JSON route with 422', async () => {
    const nf = await call({ method: 'POST', url: '/nope', payload: {} });
    expect(nf.statusCode).toBe(404);
    expect(nf.json()).toEqual({ detail: 'Not Found', path: '/nope' });
    const text = await call({ method: 'POST', url: '/bump', headers: { 'content-type': 'text/plain' }, payload: 'by=1' });
    expect(text.statusCode).toBe(422);
  });

  it('rejects an invalid config with the key path', async () => {
    await expect(server.build({ config: { name: 'x', domain: 'nope' } })).rejects.toThrow(/domain/);
  });
});

describe('server runtime over HTTP', () => {
  it('keeps serving after clients hang up in the middle of a body', async () => {
    const app = await server.build({ config: { name: 'hangups', domain: 'other' } });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    for (let i = 0; i < 5; i++) {
      const socket = connect(port, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      socket.write('POST /bump HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"by":');
      await new Promise((r) => setTimeout(r, 5));
      socket.destroy();
    }
    const res = await request(`http://127.0.0.1:${port}/bump`, { method: 'POST', body: '{"by": 7}', headers: { 'content-type': 'application/json' } });
    expect(await res.body.json()).toEqual({ count: 7 });
    await app.close();
  });

  it('refuses a body over the limit by its Content-Length with 413', async () => {
    const app = await server.build({ config: { name: 'limits', domain: 'other' } });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/bump', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(600 * 1024 * 1024) } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write('{"by": 1');
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).detail).toMatch(/larger than the limit/);
    await app.close();
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
