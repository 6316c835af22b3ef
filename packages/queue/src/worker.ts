/**
 * A collection worker: takes rollout jobs from the Redis queue, runs each through its agent's
 * /run (the agent this worker's head server knows, so its nearest replica), and hands the result
 * or the failure back with the acknowledgement. It keeps the lease of the jobs it holds; the jobs
 * of a worker that died are taken over once their lease has run out.
 *
 * Round trips are shared: the worker reads a few jobs ahead of its free slots (`prefetch`), so a
 * finished rollout is replaced at once instead of after a read; finished jobs are handed back in
 * batches (one transaction each, while the previous is in flight); dead workers' jobs are looked
 * for now and then rather than before every read.
 */
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { BadResultError, NgError, ServerResponseError, describeError } from '@nemo-gym/core/errors';
import { QueueError } from './errors.js';
import { nextRetryDelay, requestFailure, retryPolicy, sleep, type RetryPolicy, type ServerClient } from '@nemo-gym/core/client';
import { classifyFailure, delivery, failedRowError, judgeFailureRequest, metricsDigest, taggedLine } from '@nemo-gym/core/rollouts';
import {
  checkRedis,
  complete,
  connect,
  ensureGroup,
  GROUP,
  isNoGroup,
  jobsKey,
  parseEntries,
  REDIS_RETRY,
  redisReason,
  shownUrl,
  withRedisRetries,
  type Finished,
  type QueueJob,
  type QueueRecord,
} from './queue.js';

export interface WorkerOptions {
  client: ServerClient;
  queueUrl: string;
  queue?: string;
  /** Rollouts this worker runs at once. */
  concurrency: number;
  /**
   * Jobs taken ahead of a free slot (default: `concurrency`), and more while rollouts finish faster
   * than Redis answers a read (see readAhead). They hold a lease like running jobs and go back to
   * the queue when the worker stops; 0 reads only for free slots.
   */
  prefetch?: number;
  /** A job untouched this long (its worker died) is taken over. */
  leaseMs?: number;
  /** Exit once nothing was left to take or pending for this long (none: run until stopped). */
  idleExitMs?: number | null;
  /** HTTP attempts per rollout while the agent provably did not receive it. */
  maxAttempts?: number;
  /** Ends the worker: it takes no new job and returns once its running jobs are handed back. */
  signal?: AbortSignal;
  log?: (msg: string) => void;
  /** Time budget to hand a finished job back while Redis is unreachable. */
  completeBudgetMs?: number;
  /** Give up (an error naming the URL) when reading jobs keeps failing this long (default 120 s). */
  redisBudgetMs?: number;
}

export interface WorkerSummary {
  done: number;
  failed: number;
  /** Finished jobs that could not be handed back (they are redone after their lease). */
  lost: number;
}

/** Most finished jobs handed back in one transaction. */
const HAND_BACK_BATCH = 512;

export async function runWorker(opts: WorkerOptions): Promise<WorkerSummary> {
  const queue = opts.queue ?? 'rollouts';
  const leaseMs = opts.leaseMs ?? 60_000;
  const prefetch = Math.max(0, opts.prefetch ?? opts.concurrency);
  const log = opts.log ?? (() => undefined);
  const name = `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const url = opts.queueUrl;
  // The one retry policy of the project, with this worker's budgets.
  const readPolicy: RetryPolicy = retryPolicy({ maxElapsedMs: opts.redisBudgetMs ?? REDIS_RETRY.maxElapsedMs }, REDIS_RETRY);
  const handBackPolicy: RetryPolicy = retryPolicy({ maxElapsedMs: opts.completeBudgetMs ?? REDIS_RETRY.maxElapsedMs }, REDIS_RETRY);
  const cmd = await connect(url, `ng-worker-${name}`);
  const reader = await connect(url, `ng-worker-${name}-read`);
  try {
    // A Redis that is not there, or a database it does not have, is one clear error within seconds.
    await checkRedis(cmd, url);
  } catch (err) {
    cmd.disconnect();
    reader.disconnect();
    throw err;
  }
  const summary: WorkerSummary = { done: 0, failed: 0, lost: 0 };
  /** Jobs whose rollout runs here now (what `concurrency` bounds). */
  let running = 0;
  /** Jobs taken ahead, in the order read, waiting for a free slot. */
  const ahead: [string, QueueJob][] = [];
  /** Stream ids of every job this worker holds the lease of: ahead, running, or finished and not yet handed back. */
  const leased = new Set<string>();
  const tasks = new Set<Promise<void>>();
  let wake: (() => void) | null = null;
  const runRetry = opts.maxAttempts && opts.maxAttempts > 0 ? { maxAttempts: opts.maxAttempts } : undefined;

  // Finished jobs wait here and go back together: while one hand-back is in flight, the jobs that
  // finish meanwhile gather for the next (one transaction, one sync on the server, per batch).
  const outbox: Finished[] = [];
  let handingBack: Promise<void> | null = null;
  const handBackAll = async () => {
    // The rollouts whose answers arrived together finish in this turn of the event loop: wait for them.
    await new Promise((r) => setImmediate(r));
    while (outbox.length > 0) {
      const batch = outbox.splice(0, HAND_BACK_BATCH);
      try {
        await withRedisRetries('handing back finished jobs', () => complete(cmd, queue, name, batch), { url, redis: cmd, policy: handBackPolicy });
      } catch (err) {
        summary.lost += batch.length;
        log(`could not hand back ${batch.length} finished job(s) (${batch.map((d) => d.record.key).slice(0, 5).join(', ')}${batch.length > 5 ? ', …' : ''}): ${(err as Error).message}; they are redone after their lease`);
      }
      for (const d of batch) leased.delete(d.id);
    }
  };
  const handBack = (d: Finished) => {
    outbox.push(d);
    handingBack ??= handBackAll().finally(() => (handingBack = null));
  };

  const runJob = async (id: string, job: QueueJob) => {
    const startedAt = Date.now();
    const t0 = performance.now();
    let httpAttempts = 1;
    let finished: Finished;
    let failedRow: Record<string, unknown> | undefined;
    try {
      const res = await opts.client.post(job.agent, '/run', job.body, runRetry ? { retry: runRetry } : {});
      httpAttempts = res.attempts;
      if (!res.ok) throw res.error();
      const result = res.json<unknown>();
      if (result === null || typeof result !== 'object' || Array.isArray(result)) throw new BadResultError(job.agent, JSON.stringify(result).slice(0, 200));
      const row = result as Record<string, unknown>;
      // Upstream's failed row (a judge failure answered as a 200 row) is a failure, never a reward.
      const rowFailure = failedRowError(row);
      if (rowFailure) {
        failedRow = row;
        throw rowFailure;
      }
      const text = taggedLine(res.text, row, job.taskIndex, job.rolloutIndex, job.agent);
      finished = { id, run: job.run, record: { kind: 'result', key: job.key, agent: job.agent, metrics: metricsDigest(row), ms: Math.round((performance.now() - t0) * 100) / 100 }, text };
      summary.done++;
    } catch (err) {
      const f = requestFailure(err);
      if (f) httpAttempts = f.attempts;
      const cls = classifyFailure(err);
      const verifyRequest = judgeFailureRequest(cls, err, failedRow);
      const record: QueueRecord = {
        kind: 'failure',
        key: job.key,
        agent: job.agent,
        line: job.line,
        reason: describeError(err),
        reason_class: cls,
        status: err instanceof ServerResponseError ? err.status : null,
        ...(err instanceof NgError ? { code: err.code } : {}),
        delivered: delivery(err),
        http_attempts: httpAttempts,
        started_at: new Date(startedAt).toISOString(),
        ...(verifyRequest ? { verify_request: verifyRequest } : {}),
      };
      finished = { id, run: job.run, record };
      summary.failed++;
    }
    handBack(finished);
  };

  /** Starts jobs taken ahead while slots are free (not once the worker is stopping). */
  const fillSlots = () => {
    while (running < opts.concurrency && ahead.length > 0 && !opts.signal?.aborted) {
      const [id, job] = ahead.shift()!;
      running++;
      const t = runJob(id, job).finally(() => {
        finishedCount++;
        running--;
        tasks.delete(t);
        fillSlots();
        const w = wake;
        wake = null;
        w?.();
      });
      tasks.add(t);
    }
  };

  const take = (id: string, job: QueueJob | null) => {
    if (leased.has(id)) return false;
    if (!job) {
      // An entry without a readable job (deleted meanwhile, or foreign): acknowledge it away.
      void cmd.xack(jobsKey(queue), GROUP, id).catch(() => undefined);
      return false;
    }
    leased.add(id);
    ahead.push([id, job]);
    return true;
  };

  // Holding the lease: every job held here is touched well within the lease.
  const heartbeat = setInterval(() => {
    if (leased.size === 0) return;
    void cmd.xclaim(jobsKey(queue), GROUP, name, 0, ...leased, 'JUSTID').catch(() => undefined);
  }, Math.max(100, Math.floor(leaseMs / 3)));

  // Jobs of a dead worker are looked for now and then (they come back only after a whole lease),
  // and whenever the stream has nothing new.
  const claimEveryMs = Math.min(5000, Math.max(100, Math.floor(leaseMs / 4)));
  let lastClaim = 0;
  let idleSince = Date.now();
  // Beyond `prefetch`, as many jobs as this worker finishes in two read round trips are taken
  // ahead: with short rollouts and a slow Redis (a sync per read, a busy host) the slots then do
  // not wait for the next read; with long rollouts this is next to nothing.
  let finishedCount = 0;
  /** Jobs finished per ms and the round trip of a read that found jobs (ms), both smoothed. */
  let rate = 0;
  let rtt = 0;
  let rateFrom = { at: performance.now(), count: 0 };
  const readAhead = () => {
    const now = performance.now();
    if (now - rateFrom.at >= 50) {
      const sample = (finishedCount - rateFrom.count) / (now - rateFrom.at);
      rate = rate === 0 ? sample : 0.7 * rate + 0.3 * sample;
      rateFrom = { at: now, count: finishedCount };
    }
    return prefetch === 0 ? 0 : prefetch + Math.min(2 * opts.concurrency, Math.ceil(rate * rtt * 2));
  };
  try {
    await withRedisRetries('creating the consumer group', () => ensureGroup(cmd, queue), { url, redis: cmd, policy: readPolicy, signal: opts.signal });
    log(`worker ${name} serving queue ${queue} at ${shownUrl(url)} (${opts.concurrency} at once, ${prefetch} ahead${prefetch ? ' and more while Redis is slower than the rollouts' : ''}, lease ${leaseMs / 1000} s)`);
    let readNothing = true;
    /** Reads that failed in a row, and since when (the retry budget of readPolicy). */
    let failedReads = 0;
    let failingSince = 0;
    while (!opts.signal?.aborted) {
      const room = opts.concurrency + readAhead() - running - ahead.length;
      if (room <= 0) {
        await new Promise<void>((r) => (wake = r));
        // Let the rollouts finishing together all free their slots, then read for all of them at once.
        await new Promise((r) => setImmediate(r));
        continue;
      }
      let got = 0;
      try {
        if (readNothing || Date.now() - lastClaim >= claimEveryMs) {
          lastClaim = Date.now();
          const claimed = (await cmd.xautoclaim(jobsKey(queue), GROUP, name, leaseMs, '0-0', 'COUNT', room)) as [string, unknown, string[]?];
          for (const [id, job] of parseEntries(claimed[1])) if (take(id, job)) got++;
          fillSlots();
        }
        if (got < room) {
          const t0 = performance.now();
          const read = (await reader.xreadgroup('GROUP', GROUP, name, 'COUNT', room - got, 'BLOCK', 500, 'STREAMS', jobsKey(queue), '>')) as [string, unknown][] | null;
          let fresh = 0;
          for (const [, entries] of read ?? []) for (const [id, job] of parseEntries(entries)) if (take(id, job)) fresh++;
          fillSlots();
          if (fresh > 0) rtt = rtt === 0 ? performance.now() - t0 : 0.7 * rtt + 0.3 * (performance.now() - t0);
          got += fresh;
          readNothing = fresh === 0;
        }
        failedReads = 0;
      } catch (err) {
        if (isNoGroup(err)) {
          // Redis lost the queue (restarted without its data): the group is made again, and the
          // collector, which alone knows what has no result yet, enqueues those jobs again.
          log(`queue ${queue} or its consumer group is gone from Redis at ${shownUrl(url)} (restarted without its data?): recreating it; the collector enqueues the unfinished jobs again`);
          await withRedisRetries('creating the consumer group', () => ensureGroup(cmd, queue), { url, redis: cmd, policy: readPolicy, signal: opts.signal });
          continue;
        }
        if (failedReads++ === 0) failingSince = Date.now();
        const elapsed = Date.now() - failingSince;
        const delay = nextRetryDelay(readPolicy, failedReads, elapsed);
        if (delay === null) {
          throw new QueueError(
            `Redis at ${shownUrl(url)}: reading jobs failed ${failedReads} time(s) in a row over ${(elapsed / 1000).toFixed(1)} s (${redisReason(reader, err)}); stopping. The jobs this worker held go to other workers after their lease; start the worker again once Redis answers.`,
            { cause: err },
          );
        }
        if (failedReads === 1) log(`queue read failed (${redisReason(reader, err)}); retrying for up to ${Math.round(readPolicy.maxElapsedMs / 1000)} s`);
        await sleep(delay, opts.signal);
        continue;
      }
      if (got > 0 || leased.size > 0) idleSince = Date.now();
      else if (opts.idleExitMs != null && Date.now() - idleSince >= opts.idleExitMs) {
        // Nothing new: leave only when no job is pending anywhere (a dead worker's jobs still come back).
        const pending = (await cmd.xpending(jobsKey(queue), GROUP).catch(() => [1])) as [number, ...unknown[]];
        if (Number(pending[0]) === 0) break;
        idleSince = Date.now() - opts.idleExitMs / 2;
      }
    }
  } finally {
    // Stopping: the jobs taken ahead go back at once (marked idle for a whole lease, so the next
    // worker that looks takes them over); the running ones finish and are handed back.
    const unstarted = ahead.splice(0).map(([id]) => id);
    if (unstarted.length) {
      await cmd.xclaim(jobsKey(queue), GROUP, name, 0, ...unstarted, 'IDLE', leaseMs, 'JUSTID').catch(() => undefined);
      for (const id of unstarted) leased.delete(id);
    }
    await Promise.all(tasks);
    await handingBack;
    clearInterval(heartbeat);
    cmd.disconnect();
    reader.disconnect();
  }
  return summary;
}
