import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { replicaCookieName } from '../../src/client/replicas.js';

/** A replica on its own loopback address (a simulated host): answers after `delayMs` with its address. */
async function replica(host: string, delayMs = 0, statusDelayMs = 0): Promise<{ server: Server; key: string; hits: () => number; inFlight: () => number }> {
  let hits = 0;
  let inFlight = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'GET') {
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ status: 'ok', in_flight: inFlight }));
        }, statusDelayMs);
        return;
      }
      hits++;
      inFlight++;
      setTimeout(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': `S___x=${host}-${hits}; Path=/` });
        res.end(JSON.stringify({ host }));
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as AddressInfo;
  return { server, key: `${host}:${port}`, hits: () => hits, inFlight: () => inFlight };
}

/** Accepts connections and never answers (a hung process). */
/** Waits until `check` holds (a health round may be under way when the state changes). */
async function until(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(check()).toBe(true);
}

async function hanging(host: string): Promise<{ server: TcpServer; key: string; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createTcpServer((s) => sockets.push(s));
  await new Promise<void>((r) => server.listen(0, host, r));
  return { server, key: `${host}:${(server.address() as AddressInfo).port}`, sockets };
}

function configWith(replicas: string[], extra: Record<string, unknown> = {}) {
  return {
    replica_health_interval_s: 0.1,
    replica_health_timeout_s: 0.3,
    ...extra,
    env: { resources_servers: { env: { host: '127.0.0.1', port: 1, replicas } } },
  };
}

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe('replica routing in ServerClient', () => {
  it('spreads new sessions over the least busy replicas and keeps each session on its replica', async () => {
    const a = await replica('127.0.0.2', 40);
    const b = await replica('127.0.0.3', 40);
    closers.push(() => a.server.close(), () => b.server.close());
    // No health checks here: a loaded machine must not take a replica out in the middle of the test.
    const client = new ServerClient({ globalConfig: configWith([a.key, b.key], { replica_health_interval_s: 60 }) });
    closers.push(() => client.close());
    // 20 sessions at once: least-busy routing splits them evenly.
    const first = await Promise.all(Array.from({ length: 20 }, () => client.post('env', '/seed', {})));
    expect(a.hits()).toBe(10);
    expect(b.hits()).toBe(10);
    // Every later call of a session goes where its first call went, even when that replica is the busier one.
    const held = first.filter((r) => r.json<{ host: string }>().host === '127.0.0.2');
    const busy = Array.from({ length: 5 }, () => client.post('env', '/seed', {}, { cookies: held[0]!.cookies }));
    const more = await Promise.all(held.map((r) => client.post('env', '/tool', {}, { cookies: r.cookies })));
    await Promise.all(busy);
    for (const r of more) {
      expect(r.json<{ host: string }>().host).toBe('127.0.0.2');
      expect(r.cookies[replicaCookieName('env')]).toBe(a.key);
      expect(r.cookies.S___x).toMatch(/^127\.0\.0\.2-/);
    }
    expect(b.hits()).toBe(10);
  });

  it('a dead replica: its sessions fail at once without moving, new sessions go to the others, and it comes back when it answers', async () => {
    const a = await replica('127.0.0.2');
    const b = await replica('127.0.0.3');
    closers.push(() => b.server.close());
    const client = new ServerClient({ globalConfig: configWith([a.key, b.key]), retry: { maxAttempts: 1 } });
    closers.push(() => client.close());
    const onA = (await Promise.all([client.post('env', '/seed', {}), client.post('env', '/seed', {})])).find((r) => r.json<{ host: string }>().host === '127.0.0.2')!;
    const port = Number(a.key.split(':')[1]);
    a.server.closeAllConnections();
    await new Promise<void>((r) => a.server.close(() => r()));
    await until(() => !client.replicaSet('env')!.get(a.key)!.healthy);
    await expect(client.post('env', '/tool', {}, { cookies: onA.cookies })).rejects.toThrow(/session is held by replica 127\.0\.0\.2:\d+ .* out of service .* never moves/);
    const fresh = await Promise.all(Array.from({ length: 6 }, () => client.post('env', '/seed', {})));
    expect(fresh.every((r) => r.json<{ host: string }>().host === '127.0.0.3')).toBe(true);
    // Restarted on the same address: back in service after its next check.
    const back = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ host: 'again' }));
    });
    await new Promise<void>((r) => back.listen(port, '127.0.0.2', r));
    closers.push(() => back.close());
    await until(() => client.replicaSet('env')!.get(a.key)!.healthy);
    const spread = await Promise.all(Array.from({ length: 6 }, () => client.post('env', '/seed', {})));
    expect(spread.filter((r) => r.json<{ host: string }>().host === 'again').length).toBeGreaterThan(0);
  });

  it('a new session that finds its replica refusing connections goes to another replica', async () => {
    const b = await replica('127.0.0.3');
    closers.push(() => b.server.close());
    const gone = await replica('127.0.0.2');
    await new Promise<void>((r) => gone.server.close(() => r()));
    const client = new ServerClient({ globalConfig: configWith([gone.key, b.key], { replica_health_interval_s: 60 }), retry: { maxAttempts: 1 } });
    closers.push(() => client.close());
    const answers = await Promise.all(Array.from({ length: 4 }, () => client.post('env', '/seed', {})));
    expect(answers.map((r) => r.json<{ host: string }>().host)).toEqual(Array(4).fill('127.0.0.3'));
  });

  it('a hanging replica: its sessions time out and fail; once its check times out, new sessions avoid it', async () => {
    const good = await replica('127.0.0.2');
    const hung = await hanging('127.0.0.3');
    closers.push(
      () => good.server.close(),
      () => {
        for (const s of hung.sockets) s.destroy();
        hung.server.close();
      },
    );
    const client = new ServerClient({ globalConfig: configWith([good.key, hung.key]), timeouts: { headersMs: 800 }, retry: { maxAttempts: 1 } });
    closers.push(() => client.close());
    const started = Date.now();
    const first = await Promise.allSettled([client.post('env', '/seed', {}), client.post('env', '/seed', {})]);
    const failed = first.filter((r) => r.status === 'rejected');
    expect(failed).toHaveLength(1);
    expect(String((failed[0] as PromiseRejectedResult).reason)).toMatch(/timed out/);
    expect(Date.now() - started).toBeLessThan(5000);
    // Two missed checks (0.3 s each) take it out of service.
    const deadline = Date.now() + 5000;
    while (client.replicaSet('env')!.get(hung.key)!.healthy && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(client.replicaSet('env')!.get(hung.key)!.healthy).toBe(false);
    const later = await Promise.all(Array.from({ length: 10 }, () => client.post('env', '/seed', {})));
    expect(later.every((r) => r.cookies[replicaCookieName('env')] === good.key)).toBe(true);
  });

  it('two clients: new sessions of one avoid the replica the other keeps busy, as the replicas report it at their checks', async () => {
    const a = await replica('127.0.0.2', 1200);
    const b = await replica('127.0.0.3', 1200);
    closers.push(() => a.server.close(), () => b.server.close());
    const busy = new ServerClient({ globalConfig: configWith([a.key, b.key], { replica_health_interval_s: 60 }) });
    const fresh = new ServerClient({ globalConfig: configWith([a.key, b.key]) });
    closers.push(() => busy.close(), () => fresh.close());
    // The first client holds 6 requests on replica a (its sessions' cookie pins them there).
    const held = Array.from({ length: 6 }, () => busy.post('env', '/tool', {}, { cookies: { [replicaCookieName('env')]: a.key } }));
    await until(() => a.inFlight() === 6);
    // The second client sends nothing to a itself; it learns a's load from a's next health check.
    const seen = fresh.replicaSet('env')!;
    await until(() => seen.get(a.key)!.others === 6);
    expect(seen.get(a.key)!.reportedInFlight).toBe(6);
    expect(seen.get(a.key)!.inFlight).toBe(0);
    const answers = await Promise.all(Array.from({ length: 6 }, () => fresh.post('env', '/seed', {})));
    expect(answers.map((r) => r.json<{ host: string }>().host)).toEqual(Array(6).fill('127.0.0.3'));
    await Promise.all(held);
    // Once a reports itself idle again, new sessions spread over both.
    await until(() => seen.get(a.key)!.others === 0 && seen.get(b.key)!.others === 0);
    const spread = await Promise.all(Array.from({ length: 4 }, () => fresh.post('env', '/seed', {})));
    expect(spread.map((r) => r.json<{ host: string }>().host).sort()).toEqual(['127.0.0.2', '127.0.0.2', '127.0.0.3', '127.0.0.3']);
  });

  it('a client does not count its own requests as another client\'s load', async () => {
    const a = await replica('127.0.0.2', 800);
    const b = await replica('127.0.0.3', 800);
    closers.push(() => a.server.close(), () => b.server.close());
    const client = new ServerClient({ globalConfig: configWith([a.key, b.key]) });
    closers.push(() => client.close());
    const set = client.replicaSet('env')!;
    const first = Promise.all(Array.from({ length: 8 }, () => client.post('env', '/seed', {})));
    await until(() => set.get(a.key)!.reportedInFlight === 4 && set.get(b.key)!.reportedInFlight === 4);
    expect(set.get(a.key)!.others).toBe(0);
    expect(set.get(b.key)!.others).toBe(0);
    await first;
  });

  it('the first burst of sessions waits for the replicas the head server lists to be checked, instead of failing', async () => {
    // Their health checks take a while: sessions arrive while the replicas are listed but not checked yet.
    const a = await replica('127.0.0.2', 20, 300);
    const b = await replica('127.0.0.3', 20, 300);
    const head = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify([a, b].map((r) => ({ name: 'env', url: `http://${r.key}`, state: 'running' }))));
    });
    await new Promise<void>((r) => head.listen(0, '127.0.0.1', r));
    closers.push(() => a.server.close(), () => b.server.close(), () => head.close());
    const headPort = (head.address() as AddressInfo).port;
    // Started elsewhere: this client knows no replica until it asks the head server.
    const client = new ServerClient({ globalConfig: configWith([], { head_server: { host: '127.0.0.1', port: headPort }, replica_health_interval_s: 60, replica_health_timeout_s: 5 }), retry: { maxAttempts: 1 } });
    closers.push(() => client.close());
    const first = client.post('env', '/seed', {});
    await until(() => client.replicaSet('env')!.size === 2);
    expect(client.replicaSet('env')!.replicas.map((r) => r.healthy)).toEqual([false, false]);
    const answers = await Promise.all([first, ...Array.from({ length: 7 }, () => client.post('env', '/seed', {}))]);
    expect(answers.map((r) => r.json<{ host: string }>().host).sort()).toEqual([...Array(4).fill('127.0.0.2'), ...Array(4).fill('127.0.0.3')]);
  });

  it('an instance without replicas keeps its one address and adds no cookie', async () => {
    const a = await replica('127.0.0.2');
    closers.push(() => a.server.close());
    const port = Number(a.key.split(':')[1]);
    const client = new ServerClient({ globalConfig: { env: { resources_servers: { env: { host: '127.0.0.2', port } } } } });
    closers.push(() => client.close());
    const res = await client.post('env', '/seed', {});
    expect(client.replicaSet('env')).toBeNull();
    expect(Object.keys(res.cookies)).toEqual(['S___x']);
  });
});
