/**
 * ng-collect-rollouts with `+queue_url`: the collector enqueues every (task, repeat) still to do
 * and is the one writer of the output: it reads what workers finished from the run's results
 * stream and writes each (task, repeat) exactly once (results to the output, failures to
 * `<stem>_failures.jsonl`), with the same resume, metrics and progress as a local collection.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Redis } from 'ioredis';
import { QueueError, UsageError } from '../../errors.js';
import { collectionPaths, finishCollection, type CollectSummary, type Progress } from '../collect.js';
import { checkCollectPaths } from '../files.js';
import { countLines, readJobs, shardSize } from '../input.js';
import { MetricsAccumulator } from '../metrics.js';
import { fingerprintOf, prepareResume, rolloutKey } from '../resume.js';
import { RolloutSink, type AttemptRecord } from '../sink.js';
import { FAILURE_LABELS, FailureTracker, type FailureClass } from '../failures.js';
import { connect, decodeResults, enqueue, ensureGroup, runKey, type QueueJob } from './queue.js';

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
  /** Give up when Redis stays unreachable this long (default 120 s). */
  redisBudgetMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

/** Runs `fn` until it succeeds, retrying while Redis is unreachable, within a time budget. */
async function withRedis<T>(what: string, budgetMs: number, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw new QueueError(`Redis: ${what} kept failing for ${Math.round(budgetMs / 1000)} s (${(err as Error).message}). Check that redis-server runs and queue_url is right; rerun the same command to resume.`);
      await sleep(Math.min(100 * attempt, 1000));
    }
  }
}

export async function collectViaQueue(opts: QueueCollectOptions): Promise<CollectSummary> {
  const log = opts.log ?? (() => undefined);
  if (!existsSync(opts.inputPath)) throw new UsageError(`Input file not found: ${opts.inputPath}. Give +input_jsonl_fpath=<path to a JSONL file of rows>.`);
  const queue = opts.queue ?? 'rollouts';
  const budget = opts.redisBudgetMs ?? 120_000;
  const numRepeats = opts.numRepeats && opts.numRepeats > 0 ? opts.numRepeats : 1;
  const limit = opts.limit && opts.limit > 0 ? opts.limit : null;
  const paths = collectionPaths(opts.outputPath);
  // The same file checks as a local collection (input and output never one file, …).
  checkCollectPaths(opts.inputPath, paths);
  mkdirSync(dirname(opts.outputPath) || '.', { recursive: true });
  const metrics = new MetricsAccumulator(numRepeats > 1);
  /** Failures of this run by reason class, as a local collection counts them. */
  const tracker = new FailureTracker();
  const fingerprint = await fingerprintOf(opts.inputPath, limit, numRepeats, opts.agentName ?? null, opts.overrides ?? {});
  // The run: this input with these settings, written to this output (two collections of one input to two files are two runs).
  const run = createHash('sha256')
    .update(JSON.stringify([fingerprint.input_sha256, limit, numRepeats, opts.agentName ?? null, opts.overrides ?? {}, opts.outputPath]))
    .digest('hex')
    .slice(0, 16);
  // Connected, and the consumer group made, while the output is read for resume and the input
  // counted: the first jobs go out without waiting for the connection handshakes after that.
  const redis: Redis = await connect(opts.queueUrl, `ng-collector-${run}`);
  const reader: Redis = await connect(opts.queueUrl, `ng-collector-${run}-read`);
  // One try now; when it failed, it is tried again within the time budget before the first job is enqueued.
  const grouped = ensureGroup(redis, queue).then(
    () => true,
    () => false,
  );
  let resume: Awaited<ReturnType<typeof prepareResume>>;
  let total: number;
  try {
    resume = await prepareResume(paths, fingerprint, opts.restart === true, metrics, log);
    total = shardSize(await countLines(opts.inputPath, limit), opts.shard) * numRepeats;
  } catch (err) {
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

  const failure = (key: string, t: number, r: number, line: number, agent: string | null, cls: FailureClass, attempt: Omit<AttemptRecord, 'attempt'>) => {
    const history = [...(resume.history.get(key) ?? [])];
    history.push({ attempt: history.length + 1, ...attempt });
    return sink.failure({ _ng_task_index: t, _ng_rollout_index: r, line, agent, attempts: history.length, reason: attempt.reason, status: attempt.status, reason_class: cls, history });
  };

  try {
    if (opts.restart) await withRedis('clearing the run', budget, () => redis.del(runKey(run, 'enqueued'), runKey(run, 'results'), runKey(run, 'pos')));
    if (!(await grouped)) await withRedis('creating the consumer group', budget, () => ensureGroup(redis, queue));
    // 1. Enqueue what is still to do (in batches; a key enqueued by an earlier collector is not added
    // again). A few batches are in flight at once, so the workers' supply does not wait for a round
    // trip (and a sync) per batch; each batch is one step on the server, and sending one again adds nothing.
    let batch: QueueJob[] = [];
    let added = 0;
    const sending = new Set<Promise<void>>();
    const flush = async () => {
      const jobs = batch;
      batch = [];
      if (jobs.length === 0) return;
      const p: Promise<void> = withRedis('enqueuing jobs', budget, () => enqueue(redis, queue, run, jobs)).then((n) => {
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
      isDone: (t, r) => resume.done.has(rolloutKey(t, r)),
      onSkip: (n) => (skipped += n),
      stopped: () => false,
      shard: opts.shard,
    })) {
      const key = rolloutKey(job.taskIndex, job.rolloutIndex);
      if (job.kind === 'bad') {
        tracker.failure('bad_row', job.reason);
        await failure(key, job.taskIndex, job.rolloutIndex, job.line, null, 'bad_row', { started_at: new Date().toISOString(), reason: job.reason, status: null, delivered: 'no', http_attempts: 0 });
        continue;
      }
      waiting.add(job.taskIndex, job.rolloutIndex);
      batch.push({ key, run, taskIndex: job.taskIndex, rolloutIndex: job.rolloutIndex, line: job.line, agent: job.agent, body: job.body });
      if (batch.length >= 500) await flush();
    }
    await flush();
    await Promise.all(sending);
    log(`Queue ${queue}: ${added} job(s) enqueued for run ${run}${waiting.size > added ? `, ${waiting.size - added} already there from an earlier start` : ''}; waiting for workers (ng-collect-worker +queue_url=…).`);

    // 2. The one writer: read finished records from the saved position until every key is in.
    const resultsKey = runKey(run, 'results');
    let pos = (await withRedis('reading the writer position', budget, () => redis.get(runKey(run, 'pos')))) ?? '0-0';
    /** The position saved after the previous batch (its sync overlaps the next read). */
    let saving: Promise<unknown> = Promise.resolve();
    let unreadable = 0;
    while (waiting.size > 0) {
      const read = (await withRedis('reading results', budget, () => reader.xread('COUNT', 1000, 'BLOCK', 1000, 'STREAMS', resultsKey, pos))) as [string, [string, string[]][]][] | null;
      const entries = read?.[0]?.[1] ?? [];
      if (entries.length === 0) continue;
      /** Failed keys of this batch: the next run may enqueue them again. */
      const failedKeys: string[] = [];
      const writes: Promise<void>[] = [];
      /** The output lines of this batch, written at once. */
      let out = '';
      let outCount = 0;
      for (const [id, fields] of entries) {
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
          if (rec.kind === 'result') {
            if (split !== null) kept += `${split[lineNo]}\n`;
            outCount++;
            metrics.add(rec.metrics, t, rec.agent);
            if (typeof rec.ms === 'number') metrics.addLatency(rec.ms);
          } else {
            failedKeys.push(rec.key);
            const cls = (rec.reason_class && Object.hasOwn(FAILURE_LABELS, rec.reason_class) ? rec.reason_class : 'other') as FailureClass;
            const reason = `${rec.reason} (worker ${entry.worker})`;
            tracker.failure(cls, reason);
            writes.push(failure(rec.key, t, r, rec.line, rec.agent, cls, { started_at: rec.started_at, reason, status: rec.status, delivered: rec.delivered, http_attempts: rec.http_attempts }));
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
      const at = pos;
      saving = withRedis('saving the writer position', budget, async () => {
        const m = redis.multi().set(runKey(run, 'pos'), at).xtrim(resultsKey, 'MINID', at);
        // A failed (task, repeat) may be enqueued again by the next run.
        if (failedKeys.length) m.srem(runKey(run, 'enqueued'), ...failedKeys);
        await m.exec();
      });
      // Awaited before the next save and at the end; a failure surfaces there.
      saving.catch(() => undefined);
    }
    await saving;
    if (duplicates) log(`Dropped ${duplicates} repeated record(s) (jobs redone after a lease ran out, or resent after a reconnect).`);
    await withRedis('clearing the finished run', budget, () => redis.del(runKey(run, 'enqueued'), runKey(run, 'results'), runKey(run, 'pos')));
  } finally {
    if (timer) clearInterval(timer);
    await sink.close();
    redis.disconnect();
    reader.disconnect();
  }

  const summary = finishCollection(paths, sink, metrics, { skipped, total, started }, tracker.byLabel());
  opts.onProgress?.(progress());
  return summary;
}
