/**
 * The queue under faults, through the real command-line programs and a real redis-server (started
 * here on a free 127.0.0.1 port): Redis restarted without its data mid-run, a misspelt agent, an
 * unreachable Redis, a malformed URL, a database Redis does not have, and Ctrl-C. Each run is
 * bounded, says what happened, and loses or doubles no rollout.
 * The agent is a stub HTTP server on 127.0.0.1 behind an in-process head server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createConnection, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { findOpenPort } from '@nemo-gym/core/config';
import { collectViaQueue, runWorker } from '@nemo-gym/queue';
import { findRedisServer, startRedisServer, type LocalRedis } from '@nemo-gym/queue/redis-server';
import { startHeadServer } from '@nemo-gym/core/server';
import { BIN, ROOT, requireBuild } from './helpers/stack.js';

const redisBin = findRedisServer();
if (redisBin.path === null) console.log(`skipping the Redis queue fault tests: ${redisBin.reason}`);

const lines = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8').split('\n').filter((l) => l.trim()) : []);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A stub agent: answers GET / (pre-flight) and /run (reward 1 and the row's question) after `delayMs`; counts /run calls. */
async function stubAgent(delayMs: number): Promise<{ server: Server; port: number; runs: () => number }> {
  let runs = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url !== '/run') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
        return;
      }
      runs++;
      const row = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { responses_create_params: { input: string } };
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ reward: 1, response: { output: [] }, question: row.responses_create_params.input }));
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, runs: () => runs };
}

/** One Redis command over a plain socket (RESP); resolves with the first line of the answer. */
function redisCommand(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = createConnection({ host: '127.0.0.1', port });
    s.once('connect', () => s.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
    s.once('data', (d) => {
      s.destroy();
      resolve(d.toString().split('\r\n')[0]!);
    });
    s.once('error', reject);
  });
}

interface Proc {
  proc: ChildProcess;
  stdout: string;
  stderr: string;
  started: number;
  /** Exit code (or 128 + signal) and when, ms after the start. */
  exit: Promise<{ code: number; ms: number }>;
}

function run(name: string, args: string[]): Proc {
  const proc = spawn(process.execPath, [BIN(name), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const p: Proc = {
    proc,
    stdout: '',
    stderr: '',
    started: Date.now(),
    exit: new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code: code ?? 128 + (signal === 'SIGKILL' ? 9 : 2), ms: Date.now() - p.started }))),
  };
  proc.stdout!.on('data', (d: Buffer) => (p.stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (p.stderr += d.toString()));
  return p;
}

async function until(what: string, ok: () => boolean, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
  return Date.now() - t0;
}

function inputFile(rows: number): { dir: string; input: string; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ng-queue-faults-'));
  const input = join(dir, 'in.jsonl');
  writeFileSync(input, Array.from({ length: rows }, (_, i) => `${JSON.stringify({ responses_create_params: { input: `q${i}` } })}\n`).join(''));
  return { dir, input, output: join(dir, 'out', 'rollouts.jsonl') };
}

/** The (task, repeat) keys of an output, each row checked against its input row. */
function keysOf(out: string): string[] {
  return lines(out).map((l) => {
    const row = JSON.parse(l) as { _ng_task_index: number; _ng_rollout_index: number; question: string };
    expect(row.question).toBe(`q${row._ng_task_index}`);
    return `${row._ng_task_index}:${row._ng_rollout_index}`;
  });
}

/** Every (task, repeat) of `rows` × `repeats` exactly once. */
function expectEachOnce(out: string, rows: number, repeats: number): void {
  const keys = keysOf(out);
  const want = new Set<string>();
  for (let t = 0; t < rows; t++) for (let r = 0; r < repeats; r++) want.add(`${t}:${r}`);
  const seen = new Map<string, number>();
  for (const k of keys) seen.set(k, (seen.get(k) ?? 0) + 1);
  const doubled = [...seen].filter(([, n]) => n > 1).map(([k]) => k);
  const lost = [...want].filter((k) => !seen.has(k));
  expect({ lost: lost.length, doubled: doubled.length, rows: keys.length }).toEqual({ lost: 0, doubled: 0, rows: rows * repeats });
}

describe.skipIf(redisBin.path === null)('queue collection under faults (real CLI, real redis-server)', () => {
  let redis: LocalRedis;
  let agent: Awaited<ReturnType<typeof stubAgent>>;
  let head: { close(): Promise<void> };
  let headPort: number;
  const procs: Proc[] = [];
  const start = (name: string, args: string[]) => {
    const p = run(name, args);
    procs.push(p);
    return p;
  };
  const headArgs = () => [`+head_server.port=${headPort}`, '+head_server.host=127.0.0.1'];

  beforeAll(async () => {
    requireBuild();
    redis = await startRedisServer();
    agent = await stubAgent(100);
    headPort = await findOpenPort([]);
    head = await startHeadServer(
      { head_server: { host: '127.0.0.1', port: headPort }, stub_agent: { responses_api_agents: { stub: { host: '127.0.0.1', port: agent.port } } } },
      '127.0.0.1',
      headPort,
    );
  });
  afterAll(async () => {
    for (const p of procs) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
    await head?.close();
    agent?.server.close();
    await redis?.stop();
  });

  it('Redis killed and restarted empty mid-run: the collector notices within seconds, enqueues again what has no result, and finishes; no rollout lost or doubled', async () => {
    const rows = 250;
    const { input, output } = inputFile(rows);
    const q = ['+queue_name=lost'];
    // Two workers of 10 slots against a 100 ms agent: 500 rollouts take about 2.5 s, so the fault lands mid-run.
    const workers = [0, 1].map(() => start('collect-worker', [`+queue_url=${redis.url}`, ...q, ...headArgs(), '+num_samples_in_parallel=10', '+prefetch=0', '+lease_s=5', '+idle_exit_s=2']));
    const collector = start('collect-rollouts', [`+queue_url=${redis.url}`, ...q, ...headArgs(), '+agent_name=stub_agent', `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${output}`, '+num_repeats=2']);
    await until('120 results', () => lines(output).length >= 120 || collector.proc.exitCode !== null, 30_000);
    expect(collector.proc.exitCode, collector.stderr).toBeNull();
    await redis.kill('SIGKILL');
    // Down for a second (workers and collector retry meanwhile), then back without its data.
    await sleep(1000);
    await redis.restart({ empty: true });
    const restarted = Date.now();
    const detectMs = await until('the collector noticing', () => collector.stdout.includes('no longer holds this run'), 30_000);
    const { code, ms } = await collector.exit;
    const finishMs = Date.now() - restarted;
    console.log(`Redis restarted empty after at least 120 of ${rows * 2} results: noticed in ${detectMs} ms, run finished ${finishMs} ms after the restart (${ms} ms in all); agent /run calls ${agent.runs()} for ${rows * 2} rollouts`);
    expect(code, `${collector.stdout}\n${collector.stderr}`).toBe(0);
    expect(ms).toBeLessThan(60_000);
    expect(detectMs).toBeLessThan(10_000);
    expect(collector.stdout).toMatch(/enqueuing the \d+ rollout\(s\) without a recorded result again/);
    expectEachOnce(output, rows, 2);
    expect(lines(output.replace(/\.jsonl$/, '_failures.jsonl'))).toHaveLength(0);
    // The workers made the consumer group again and kept serving, then left once idle.
    for (const w of workers) {
      const { code: wc } = await w.exit;
      expect(wc, w.stdout + w.stderr).toBe(0);
    }
    // Whichever side made the consumer group again first (a worker on NOGROUP, or the collector),
    // the workers kept serving after the restart: together they ran the rollouts the run lacked.
    const done = [...workers.map((w) => w.stdout).join('').matchAll(/Worker finished: (\d+) rollout\(s\) done/g)].reduce((a, m) => a + Number(m[1]), 0);
    expect(done).toBeGreaterThanOrEqual(rows * 2 - 120);
  }, 90_000);

  it('a misspelt agent in queue mode fails at once with the pre-flight message; nothing is written or enqueued', async () => {
    const { dir, input, output } = inputFile(400);
    const collector = start('collect-rollouts', [`+queue_url=${redis.url}`, '+queue_name=typo', ...headArgs(), '+agent_name=stub_agnet', `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${output}`]);
    const { code, ms } = await collector.exit;
    console.log(`misspelt agent in queue mode: exit ${code} after ${ms} ms`);
    expect(code, collector.stderr).toBe(2);
    expect(ms).toBeLessThan(5_000);
    expect(collector.stderr).toContain('a check before the first rollout failed; nothing was sent or written');
    expect(collector.stderr).toContain('agent `stub_agnet` is not in the running config (did you mean `stub_agent`?)');
    expect(existsSync(join(dir, 'out'))).toBe(false);
    // Nothing reached the queue: a worker finds no job.
    const worker = start('collect-worker', [`+queue_url=${redis.url}`, '+queue_name=typo', ...headArgs(), '+idle_exit_s=0.5']);
    const w = await worker.exit;
    expect(w.code, worker.stderr).toBe(0);
    expect(worker.stdout).toContain('Worker finished: 0 rollout(s) done, 0 failed');
  }, 30_000);

  it('an unreachable Redis fails the collector within seconds with the URL named and no file left, and the worker likewise', async () => {
    const port = await findOpenPort([]);
    const url = `redis://ng:SECRET-canary@127.0.0.1:${port}`;
    const { dir, input, output } = inputFile(10);
    const collector = start('collect-rollouts', [`+queue_url=${url}`, ...headArgs(), '+agent_name=stub_agent', `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${output}`]);
    const worker = start('collect-worker', [`+queue_url=${url}`, ...headArgs()]);
    const [c, w] = await Promise.all([collector.exit, worker.exit]);
    console.log(`unreachable Redis: collector exit ${c.code} after ${c.ms} ms, worker exit ${w.code} after ${w.ms} ms`);
    for (const [p, r] of [
      [collector, c],
      [worker, w],
    ] as const) {
      expect(r.code, p.stderr).toBe(1);
      expect(r.ms).toBeLessThan(8_000);
      expect(p.stderr).toContain(`Redis at redis://ng:****@127.0.0.1:${port}`);
      expect(p.stderr).toContain('ECONNREFUSED');
      expect(p.stderr + p.stdout).not.toContain('SECRET-canary');
      // One line, no stack trace.
      expect(p.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(readdirSync(dir)).toEqual(['in.jsonl']);
  }, 30_000);

  it('a malformed +queue_url is named with its credentials masked, by the collector and the worker, in one line', async () => {
    const { dir, input, output } = inputFile(3);
    const cases = [
      ['redis://ng:SECRET-canary@127.0.0.1:notaport', 'the port "notaport" is not a number'],
      ['redis://ng:SECRET-canary@[127.0.0.1', 'it cannot be parsed as a URL'],
      ['http://ng:SECRET-canary@127.0.0.1:6379', 'it must start with redis:// (or rediss:// for TLS)'],
      ['redis://127.0.0.1:6379/zero', 'the path "zero" is not a database number'],
    ] as const;
    for (const [url, why] of cases) {
      // The collector and the worker side by side.
      const runs = [
        { name: 'ng-collect-rollouts', p: start('collect-rollouts', [`+queue_url=${url}`, ...headArgs(), '+agent_name=stub_agent', `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${output}`]) },
        { name: 'ng-collect-worker', p: start('collect-worker', [`+queue_url=${url}`, ...headArgs()]) },
      ];
      for (const { name, p } of runs) {
        const { code, ms } = await p.exit;
        expect(code, p.stderr).toBe(2);
        expect(ms).toBeLessThan(5_000);
        expect(p.stderr).toBe(`${name}: +queue_url ${JSON.stringify(url.replace(':SECRET-canary@', ':****@'))} is not a Redis URL: ${why}. Expected redis://host[:port][/database] (with a password: user:password@ before the host), e.g. redis://127.0.0.1:6379 or redis://10.0.0.1:6379/2.\n`);
      }
    }
    expect(readdirSync(dir)).toEqual(['in.jsonl']);
  }, 30_000);

  it('a database Redis does not have (/99) is reported by the collector and the worker, not served from database 0', async () => {
    const { dir, input, output } = inputFile(3);
    const url = `${redis.url}/99`;
    const collector = start('collect-rollouts', [`+queue_url=${url}`, ...headArgs(), '+agent_name=stub_agent', `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${output}`]);
    const worker = start('collect-worker', [`+queue_url=${url}`, ...headArgs()]);
    for (const p of [collector, worker]) {
      const { code, ms } = await p.exit;
      expect(code, p.stderr).toBe(1);
      expect(ms).toBeLessThan(5_000);
      expect(p.stderr).toContain(`Redis at ${url} refused database 99 (ERR DB index is out of range): this server has databases 0 to 15. Fix the /99 at the end of +queue_url`);
      expect(p.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(readdirSync(dir)).toEqual(['in.jsonl']);
  }, 30_000);

  it('Ctrl-C in queue mode says what was written and how to resume; the rerun writes the rest, each rollout once', async () => {
    const rows = 120;
    const { input, output } = inputFile(rows);
    const q = ['+queue_name=ctrlc'];
    const args = [`+queue_url=${redis.url}`, ...q, ...headArgs(), '+agent_name=stub_agent', `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${output}`];
    // One worker of 5 slots: 120 rollouts of 100 ms take about 2.4 s.
    const runsBefore = agent.runs();
    const worker = start('collect-worker', [`+queue_url=${redis.url}`, ...q, ...headArgs(), '+num_samples_in_parallel=5', '+prefetch=0', '+idle_exit_s=2']);
    const first = start('collect-rollouts', args);
    await until('20 results', () => lines(output).length >= 20 || first.proc.exitCode !== null, 30_000);
    first.proc.kill('SIGINT');
    const stopped = await first.exit;
    console.log(`Ctrl-C in queue mode: exit ${stopped.code}; ${lines(output).length} rollout(s) written before it`);
    expect(stopped.code, first.stderr).toBe(130);
    expect(first.stderr).toContain('Received SIGINT: stopping');
    expect(first.stderr).toMatch(new RegExp(`Interrupted: \\d+ of ${rows} rollout\\(s\\) are in ${output.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+ from this run\\); \\d+ enqueued without a result yet stay in queue ctrlc, and workers keep running them\\. Run the same command again to resume`));
    const second = start('collect-rollouts', args);
    const done = await second.exit;
    expect(done.code, second.stderr).toBe(0);
    expect(done.ms).toBeLessThan(30_000);
    expectEachOnce(output, rows, 1);
    expect((await worker.exit).code).toBe(0);
    // Every rollout ran once: the interruption resent nothing.
    expect(agent.runs() - runsBefore).toBe(rows);
  }, 60_000);

  it('a collector without workers says what it waits for instead of waiting silently; stopped, it reports what stays enqueued', async () => {
    const { input, output } = inputFile(7);
    const notes: string[] = [];
    const stop = new AbortController();
    const collecting = collectViaQueue({ queueUrl: redis.url, queue: 'idle', inputPath: input, outputPath: output, agentName: 'stub_agent', stallNoticeMs: 300, signal: stop.signal, log: (m) => notes.push(m) });
    await until('the notice', () => notes.some((n) => n.startsWith('No result for')), 10_000);
    stop.abort();
    const summary = await collecting;
    expect(notes.find((n) => n.startsWith('No result for'))).toMatch(/^No result for \d+ s; waiting for 7 rollout\(s\): queue idle holds 7 job\(s\), 0 taken by 0 worker\(s\)\. Are workers running \(ng-collect-worker \+queue_url=redis:\/\/127\.0\.0\.1:\d+ \+queue_name=idle\)\?$/);
    expect(summary.interrupted).toBe(true);
    expect(summary.pending).toBe(7);
    expect(summary.written).toBe(0);
  }, 20_000);

  it('a collector that no worker serves fails after its wait with what to do, the jobs left enqueued', async () => {
    const { input, output } = inputFile(4);
    const t0 = Date.now();
    const err = await collectViaQueue({ queueUrl: redis.url, queue: 'nobody', inputPath: input, outputPath: output, agentName: 'stub_agent', stallNoticeMs: 200, workerWaitMs: 1500 }).catch((e: unknown) => e);
    console.log(`no worker: failed after ${Date.now() - t0} ms`);
    expect(err).toMatchObject({ code: 'NG_ERR_QUEUE' });
    expect((err as Error).message).toMatch(/^no worker took a job of queue nobody and no result came for \d+ s; 4 rollout\(s\) wait \(4 job\(s\) in the queue\)\. Start workers \(ng-collect-worker \+queue_url=redis:\/\/127\.0\.0\.1:\d+ \+queue_name=nobody\), then run the same command again/);
    expect(Date.now() - t0).toBeLessThan(10_000);
  }, 20_000);

  it('without a head server in reach the queue collector says how to skip the pre-flight; +preflight=false skips it', async () => {
    const { dir, input, output } = inputFile(3);
    const noHead = String(await findOpenPort([]));
    const checked = start('collect-rollouts', [`+queue_url=${redis.url}`, `+head_server.port=${noHead}`, '+agent_name=stub_agent', `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${output}`]);
    const c = await checked.exit;
    expect(c.code, checked.stderr).toBe(1);
    expect(checked.stderr).toContain('Could not connect to the head server');
    expect(checked.stderr).toContain('give +preflight=false');
    expect(readdirSync(dir)).toEqual(['in.jsonl']);
    // Skipped: the collection runs (a worker of this test's head server serves it).
    const worker = start('collect-worker', [`+queue_url=${redis.url}`, '+queue_name=nohead', ...headArgs(), '+idle_exit_s=1']);
    const unchecked = start('collect-rollouts', [`+queue_url=${redis.url}`, '+queue_name=nohead', `+head_server.port=${noHead}`, '+preflight=false', '+agent_name=stub_agent', `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${output}`]);
    expect((await unchecked.exit).code, unchecked.stderr).toBe(0);
    expectEachOnce(output, 3, 1);
    expect((await worker.exit).code).toBe(0);
  }, 30_000);

  it("the run's jobs evicted from Redis (the rest kept): the stalled collector finds the queue empty, enqueues them again, and finishes each once", async () => {
    const rows = 20;
    const { input, output } = inputFile(rows);
    const notes: string[] = [];
    const collecting = collectViaQueue({ queueUrl: redis.url, queue: 'evict', inputPath: input, outputPath: output, agentName: 'stub_agent', stallNoticeMs: 500, log: (m) => notes.push(m) });
    await until('the jobs enqueued', () => notes.some((n) => n.startsWith('Queue evict: 20 job(s) enqueued')), 10_000);
    // As maxmemory eviction would: the jobs stream (and its consumer group) goes, the run's other keys stay.
    expect(await redisCommand(redis.port, 'DEL', 'ng:q:evict:jobs')).toBe(':1');
    const t0 = Date.now();
    const client = new ServerClient({ globalConfig: { stub_agent: { responses_api_agents: { stub: { host: '127.0.0.1', port: agent.port } } } } });
    const stop = new AbortController();
    const worker = runWorker({ client, queueUrl: redis.url, queue: 'evict', concurrency: 5, signal: stop.signal });
    try {
      const summary = await collecting;
      console.log(`jobs evicted: enqueued again and finished in ${Date.now() - t0} ms`);
      expect(notes.join('\n')).toContain('holds no job of queue evict while this run waits for 20 result(s)');
      expect(summary.written).toBe(rows);
      expectEachOnce(output, rows, 1);
    } finally {
      stop.abort();
      await worker;
      await client.close();
    }
  }, 20_000);

  it('Redis gone for longer than the budget: collector and worker stop with the URL and the last error; the rerun after Redis is back resumes, each rollout once', async () => {
    const own = await startRedisServer();
    const rows = 100;
    const { input, output } = inputFile(rows);
    const client = new ServerClient({ globalConfig: { stub_agent: { responses_api_agents: { stub: { host: '127.0.0.1', port: agent.port } } } } });
    const opts = { queueUrl: own.url, queue: 'gone', inputPath: input, outputPath: output, agentName: 'stub_agent' };
    try {
      const worker = runWorker({ client, queueUrl: own.url, queue: 'gone', concurrency: 5, prefetch: 0, redisBudgetMs: 2000, completeBudgetMs: 2000 }).catch((e: unknown) => e);
      const collecting = collectViaQueue({ ...opts, redisBudgetMs: 2000 }).catch((e: unknown) => e);
      await until('10 results', () => lines(output).length >= 10, 20_000);
      await own.kill('SIGKILL');
      const t0 = Date.now();
      const [c, w] = await Promise.all([collecting, worker]);
      console.log(`Redis gone: collector stopped after ${Date.now() - t0} ms with ${lines(output).length} rollout(s) written`);
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(c).toMatchObject({ code: 'NG_ERR_QUEUE' });
      expect((c as Error).message).toMatch(new RegExp(`^Redis at ${own.url}: .* failed \\d+ time\\(s\\) in [\\d.]+ s \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${own.port}\\)\\. Check that redis-server runs`));
      expect(w).toMatchObject({ code: 'NG_ERR_QUEUE' });
      expect((w as Error).message).toContain(`Redis at ${own.url}: reading jobs failed`);
      // Back with its data (append-only file): the rerun and a new worker finish the run.
      await own.restart();
      const stop = new AbortController();
      const again = runWorker({ client, queueUrl: own.url, queue: 'gone', concurrency: 10, leaseMs: 1000, signal: stop.signal });
      const summary = await collectViaQueue(opts);
      stop.abort();
      await again;
      expect(summary.failed).toBe(0);
      expectEachOnce(output, rows, 1);
    } finally {
      await client.close();
      await own.stop();
    }
  }, 40_000);
});
