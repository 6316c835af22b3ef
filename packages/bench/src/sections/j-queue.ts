/**
 * `pnpm bench` section J: rollouts/s through the Redis queue (collector + one worker, in this process) vs the local
 * collector, same stub agent, same client, same concurrency, same run: a warm-up of each, then
 * rounds taken in turn (each round's first path alternating), medians compared (skipped when
 * redis-server is not installed).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerClient } from '@nemo-gym/core/client';
import type { ConfigDict } from '@nemo-gym/core/config';
import { collectRollouts } from '@nemo-gym/core/rollouts';
import { collectViaQueue, runWorker } from '@nemo-gym/queue';
import { findRedisServer, startRedisServer } from '@nemo-gym/queue/redis-server';
import { SHARED_NOTE, median } from '../stats.js';

/** A stub agent: /run answers a small verify response after `delayMs`. */
async function stubAgent(delayMs: number): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"reward":1.0,"response":{"id":"r","output":[]}}');
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

/** CPU ms a process used so far (Linux /proc), or null where that cannot be read. */
function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}


export async function sectionQueue(rollouts: number, concurrency: number, delayMs: number, rounds = 5): Promise<void> {
  console.log(`\n== J. rollouts/s through Redis (collector + 1 worker) vs the local collector: ${rollouts} rollouts, concurrency ${concurrency}, stub agent ${delayMs} ms, ${rounds} rounds ==`);
  const found = findRedisServer();
  if (found.path === null) {
    console.log(`  skipped: ${found.reason}`);
    return;
  }
  const agent = await stubAgent(delayMs);
  const dir = mkdtempSync(join(tmpdir(), 'ng-bench-queue-'));
  const input = join(dir, 'in.jsonl');
  writeFileSync(input, Array.from({ length: rollouts }, (_, i) => `{"responses_create_params":{"input":"q${i}"}}\n`).join(''));
  const globalConfig: ConfigDict = { agent: { responses_api_agents: { stub: { host: '127.0.0.1', port: agent.port } } } };
  const client = new ServerClient({ globalConfig, connectionsPerHost: concurrency });
  const redis = await startRedisServer();
  const cpuMs = () => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  };
  const local = async (out: string) => {
    const c0 = cpuMs();
    const s = await collectRollouts({ client, inputPath: input, outputPath: join(dir, out), agentName: 'agent', concurrency });
    return { ...s, cpuMs: cpuMs() - c0, redisCpuMs: 0 };
  };
  // The worker runs in this process too (one process against one, plus redis-server), with the same client and concurrency.
  const queued = async (out: string) => {
    const c0 = cpuMs();
    const r0 = processCpuMs(redis.pid);
    const stop = new AbortController();
    const worker = runWorker({ client, queueUrl: redis.url, queue: 'bench', concurrency, signal: stop.signal });
    try {
      const s = await collectViaQueue({ queueUrl: redis.url, queue: 'bench', inputPath: input, outputPath: join(dir, out), agentName: 'agent' });
      const r1 = processCpuMs(redis.pid);
      return { ...s, cpuMs: cpuMs() - c0, redisCpuMs: r0 !== null && r1 !== null ? r1 - r0 : NaN };
    } finally {
      stop.abort();
      await worker;
    }
  };
  try {
    // Warm-up of both paths (compiled code, open connections); then rounds in turn.
    await local('warm-local.jsonl');
    await queued('warm-queue.jsonl');
    const runs: { l: Awaited<ReturnType<typeof local>>; q: Awaited<ReturnType<typeof queued>> }[] = [];
    // Rounds alternate which path goes first, so a drift of the machine's load favours neither.
    for (let i = 0; i < rounds; i++) {
      if (i % 2 === 0) runs.push({ l: await local(`local-${i}.jsonl`), q: await queued(`queue-${i}.jsonl`) });
      else {
        const q = await queued(`queue-${i}.jsonl`);
        runs.push({ l: await local(`local-${i}.jsonl`), q });
      }
    }
    const rate = (s: { written: number; elapsedS: number }) => s.written / s.elapsedS;
    for (const [i, { l, q }] of runs.entries()) {
      console.log(
        `  round ${i + 1}: local ${rate(l).toFixed(0)}/s (${l.written} written, ${l.failed} failed), Redis ${rate(q).toFixed(0)}/s (${q.written} written, ${q.failed} failed), ratio ${(rate(q) / rate(l)).toFixed(2)}x`,
      );
    }
    const lr = median(runs.map((r) => rate(r.l)));
    const qr = median(runs.map((r) => rate(r.q)));
    const per = (ms: number) => `${((ms * 1000) / rollouts).toFixed(0)} µs`;
    console.log(`  local collector: ${lr.toFixed(0)} rollouts/s (median); CPU per rollout ${per(median(runs.map((r) => r.l.cpuMs)))} (this process, stub agent included)`);
    console.log(
      `  through Redis  : ${qr.toFixed(0)} rollouts/s (median); CPU per rollout ${per(median(runs.map((r) => r.q.cpuMs)))} (this process: collector, worker, stub agent) + ${per(median(runs.map((r) => r.q.redisCpuMs)))} redis-server`,
    );
    console.log(`  ratio          : ${(qr / lr).toFixed(2)}x of the medians (target ≥ 0.85x; Redis with appendfsync always; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}; ${SHARED_NOTE})`);
  } finally {
    await redis.stop();
    await client.close();
    agent.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
