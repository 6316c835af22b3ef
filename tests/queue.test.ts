/**
 * Distributed collection on a real redis-server (started here on a free 127.0.0.1 port): workers
 * that die lose nothing, a Redis restart (append-only file on) loses and doubles nothing.
 * The agent is a stub HTTP server on 127.0.0.1 answering /run after a short delay.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { findOpenPort } from '@nemo-gym/core/config';
import { collectRollouts } from '@nemo-gym/core/rollouts';
import { collectViaQueue, runWorker } from '@nemo-gym/queue';
import { findRedisServer, startRedisServer, type LocalRedis } from '@nemo-gym/queue/redis-server';
import { startHeadServer } from '@nemo-gym/core/server';
import { BIN, ROOT, requireBuild } from './helpers/stack.js';

const redisBin = findRedisServer();
if (redisBin.path === null) console.log(`skipping the Redis queue tests: ${redisBin.reason}`);

const lines = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8').split('\n').filter((l) => l.trim()) : []);

/**
 * A stub agent: /run answers reward 1 with the row's question after `delayMs`; counts calls. With
 * `holdFrom`, every call after that many is held unanswered until `release()`.
 */
async function stubAgent(delayMs: number, holdFrom = Infinity): Promise<{ server: Server; port: number; calls: () => number; held: () => number; release: () => void }> {
  let calls = 0;
  let holding = true;
  const held: (() => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      calls++;
      const row = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { responses_create_params: { input: string } };
      const answer = () =>
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ reward: 1, response: { output: [] }, question: row.responses_create_params.input }));
        }, delayMs);
      if (holding && calls > holdFrom) held.push(answer);
      else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    calls: () => calls,
    held: () => held.length,
    release: () => {
      holding = false;
      for (const answer of held.splice(0)) answer();
    },
  };
}

function inputFile(rows: number): { dir: string; input: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ng-queue-'));
  const input = join(dir, 'in.jsonl');
  writeFileSync(input, Array.from({ length: rows }, (_, i) => `${JSON.stringify({ responses_create_params: { input: `q${i}` } })}\n`).join(''));
  return { dir, input };
}

function keysOf(out: string): string[] {
  return lines(out).map((l) => {
    const row = JSON.parse(l) as { _ng_task_index: number; _ng_rollout_index: number; question: string; reward: number };
    expect(row.question).toBe(`q${row._ng_task_index}`);
    expect(row.reward).toBe(1);
    return `${row._ng_task_index}:${row._ng_rollout_index}`;
  });
}

describe.skipIf(redisBin.path === null)('distributed collection on Redis', () => {
  let redis: LocalRedis;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('kill -9 of one of three workers: its leased jobs are redone elsewhere; 2,000 of 2,000 (task, repeat) written once', async () => {
    requireBuild();
    // From the 600th call on the agent holds every rollout: each worker ends up with all 40 of its
    // slots waiting at the agent, so the killed one surely has rollouts in flight, however loaded the machine.
    const agent = await stubAgent(40, 600);
    const headPort = await findOpenPort([]);
    const config = { head_server: { host: '127.0.0.1', port: headPort }, stub_agent: { responses_api_agents: { stub: { host: '127.0.0.1', port: agent.port } } } };
    const head = await startHeadServer(config, '127.0.0.1', headPort);
    const { dir, input } = inputFile(1000);
    const out = join(dir, 'out.jsonl');
    const workers: { proc: ChildProcess; out: string; exit: Promise<number | null> }[] = [];
    try {
      const collecting = collectViaQueue({ queueUrl: redis.url, queue: 'kill', inputPath: input, outputPath: out, agentName: 'stub_agent', numRepeats: 2 });
      for (let i = 0; i < 3; i++) {
        const proc = spawn(process.execPath, [BIN('collect-worker'), `+queue_url=${redis.url}`, '+queue_name=kill', `+head_server.port=${headPort}`, '+head_server.host=127.0.0.1', '+num_samples_in_parallel=40', '+lease_s=1', '+idle_exit_s=1'], {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const w = { proc, out: '', exit: new Promise<number | null>((r) => proc.once('exit', (c) => r(c))) };
        proc.stdout!.on('data', (d: Buffer) => (w.out += d.toString()));
        proc.stderr!.on('data', (d: Buffer) => (w.out += d.toString()));
        workers.push(w);
      }
      const deadline = Date.now() + 40_000;
      // Once results are written and every worker has its 40 rollouts held at the agent, kill one, then let the agent answer.
      while ((lines(out).length < 300 || agent.held() < 120) && workers.every((w) => w.proc.exitCode === null) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (const w of workers) expect(w.proc.exitCode, w.out).toBeNull();
      expect(agent.held()).toBe(120);
      workers[0]!.proc.kill('SIGKILL');
      await workers[0]!.exit;
      agent.release();
      const summary = await collecting;
      expect(summary.failed).toBe(0);
      expect(summary.written).toBe(2000);
      const keys = keysOf(out);
      expect(keys).toHaveLength(2000);
      expect(new Set(keys).size).toBe(2000);
      // The killed worker's 40 rollouts in flight were run again elsewhere.
      expect(agent.calls()).toBeGreaterThanOrEqual(2040);
      for (const w of workers.slice(1)) expect(await w.exit, w.out).toBe(0);
      expect(lines(out.replace(/\.jsonl$/, '_failures.jsonl'))).toHaveLength(0);
    } finally {
      for (const w of workers) w.proc.kill('SIGKILL');
      agent.release();
      await head.close();
      agent.server.close();
    }
  }, 90_000);

  it('Redis restarted mid-run (append-only file): nothing lost, nothing doubled; a rerun enqueues nothing', async () => {
    const agent = await stubAgent(5);
    const client = new ServerClient({ globalConfig: { stub_agent: { responses_api_agents: { stub: { host: '127.0.0.1', port: agent.port } } } } });
    const { dir, input } = inputFile(600);
    const out = join(dir, 'out.jsonl');
    const stop = new AbortController();
    try {
      const worker = runWorker({ client, queueUrl: redis.url, queue: 'restart', concurrency: 30, leaseMs: 2000, signal: stop.signal });
      const collecting = collectViaQueue({ queueUrl: redis.url, queue: 'restart', inputPath: input, outputPath: out, agentName: 'stub_agent' });
      const deadline = Date.now() + 30_000;
      while (lines(out).length < 150 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      await redis.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 300));
      await redis.restart();
      const summary = await collecting;
      expect(summary.failed).toBe(0);
      const keys = keysOf(out);
      expect(keys).toHaveLength(600);
      expect(new Set(keys).size).toBe(600);

      const again = await collectViaQueue({ queueUrl: redis.url, queue: 'restart', inputPath: input, outputPath: out, agentName: 'stub_agent' });
      expect(again.skipped).toBe(600);
      expect(again.written).toBe(0);
      expect(lines(out)).toHaveLength(600);
      stop.abort();
      await worker;
    } finally {
      stop.abort();
      await client.close();
      agent.server.close();
    }
  }, 60_000);

  it('a stopped worker finishes its running rollouts and gives back the jobs it took ahead at once: another takes them before any lease ran out', async () => {
    const agent = await stubAgent(60);
    const client = new ServerClient({ globalConfig: { stub_agent: { responses_api_agents: { stub: { host: '127.0.0.1', port: agent.port } } } } });
    const { dir, input } = inputFile(60);
    const out = join(dir, 'out.jsonl');
    const stopA = new AbortController();
    const stopB = new AbortController();
    try {
      const t0 = Date.now();
      // A runs 2 at once and holds up to 40 more; the lease is long, so nothing can come back by expiry here.
      const a = runWorker({ client, queueUrl: redis.url, queue: 'prefetch', concurrency: 2, prefetch: 40, leaseMs: 60_000, signal: stopA.signal });
      const collecting = collectViaQueue({ queueUrl: redis.url, queue: 'prefetch', inputPath: input, outputPath: out, agentName: 'stub_agent' });
      const deadline = Date.now() + 20_000;
      while (lines(out).length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      stopA.abort();
      const summaryA = await a;
      expect(summaryA.done).toBeGreaterThanOrEqual(4);
      expect(summaryA.done).toBeLessThan(30);
      const b = runWorker({ client, queueUrl: redis.url, queue: 'prefetch', concurrency: 20, leaseMs: 60_000, signal: stopB.signal });
      const summary = await collecting;
      expect(Date.now() - t0).toBeLessThan(30_000);
      stopB.abort();
      const summaryB = await b;
      expect(summaryA.done + summaryB.done).toBe(60);
      expect(summary.written).toBe(60);
      const keys = keysOf(out);
      expect(new Set(keys).size).toBe(60);
      expect(keys).toHaveLength(60);
      // A graceful stop runs nothing twice.
      expect(agent.calls()).toBe(60);
    } finally {
      stopA.abort();
      stopB.abort();
      await client.close();
      agent.server.close();
    }
  }, 60_000);

  it('failures by reason, failure records and metrics match a local collection of the same input', async () => {
    // Every 5th task answers HTTP 500; the rest a reward, a score, a flag and token usage.
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const q = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { responses_create_params: { input: string } }).responses_create_params.input;
        const i = Number(q.slice(1));
        if (i % 5 === 0) {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end('{"error":"verify blew up"}');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ reward: i % 3 === 0 ? 1 : 0, score: i / 10, ok: i % 2 === 0, question: q, response: { output: [], usage: { input_tokens: i, output_tokens: 2 } } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new ServerClient({ globalConfig: { stub_agent: { responses_api_agents: { stub: { host: '127.0.0.1', port: (server.address() as AddressInfo).port } } } } });
    const { dir, input } = inputFile(40);
    const stop = new AbortController();
    try {
      const local = await collectRollouts({ client, inputPath: input, outputPath: join(dir, 'local.jsonl'), agentName: 'stub_agent', numRepeats: 2, concurrency: 8 });
      const worker = runWorker({ client, queueUrl: redis.url, queue: 'reasons', concurrency: 8, signal: stop.signal });
      const queued = await collectViaQueue({ queueUrl: redis.url, queue: 'reasons', inputPath: input, outputPath: join(dir, 'queued.jsonl'), agentName: 'stub_agent', numRepeats: 2 });
      stop.abort();
      await worker;
      expect(local.failed).toBe(16);
      expect(queued.failed).toBe(16);
      expect(queued.failuresByReason).toEqual({ 'HTTP 5xx': 16 });
      expect(queued.failuresByReason).toEqual(local.failuresByReason);
      const metricsFile = JSON.parse(readFileSync(join(dir, 'queued_metrics.json'), 'utf8')) as Record<string, unknown>;
      expect(metricsFile.failures_by_reason).toEqual({ 'HTTP 5xx': 16 });
      expect(metricsFile.failed).toBe(16);
      const failures = lines(join(dir, 'queued_failures.jsonl')).map((l) => JSON.parse(l) as { reason_class: string; status: number; _ng_task_index: number });
      expect(failures).toHaveLength(16);
      for (const f of failures) {
        expect(f.reason_class).toBe('http_5xx');
        expect(f.status).toBe(500);
        expect(f._ng_task_index % 5).toBe(0);
      }
      // The same metrics as the local collection (each rollout's latency aside: timed where it ran).
      const strip = (m: Record<string, unknown>) => {
        const { latency_s: latency, ...rest } = m;
        expect((latency as { rollout: { count: number } }).rollout.count).toBe(64);
        return rest;
      };
      expect(strip(queued.metrics)).toEqual(strip(local.metrics));
      expect((queued.metrics.tokens as { input_total: number }).input_total).toBeGreaterThan(0);
    } finally {
      stop.abort();
      await client.close();
      server.close();
    }
  }, 60_000);
});
