import { createServer, type IncomingMessage, type Server, type ServerResponse as NodeResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createPool, createPooledFetch, ServerClient, type RetryPolicy } from '@nemo-gym/core/client';
import { TimeoutError } from '@nemo-gym/core/errors';
import { ServerUnreachableError } from '../../src/errors.js';
import { requestFailure } from '@nemo-gym/core/client';
import { dispatchRequest } from '@nemo-gym/core/internal';

type Handler = (req: IncomingMessage, res: NodeResponse, body: string) => void;

interface Stub {
  server: Server;
  port: number;
  hits: { method: string; url: string; at: number }[];
  close(): Promise<void>;
}

async function startStub(handler: Handler, port = 0): Promise<Stub> {
  const hits: Stub['hits'] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      hits.push({ method: req.method ?? '', url: req.url ?? '', at: Date.now() });
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const stub: Stub = {
    server,
    port: (server.address() as { port: number }).port,
    hits,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  stubs.push(stub);
  return stub;
}

const stubs: Stub[] = [];
const clients: ServerClient[] = [];
afterEach(async () => {
  while (clients.length) await clients.pop()!.close();
  while (stubs.length) await stubs.pop()!.close();
});

function clientFor(port: number, retry: Partial<RetryPolicy> = {}) {
  const c = new ServerClient({ globalConfig: { target: { responses_api_agents: { x: { host: '127.0.0.1', port } } } }, retry: { initialDelayMs: 1, maxDelayMs: 5, ...retry } });
  clients.push(c);
  return c;
}

/** A port nobody listens on (for now). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const dropAfterReading: Handler = (req) => req.socket.destroy();

describe('ServerClient: a request that may have been delivered', () => {
  it('POSTs once when the server reads the body and drops the connection', async () => {
    const stub = await startStub(dropAfterReading);
    const client = clientFor(stub.port, { maxAttempts: 6 });
    const err = await client.post('target', '/run', { responses_create_params: { input: 'hi' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerUnreachableError);
    expect((err as Error).message).toMatch(/not resent because it may have reached the server/);
    expect(stub.hits).toHaveLength(1);
    expect(requestFailure(err)).toEqual({ attempts: 1, sent: true, requestClass: 'once' });
  });

  it('does not resend a POST that timed out', async () => {
    const stub = await startStub(() => undefined); // never answers
    const client = new ServerClient({
      globalConfig: { target: { responses_api_agents: { x: { host: '127.0.0.1', port: stub.port } } } },
      timeouts: { headersMs: 200 },
      retry: { initialDelayMs: 1, maxDelayMs: 5 },
    });
    clients.push(client);
    const err = await client.post('target', '/v1/responses', { input: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(stub.hits).toHaveLength(1);
    expect(requestFailure(err)).toMatchObject({ attempts: 1, sent: true });
  });

  it('resends a GET after a dropped connection, up to the budget', async () => {
    const stub = await startStub(dropAfterReading);
    const client = clientFor(stub.port, { maxAttempts: 3 });
    const err = await client.get('target', '/status').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerUnreachableError);
    expect(stub.hits).toHaveLength(3);
    expect(requestFailure(err)).toMatchObject({ attempts: 3, requestClass: 'idempotent' });
  });

  it('retries a POST whose connection was refused, and succeeds once the server is up', async () => {
    const port = await freePort();
    const client = clientFor(port, { maxAttempts: 20, initialDelayMs: 20, maxDelayMs: 40 });
    const pending = client.post('target', '/run', { n: 1 });
    await new Promise((r) => setTimeout(r, 150));
    const stub = await startStub((_req, res, body) => res.end(JSON.stringify({ echoed: JSON.parse(body) })), port);
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ echoed: { n: 1 } });
    expect(res.attempts).toBeGreaterThan(1);
    expect(stub.hits).toHaveLength(1);
  });

  it('gives up on a refused connection after the attempt budget, saying nothing was delivered', async () => {
    const port = await freePort();
    const client = clientFor(port, { maxAttempts: 3 });
    const err = await client.post('target', '/run', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerUnreachableError);
    expect((err as Error).message).toMatch(/ECONNREFUSED.*after 3 attempt\(s\)$/);
    expect(requestFailure(err)).toEqual({ attempts: 3, sent: false, requestClass: 'once' });
  });

  it('never retries a 500 or a 502 for a POST', async () => {
    for (const status of [500, 502]) {
      const stub = await startStub((_req, res) => {
        res.statusCode = status;
        res.end('{}');
      });
      const client = clientFor(stub.port, { maxAttempts: 5 });
      const res = await client.post('target', '/run', {});
      expect(res.status).toBe(status);
      expect(stub.hits).toHaveLength(1);
    }
  });
});

describe('ServerClient: a 429 storm', () => {
  const storm: Handler = (_req, res) => {
    res.writeHead(429, { 'retry-after': '0.05', 'content-type': 'application/json' });
    res.end('{"detail": "slow down"}');
  };

  it('makes no more attempts than the budget, each after the pause the server asked for', async () => {
    const stub = await startStub(storm);
    const client = clientFor(stub.port, { maxAttempts: 4 });
    const res = await client.post('target', '/run', {});
    expect(res.status).toBe(429);
    expect(res.attempts).toBe(4);
    expect(stub.hits).toHaveLength(4);
    for (let i = 1; i < stub.hits.length; i++) expect(stub.hits[i]!.at - stub.hits[i - 1]!.at).toBeGreaterThanOrEqual(45);
  });

  it('starts no attempt after the time budget', async () => {
    const stub = await startStub(storm);
    const client = clientFor(stub.port, { maxAttempts: 1000, maxElapsedMs: 400 });
    const res = await client.post('target', '/run', {});
    expect(res.status).toBe(429);
    expect(stub.hits.length).toBeGreaterThan(2);
    expect(stub.hits.length).toBeLessThanOrEqual(Math.floor(400 / 50) + 1);
    // Arrival times: the last attempt started within the budget (plus the time it took to arrive).
    expect(stub.hits.at(-1)!.at - stub.hits[0]!.at).toBeLessThanOrEqual(400 + 150);
  });

  it('recovers when the storm ends', async () => {
    let n = 0;
    const stub = await startStub((req, res, body) => (++n <= 3 ? storm(req, res, body) : res.end('{"ok": true}')));
    const client = clientFor(stub.port, { maxAttempts: 5 });
    const res = await client.post('target', '/run', {});
    expect(res.json()).toEqual({ ok: true });
    expect(res.attempts).toBe(4);
  });
});

describe('createPooledFetch with a retry policy (the openai client with maxRetries 0)', () => {
  it('retries a 503 for a POST and never resends one whose connection dropped', async () => {
    let n = 0;
    const ok = await startStub((_req, res) => {
      if (++n < 3) {
        res.writeHead(503, { 'retry-after-ms': '1' });
        res.end('{}');
      } else res.end('{"ok": 1}');
    });
    const f = createPooledFetch({ retry: { maxAttempts: 3, initialDelayMs: 1 } });
    const r = await f(`http://127.0.0.1:${ok.port}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(r.status).toBe(200);
    expect(ok.hits).toHaveLength(3);

    const dropping = await startStub(dropAfterReading);
    await expect(f(`http://127.0.0.1:${dropping.port}/v1/responses`, { method: 'POST', body: '{}' })).rejects.toThrow();
    expect(dropping.hits).toHaveLength(1);
  });

  it('does not retry at all without a policy', async () => {
    const stub = await startStub((_req, res) => {
      res.statusCode = 503;
      res.end('{}');
    });
    const f = createPooledFetch();
    expect((await f(`http://127.0.0.1:${stub.port}/x`, { method: 'POST', body: '{}' })).status).toBe(503);
    expect(stub.hits).toHaveLength(1);
  });
});

describe('dispatchRequest', () => {
  it('never sends a request whose caller aborted while it waited for a socket', async () => {
    let release: (() => void) | null = null;
    const stub = await startStub((req, res) => {
      if (req.url === '/hold') release = () => res.end('{}');
      else res.end('{}');
    });
    const pool = createPool({ connections: 1 });
    const origin = `http://127.0.0.1:${stub.port}`;
    const first = dispatchRequest(pool, origin, '/hold', { method: 'POST', body: '{}' });
    // The only socket is now busy with /hold, so the next request waits in the pool's queue.
    for (let i = 0; i < 500 && release === null; i++) await new Promise((r) => setTimeout(r, 10));
    const ac = new AbortController();
    let sent = false;
    const queued = dispatchRequest(pool, origin, '/queued', { method: 'POST', body: '{}', signal: ac.signal, onSent: () => (sent = true) });
    ac.abort(new Error('caller gave up'));
    await expect(queued).rejects.toThrow('caller gave up');
    release!();
    expect((await first).status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    expect(stub.hits.map((h) => h.url)).toEqual(['/hold']);
    expect(sent).toBe(false);
    await pool.close();
  });
});
