/**
 * ng-collect-rollouts with `+queue_url`: the collector enqueues every (task, repeat) still to do
 * and is the one writer of the output: it reads what workers finished from the run's results
 * stream and writes each (task, repeat) exactly once (results to the output, failures to
 * `<stem>_failures.jsonl`), with the same resume, metrics and progress as a local collection.
 *
 * Before anything is written or enqueued: the file checks, the URL, Redis itself (a few seconds)
 * and the pre-flight of a local collection. While it runs, every Redis command has the project's
 * retry policy and a time budget, a Redis that lost the run is noticed within a second and the
 * rollouts without a result are enqueued again, and a wait without results says what it waits for
 * (and ends after `workerWaitMs` when no worker holds a job). Stopped (`signal`), it keeps what is
 * written and leaves the jobs enqueued for the rerun.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Redis } from 'ioredis';
import { retryPolicy, type ServerClient } from '@nemo-gym/core/client';
import { NgError, ServerResponseError, UsageError, describeError } from '@nemo-gym/core/errors';
import { QueueError } from './errors.js';
import {
  agentRefNames,
  checkCollectPaths,
  classifyAnswer,
  classifyFailure,
  collectionPaths,
  countLines,
  FAILURE_LABELS,
  FailureTracker,
  finishCollection,
  fingerprintOf,
  GroupCollector,
  groupVerifierOf,
  metricsDigest,
  MetricsAccumulator,
  preflight,
  prepareResume,
  readJobs,
  rolloutKey,
  RolloutSink,
  ScoredTasks,
  shardSize,
  type AttemptRecord,
  type CollectSummary,
  type FailureClass,
  type GroupOverrides,
  type PreflightOptions,
  type Progress,
} from '@nemo-gym/core/rollouts';
import { checkRedis, connect, decodeResults, enqueue, ensureGroup, GROUP, jobsKey, parseQueueUrl, REDIS_CONNECT_RETRY, REDIS_RETRY, runKey, shownUrl, withRedisRetries, type QueueJob } from './queue.js';

export interface QueueCollectOptions {
  queueUrl: string;
  queue?: string;
  inputPath: string;
  outputPath: string;
  agentName?: string;
  limit?: number | null;
  numRepeats?: number | null;
  overrides?: Record<string, unknown>;
  restart?: boolean;
  /** Only the tasks whose index is `index` modulo `count`. */
  shard?: { index: number; count: number } | null;
  onProgress?: (p: Progress) => void;
  log?: (msg: string) => void;
  /** Give up when Redis stays unreachable this long during the run (default 120 s; the first contact has a few seconds). */
  redisBudgetMs?: number;
  /**
   * The checks of a local collection before anything is enqueued (preflight.ts: the agents of the
   * run exist and answer, their servers and model backends too), through `client`, the servers of
   * the head server the workers use. Skipped without a client.
   */
  preflight?: boolean | PreflightOptions;
  client?: ServerClient;
  /** Stops the collection: nothing more is enqueued or written; what the workers finish stays for the rerun. */
  signal?: AbortSignal;
  /** Say what the collector waits for when no result came for this long (default 30 s). */
  stallNoticeMs?: number;
  /**
   * Fail when no result came for this long while no worker holds a job of the queue (default
   * 10 min; checked when the collector says what it waits for). A long rollout holds its job, so
   * it never counts as no worker.
   */
  workerWaitMs?: number;
  /**
   * Overrides of the group settings of resources servers that score groups (docs/group-rewards.md).
   * Which servers do is read from the head server's config through `client`: without a client,
   * every rollout is written with its own /verify reward.
   */
  group?: GroupOverrides;
}

/** Stream ids (`<ms>-<seq>`) in order. */
function streamIdBefore(a: string, b: string): boolean {
  const [am, as] = a.split('-').map((x) => BigInt(x || '0'));
  const [bm, bs] = b.split('-').map((x) => BigInt(x || '0'));
  return am! < bm! || (am === bm && as! < bs!);
}

/** How often the collector checks that Redis still holds the run (a restart without its data loses it). */
const LIVE_CHECK_MS = 1000;

/** The run's data is enqueued again at most this many times (a Redis that keeps losing it fails the run). */
const MAX_RECOVERIES = 5;

/** Enqueue batches (of 500 jobs) in flight at once. */
const ENQUEUE_WINDOW = 8;

/** A set of (task, repeat) pairs as one byte per pair (no string per key; it grows as tasks come). */
class PairSet {
  private flags = new Uint8Array(1024);
  size = 0;
  constructor(private readonly repeats: number) {}

  add(task: number, repeat: number): void {
    const i = task * this.repeats + repeat;
    if (i >= this.flags.length) {
      const grown = new Uint8Array(Math.max(i + 1, this.flags.length * 2));
      grown.set(this.flags);
      this.flags = grown;
    }
    if (this.flags[i] === 0) {
      this.flags[i] = 1;
      this.size++;
    }
  }

  has(task: number, repeat: number): boolean {
    const i = task * this.repeats + repeat;
    return i < this.flags.length && this.flags[i] === 1;
  }

  /** Removes the pair; false when it was not in the set (a repeat, or not a pair of this run). */
  take(task: number, repeat: number): boolean {
    if (!Number.isInteger(task) || !Number.isInteger(repeat) || task < 0 || repeat < 0 || repeat >= this.repeats) return false;
    const i = task * this.repeats + repeat;
    if (i >= this.flags.length || this.flags[i] === 0) return false;
    this.flags[i] = 0;
    this.size--;
    return true;
  }
}

export async function collectViaQueue(opts: QueueCollectOptions): Promise<CollectSummary> {
  const log = opts.log ?? (() => undefined);
  if (!existsSync(opts.inputPath)) throw new UsageError(`Input file not found: ${opts.inputPath}. Give +input_jsonl_fpath=<path to a JSONL file of rows>.`);
  const queue = opts.queue ?? 'rollouts';
  const url = opts.queueUrl;
  // The one retry policy of the project, with this run's time budget for a Redis that went away.
  const policy = retryPolicy({ maxElapsedMs: opts.redisBudgetMs ?? REDIS_RETRY.maxElapsedMs }, REDIS_RETRY);
  const signal = opts.signal;
  const numRepeats = opts.numRepeats && opts.numRepeats > 0 ? opts.numRepeats : 1;
  const limit = opts.limit && opts.limit > 0 ? opts.limit : null;
  const paths = collectionPaths(opts.outputPath);
  // The same file checks as a local collection (input and output never one file, …), and the URL.
  checkCollectPaths(opts.inputPath, paths);
  parseQueueUrl(url);
  const metrics = new MetricsAccumulator(numRepeats > 1);
  /** Failures of this run by reason class, as a local collection counts them. */
  const tracker = new FailureTracker();
  const fingerprint = await fingerprintOf(opts.inputPath, limit, numRepeats, opts.agentName ?? null, opts.overrides ?? {});
  const scoredTasks = new ScoredTasks();
  // The run: this input with these settings, written to this output (two collections of one input to two files are two runs).
  const run = createHash('sha256')
    .update(JSON.stringify([fingerprint.input_sha256, limit, numRepeats, opts.agentName ?? null, opts.overrides ?? {}, opts.outputPath]))
    .digest('hex')
    .slice(0, 16);
  // Before anything is created, deleted or enqueued, and side by side: Redis answers (within a few
  // seconds) with the database of the URL, the pre-flight checks of a local collection pass, and
  // the consumer group exists; the input is counted meanwhile.
  const redis: Redis = await connect(url, `ng-collector-${run}`);
  const reader: Redis = await connect(url, `ng-collector-${run}-read`);
  const retrying = <T>(what: string, fn: () => Promise<T>) => withRedisRetries(what, fn, { url, redis, policy, signal });
  let resume: Awaited<ReturnType<typeof prepareResume>>;
  let total: number;
  /** Ends the checks still running when one failed. */
  const setup = new AbortController();
  try {
    // The first problem found ends the wait (a misspelt agent is reported at once, not after Redis's budget).
    const [, , lines] = await Promise.all([
      opts.preflight && opts.client
        ? agentRefNames(opts.inputPath, limit).then((agents) => {
            if (opts.agentName) agents.add(opts.agentName);
            return preflight(opts.client!, [...agents], { log, rows: { path: opts.inputPath, limit, agentName: opts.agentName }, ...(typeof opts.preflight === 'object' ? opts.preflight : {}) });
          })
        : null,
      checkRedis(redis, url, { signal: setup.signal }).then(() =>
        withRedisRetries('creating the consumer group', () => ensureGroup(redis, queue), { url, redis, policy: REDIS_CONNECT_RETRY, signal: setup.signal }),
      ),
      countLines(opts.inputPath, limit),
    ]);
    total = shardSize(lines, opts.shard) * numRepeats;
    if (signal?.aborted) throw new NgError('NG_ERR_USAGE', 'the collection was stopped before it started; nothing was enqueued or written.');
    mkdirSync(dirname(opts.outputPath) || '.', { recursive: true });
    resume = await prepareResume(paths, fingerprint, opts.restart === true, metrics, log, (row) => scoredTasks.see(row));
  } catch (err) {
    setup.abort();
    redis.disconnect();
    reader.disconnect();
    throw err;
  }
  const tokensBefore = { input: metrics.inputTokens, output: metrics.outputTokens };
  const sink = new RolloutSink(paths.outputPath, paths.failuresPath);
  const started = Date.now();
  /** The (task, repeat) pairs this run still waits for. */
  const waiting = new PairSet(numRepeats);
  let skipped = 0;
  let duplicates = 0;
  const progress = (): Progress => {
    const elapsedS = (Date.now() - started) / 1000;
    const finished = sink.written + sink.failed;
    const rate = elapsedS > 0 ? sink.written / elapsedS : 0;
    const input = metrics.inputTokens - tokensBefore.input;
    const output = metrics.outputTokens - tokensBefore.output;
    return {
      done: sink.written,
      failed: sink.failed,
      skipped,
      total,
      inFlight: waiting.size,
      elapsedS,
      rate,
      etaS: finished > 0 && elapsedS > 0 ? (total - skipped - finished) / (finished / elapsedS) : null,
      failures: tracker.byLabel(),
      inputTokens: input,
      outputTokens: output,
      tokensPerS: elapsedS > 0 ? (input + output) / elapsedS : 0,
    };
  };
  const timer = opts.onProgress ? setInterval(() => opts.onProgress!(progress()), 1000) : null;

  const failure = (
    key: string,
    t: number,
    r: number,
    line: number,
    agent: string | null,
    cls: FailureClass,
    attempt: Omit<AttemptRecord, 'attempt'>,
    verifyRequest?: Record<string, unknown>,
  ) => {
    const history = [...(resume.history.get(key) ?? [])];
    history.push({ attempt: history.length + 1, ...attempt });
    const extra = verifyRequest ? { verify_request: verifyRequest } : {};
    return sink.failure({ _ng_task_index: t, _ng_rollout_index: r, line, agent, attempts: history.length, reason: attempt.reason, status: attempt.status, reason_class: cls, history, ...extra });
  };

  /** Keys of group members recorded as failed (their results were held, not written): the next run may enqueue them again. */
  let lostKeys: string[] = [];
  // Rollouts of agents whose resources server scores groups are held until their group is scored (group.ts).
  const client = opts.client;
  const groups = new GroupCollector({
    client: client!,
    numRepeats,
    verifierOf: (agent) => (client ? groupVerifierOf(client.globalConfig, agent, opts.group) : null),
    write: async (text, members) => {
      await sink.results(text, members.length);
      for (const { member: m, row } of members) {
        metrics.add(metricsDigest(row), m.taskIndex, m.agent, m.rolloutIndex);
        if (m.latencyMs !== undefined) metrics.addLatency(m.latencyMs);
      }
    },
    lose: async (l) => {
      const cls = classifyFailure(l.err);
      const reason = describeError(l.err);
      tracker.failure(cls, reason);
      lostKeys.push(rolloutKey(l.taskIndex, l.rolloutIndex));
      await failure(rolloutKey(l.taskIndex, l.rolloutIndex), l.taskIndex, l.rolloutIndex, l.line, l.agent, cls, {
        started_at: new Date().toISOString(),
        reason,
        status: l.err instanceof ServerResponseError ? l.err.status : null,
        delivered: 'yes',
        http_attempts: 0,
      });
    },
    signal,
    log,
  });
  /** The read position before the first held member of each task (the position saved never passes it). */
  const heldFrom = new Map<number, string>();

  const liveKey = runKey(run, 'live');
  const runKeys = [runKey(run, 'enqueued'), runKey(run, 'results'), runKey(run, 'pos'), liveKey];
  let interrupted = false;
  try {
    if (opts.restart) await retrying('clearing the run', () => redis.del(...runKeys));
    // The mark of this run in Redis: when it is gone, so is the rest of the run's data there (see recover).
    await retrying('marking the run', () => redis.set(liveKey, String(Date.now())));
    // 1. Enqueue what is still to do (in batches; a key enqueued by an earlier collector is not added
    // again). A few batches are in flight at once, so the workers' supply does not wait for a round
    // trip (and a sync) per batch; each batch is one step on the server, and sending one again adds nothing.
    /** Enqueues the jobs of the input that `isDone` does not skip; resolves with how many were new. */
    const enqueueInput = async (isDone: (t: number, r: number) => boolean, first: boolean): Promise<number> => {
      let batch: QueueJob[] = [];
      let added = 0;
      const sending = new Set<Promise<void>>();
      const flush = async () => {
        const jobs = batch;
        batch = [];
        if (jobs.length === 0) return;
        const p: Promise<void> = retrying('enqueuing jobs', () => enqueue(redis, queue, run, jobs)).then((n) => {
          added += n;
          sending.delete(p);
        });
        // Awaited below (a failure surfaces there), never left unhandled meanwhile.
        p.catch(() => undefined);
        sending.add(p);
        if (sending.size >= ENQUEUE_WINDOW) await Promise.race(sending);
      };
      for await (const job of readJobs({
        inputPath: opts.inputPath,
        limit,
        numRepeats,
        agentName: opts.agentName,
        overrides: opts.overrides,
        isDone,
        onSkip: (n) => {
          if (first) skipped += n;
        },
        stopped: () => signal?.aborted === true,
        shard: opts.shard,
        attemptIndex: (t, r) => resume.history.get(rolloutKey(t, r))?.length ?? 0,
      })) {
        const key = rolloutKey(job.taskIndex, job.rolloutIndex);
        if (job.kind === 'bad') {
          tracker.failure('bad_row', job.reason);
          await failure(key, job.taskIndex, job.rolloutIndex, job.line, null, 'bad_row', { started_at: new Date().toISOString(), reason: job.reason, status: null, delivered: 'no', http_attempts: 0 });
          continue;
        }
        if (first) waiting.add(job.taskIndex, job.rolloutIndex);
        batch.push({ key, run, taskIndex: job.taskIndex, rolloutIndex: job.rolloutIndex, line: job.line, agent: job.agent, body: job.body });
        if (batch.length >= 500) await flush();
      }
      await flush();
      await Promise.all(sending);
      return added;
    };
    // A task whose group was scored in an earlier run is done, members that failed then included.
    const added = await enqueueInput((t, r) => resume.done.has(rolloutKey(t, r)) || scoredTasks.tasks.has(t), true);
    if (!signal?.aborted) log(`Queue ${queue}: ${added} job(s) enqueued for run ${run}${waiting.size > added ? `, ${waiting.size - added} already there from an earlier start` : ''}; waiting for workers (ng-collect-worker +queue_url=…).`);

    /**
     * Redis lost the run (restarted without persistence, or its keys evicted): the jobs, the
     * consumer group and the results not read yet are gone. The collector alone knows which
     * (task, repeat) have a recorded result, so the others are enqueued again, as a new attempt
     * (as a rerun would); a result that still comes for one of them (a worker finishing a rollout
     * it had started) is kept once, the other dropped as a repeat.
     */
    let recoveries = 0;
    const recover = async (what: string) => {
      if (++recoveries > MAX_RECOVERIES) {
        throw new QueueError(
          `Redis at ${shownUrl(url)} lost this run's data ${MAX_RECOVERIES} times; stopping. Make it keep its data (appendonly yes, maxmemory-policy noeviction), then run the same command again to resume: ${sink.written} result(s) of this run are in ${paths.outputPath}.`,
        );
      }
      log(`Redis at ${shownUrl(url)} ${what}: recreating the consumer group and enqueuing the ${waiting.size} rollout(s) without a recorded result again; a result that arrives twice is written once.`);
      // What is left of the run's set of enqueued keys would keep them from being enqueued again.
      await retrying('marking the run', () => redis.multi().del(runKey(run, 'enqueued')).set(liveKey, String(Date.now())).exec());
      await retrying('creating the consumer group', () => ensureGroup(redis, queue));
      const again = await enqueueInput((t, r) => !waiting.has(t, r), false);
      log(`Queue ${queue}: ${again} job(s) enqueued again for run ${run}.`);
    };

    // 2. The one writer: read finished records from the saved position until every key is in.
    const resultsKey = runKey(run, 'results');
    let pos = (await retrying('reading the writer position', () => redis.get(runKey(run, 'pos')))) ?? '0-0';
    /** The position saved after the previous batch (its sync overlaps the next read). */
    let saving: Promise<unknown> = Promise.resolve();
    let unreadable = 0;
    let checked = Date.now();
    let lastResult = Date.now();
    let noticed = Date.now();
    const stallMs = opts.stallNoticeMs ?? 30_000;
    const workerWaitMs = opts.workerWaitMs ?? 600_000;
    /** The queue was found empty while results are missing: if the next read brings none either, the jobs are gone. */
    let queueEmpty = false;
    while (waiting.size > 0 && !signal?.aborted) {
      const now = Date.now();
      if (now - checked >= LIVE_CHECK_MS) {
        checked = now;
        if ((await retrying('checking the run', () => redis.exists(liveKey))) === 0) await recover('no longer holds this run (restarted without its data, or its keys were evicted)');
      }
      if (now - lastResult >= stallMs && now - noticed >= stallMs) {
        noticed = now;
        // Never a silent wait: what the collector waits for, and where it is.
        const [length, pending] = await Promise.all([
          redis.xlen(jobsKey(queue)).catch(() => null),
          (redis.xpending(jobsKey(queue), GROUP) as Promise<[number, string | null, string | null, [string, string][] | null]>).catch(() => null),
        ]);
        const consumers = pending?.[3]?.length ?? 0;
        // A job leaves the queue only in the step that appends its result (queue.ts, complete): with
        // no job left and no result to read, the rollouts still waited for were lost (evicted, deleted).
        queueEmpty = length === 0;
        const workerCmd = `ng-collect-worker +queue_url=${shownUrl(url)}${queue === 'rollouts' ? '' : ` +queue_name=${queue}`}`;
        // No result for the whole wait and no job held by any worker: nobody serves this queue.
        if (now - lastResult >= workerWaitMs && pending !== null && Number(pending[0]) === 0) {
          throw new QueueError(
            `no worker took a job of queue ${queue} and no result came for ${Math.round((now - lastResult) / 1000)} s; ${waiting.size} rollout(s) wait (${length ?? '?'} job(s) in the queue). Start workers (${workerCmd}), then run the same command again: the jobs stay enqueued and what is written stays.`,
          );
        }
        log(
          `No result for ${Math.round((now - lastResult) / 1000)} s; waiting for ${waiting.size} rollout(s): queue ${queue} holds ${length ?? '?'} job(s), ${pending ? pending[0] : '?'} taken by ${consumers} worker(s). Are workers running (${workerCmd})?`,
        );
      }
      const read = (await retrying('reading results', () => reader.xread('COUNT', 1000, 'BLOCK', 1000, 'STREAMS', resultsKey, pos)).catch((err: unknown) => {
        // Stopped while Redis was away: an interruption (what is written stays), not a failure.
        if (signal?.aborted) return null;
        throw err;
      })) as [string, [string, string[]][]][] | null;
      const entries = read?.[0]?.[1] ?? [];
      if (entries.length === 0) {
        if (queueEmpty && !signal?.aborted) {
          queueEmpty = false;
          await recover(`holds no job of queue ${queue} while this run waits for ${waiting.size} result(s) (its jobs were evicted or deleted)`);
        }
        continue;
      }
      queueEmpty = false;
      lastResult = Date.now();
      /** Failed keys of this batch: the next run may enqueue them again. */
      const failedKeys: string[] = [];
      const writes: Promise<void>[] = [];
      /** The output lines of this batch, written at once. */
      let out = '';
      let outCount = 0;
      for (const [id, fields] of entries) {
        const before = pos;
        pos = id;
        const entry = decodeResults(fields);
        if (entry === null) {
          if (unreadable++ === 0) log(`Skipped a results entry (${id}) this collector cannot read: fields ${fields.filter((_, i) => i % 2 === 0).join(', ')}. Are the workers of another version?`);
          continue;
        }
        /** Each result's line, when some of this entry's results are repeats (null: every result is kept). */
        let split: string[] | null = null;
        let kept = '';
        let resultNo = 0;
        for (const rec of entry.records) {
          const isResult = rec.kind === 'result';
          const lineNo = isResult ? resultNo++ : -1;
          // `<task>:<repeat>`; anything else is no pair of this run.
          const colon = rec.key.indexOf(':');
          const t = colon > 0 ? Number(rec.key.slice(0, colon)) : NaN;
          const r = colon > 0 && colon < rec.key.length - 1 ? Number(rec.key.slice(colon + 1)) : NaN;
          if (!waiting.take(t, r)) {
            duplicates++;
            if (isResult && split === null) {
              split = entry.lines.split('\n');
              for (let i = 0; i < lineNo; i++) kept += `${split[i]}\n`;
            }
            continue;
          }
          if (rec.kind === 'result' && groups.grouped(rec.agent)) {
            // Held for its group: written (or recorded) when the group is scored.
            if (split === null) {
              // The lines before it are kept, this one and what follows are picked one by one.
              split = entry.lines.split('\n');
              for (let i = 0; i < lineNo; i++) kept += `${split[i]}\n`;
            }
            if (!heldFrom.has(t)) heldFrom.set(t, before);
            writes.push(groups.result({ taskIndex: t, rolloutIndex: r, agent: rec.agent, line: t + 1, row: JSON.parse(split[lineNo]!) as Record<string, unknown>, ...(typeof rec.ms === 'number' ? { latencyMs: rec.ms } : {}) }));
            continue;
          }
          if (rec.kind === 'result') {
            if (split !== null) kept += `${split[lineNo]}\n`;
            outCount++;
            metrics.add(rec.metrics, t, rec.agent, r);
            if (typeof rec.ms === 'number') metrics.addLatency(rec.ms);
          } else {
            failedKeys.push(rec.key);
            // The worker's class; a record without one is classified here from its status and code.
            const cls = (rec.reason_class && Object.hasOwn(FAILURE_LABELS, rec.reason_class) ? rec.reason_class : rec.status !== null ? classifyAnswer(rec.status, rec.code) : 'other') as FailureClass;
            const reason = `${rec.reason} (worker ${entry.worker})`;
            tracker.failure(cls, reason);
            const attempt = { started_at: rec.started_at, reason, status: rec.status, delivered: rec.delivered, http_attempts: rec.http_attempts };
            writes.push(failure(rec.key, t, r, rec.line, rec.agent, cls, attempt, rec.verify_request));
            if (rec.agent !== null && groups.grouped(rec.agent)) groups.failed(t, r, rec.agent);
          }
        }
        out += split === null ? entry.lines : kept;
      }
      writes.push(sink.results(out, outCount));
      // Written before the position moves: a restarted writer re-reads at most what it already wrote (and drops it).
      await Promise.all(writes);
      await saving;
      // The last batch moves no position (the run's keys are deleted next), unless it has failures to unmark.
      if (waiting.size === 0 && failedKeys.length === 0) break;
      // Never past a member held for its group: a restarted writer reads it again.
      let at = pos;
      const held = groups.heldTasks();
      for (const [task, from] of heldFrom) {
        if (!held.has(task)) heldFrom.delete(task);
        else if (streamIdBefore(from, at)) at = from;
      }
      failedKeys.push(...lostKeys);
      lostKeys = [];
      saving = retrying('saving the writer position', async () => {
        const m = redis.multi().set(runKey(run, 'pos'), at).xtrim(resultsKey, 'MINID', at);
        // A failed (task, repeat) may be enqueued again by the next run.
        if (failedKeys.length) m.srem(runKey(run, 'enqueued'), ...failedKeys);
        await m.exec();
      });
      // Awaited before the next save and at the end; a failure surfaces there.
      saving.catch(() => undefined);
    }
    await saving;
    await groups.drain();
    // Earlier failures of members of groups scored then stay recorded (those rollouts are not run again).
    for (const rec of resume.previous.values()) if (scoredTasks.tasks.has(rec._ng_task_index)) await sink.carryOver(rec);
    if (duplicates) log(`Dropped ${duplicates} repeated record(s) (jobs redone after a lease ran out, enqueued again after Redis lost them, or resent after a reconnect).`);
    // Stopped: the run's jobs stay in the queue and what the workers finish waits for the rerun.
    if (waiting.size > 0 && signal?.aborted) interrupted = true;
    else await retrying('clearing the finished run', () => redis.del(...runKeys));
  } finally {
    groups.stop();
    if (timer) clearInterval(timer);
    await sink.close();
    redis.disconnect();
    reader.disconnect();
  }

  const summary = finishCollection(paths, sink, metrics, { skipped, total, started }, tracker.byLabel());
  opts.onProgress?.(progress());
  if (interrupted) {
    summary.interrupted = true;
    summary.pending = waiting.size;
  }
  return summary;
}
