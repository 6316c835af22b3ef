/**
 * The rollout collection engine behind ng-collect-rollouts: input.ts streams the jobs,
 * scheduler.ts keeps a bounded number in flight, sink.ts writes results, failures and metrics,
 * resume.ts decides what an earlier run already did.
 *
 * - Each result is appended as soon as it completes, tagged with its task index (input line)
 *   and rollout index (repeat).
 * - Nothing is lost or faked: a failed rollout is written to `<stem>_failures.jsonl` with its
 *   reason and attempt history, never to the output with reward 0. The batch goes on; the
 *   summary and exit code say how many failed.
 * - A rollout is not idempotent (it spends generations and may have tool side effects), so
 *   `/run` is sent once: it is resent within a run only when it provably never reached the
 *   agent (connection refused, 429/503). One that failed after it was sent is recorded, and the
 *   next run of the same command runs it again as a new attempt.
 * - A changed input file is detected on resume and refused unless the caller asks to start over.
 * - Before anything is written, the files are checked (files.ts) and, when asked, the servers and
 *   the model backend (preflight.ts). Failures are classified as they happen (failures.ts); after
 *   `maxConsecutiveFailures` failures in a row the run stops and cancels what is in flight.
 */
import { setMaxListeners } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { redactUrlCredentials } from '../config/redact.js';
import { BadResultError, CollectFileError, NgError, ServerResponseError, ServerUnreachableError, describeError } from '../errors.js';
import { requestFailure, type ServerClient } from '../client/client.js';
import { NOT_PROCESSED_STATUSES } from '../client/retry.js';
import { FAILURE_LABELS, FailureTracker, classifyFailure, failedRowError, judgeFailureRequest, type FailureClass } from './failures.js';
import { GroupCollector, ScoredTasks, groupVerifierOf, type GroupOverrides } from './group.js';
import { checkCollectPaths, fileProblem } from './files.js';
import { agentRefNames, countLines, readJobs, shardSize, type BadRowJob, type RolloutJob } from './input.js';
import { MetricsAccumulator } from './metrics.js';
import { preflight, type PreflightOptions } from './preflight.js';
import { fingerprintOf, prepareResume, rolloutKey } from './resume.js';
import { runBounded } from './scheduler.js';
import { RolloutSink, sidecarPath, taggedLine, writeMetrics, type AttemptRecord } from './sink.js';

export { sidecarPath } from './sink.js';

export interface CollectOptions {
  client: ServerClient;
  inputPath: string;
  outputPath: string;
  /** Agent for rows without `agent_ref`. */
  agentName?: string;
  limit?: number | null;
  numRepeats?: number | null;
  /** Rollouts in flight at once. */
  concurrency: number;
  /** Shallow overrides of each row's responses_create_params. */
  overrides?: Record<string, unknown>;
  /** Delete earlier output and start over (needed when the input changed). */
  restart?: boolean;
  /**
   * HTTP attempts per rollout within one run; only attempts that provably did not reach the
   * agent (refused, 429/503) are followed by another. Default: the client's retry policy.
   */
  maxAttempts?: number;
  /** Called about every second (or every `progressIntervalMs`) with progress. */
  onProgress?: (p: Progress) => void;
  progressIntervalMs?: number;
  /** Informational messages. */
  log?: (msg: string) => void;
  /**
   * Check the agents, the servers they use and the model backends before anything is written
   * (see preflight.ts); a failure throws PreflightError.
   */
  preflight?: boolean | PreflightOptions;
  /** Called once the checks passed and the output is ready, just before the first rollout is sent. */
  /** Only the tasks whose index is `index` modulo `count` (+shard=i/N); merge the shards with ng-merge-rollouts. */
  shard?: { index: number; count: number } | null;
  onReady?: (info: { total: number; alreadyDone: number; concurrency: number }) => void;
  /**
   * Stop the run (cancelling the rollouts in flight) after this many failures in a row, not
   * counting bad input rows; 0 never stops. Default {@link DEFAULT_MAX_CONSECUTIVE_FAILURES}.
   */
  maxConsecutiveFailures?: number;
  /** Called for every failed rollout; `first` is true for the first failure of its class. */
  onFailure?: (f: FailureEvent) => void;
  /** Aborting it stops the run: nothing new is sent, rollouts in flight are cancelled (not recorded). */
  signal?: AbortSignal;
  /** Overrides of the group settings of resources servers that score groups (group.ts). */
  group?: GroupOverrides;
}

/**
 * Failures in a row that stop a run. An infrastructure outage fails every rollout in flight within
 * moments, so a run against a dead backend stops after one wave instead of grinding through the
 * whole input; a task that fails now and then never gets near it.
 */
export const DEFAULT_MAX_CONSECUTIVE_FAILURES = 32;

export interface FailureEvent {
  cls: FailureClass;
  /** How the class is shown ("model unreachable", "HTTP 5xx", …). */
  label: string;
  reason: string;
  first: boolean;
  consecutive: number;
  taskIndex: number;
  rolloutIndex: number;
}

export interface Progress {
  done: number;
  failed: number;
  skipped: number;
  total: number;
  inFlight: number;
  elapsedS: number;
  /** Rollouts written per second in this run. */
  rate: number;
  /** Seconds to go at this run's pace (finished rollouts, failures included), or null before the first finishes. */
  etaS: number | null;
  /** Failures of this run by reason class label. */
  failures: Record<string, number>;
  /** Tokens of the rollouts written in this run (from each response's usage). */
  inputTokens: number;
  outputTokens: number;
  tokensPerS: number;
}

export interface CollectSummary {
  written: number;
  failed: number;
  skipped: number;
  total: number;
  elapsedS: number;
  metrics: Record<string, unknown>;
  outputPath: string;
  failuresPath: string;
  metricsPath: string;
  /** Set when the run stopped early (e.g. the agent became unreachable). */
  abortedBecause?: string;
  /** The run was stopped from outside (`signal`). */
  interrupted?: boolean;
  /** Rollouts in flight when the run stopped: cancelled, not recorded, run again by a rerun. */
  cancelled?: number;
  /** Through a queue, stopped: rollouts enqueued without a recorded result (workers may still run them; a rerun writes them). */
  pending?: number;
  /** Failures of this run by reason class label. */
  failuresByReason?: Record<string, number>;
}

/** How far a failed /run got: an answer from the agent, or a transport failure before or after sending. */
export function delivery(err: unknown): AttemptRecord['delivered'] {
  if (err instanceof ServerResponseError) return NOT_PROCESSED_STATUSES.has(err.status) && !err.noResend ? 'no' : 'yes';
  if (err instanceof NgError && (err.code === 'NG_ERR_BAD_RESULT' || err.code === 'NG_ERR_BAD_JSON' || err.code === 'NG_ERR_JUDGE_FAILED')) return 'yes';
  const f = requestFailure(err);
  if (f) return f.sent ? 'maybe' : 'no';
  return 'maybe';
}

/** The files of one collection: its output and the sidecars beside it. */
export function collectionPaths(outputPath: string): { outputPath: string; failuresPath: string; metricsPath: string; statePath: string } {
  return {
    outputPath,
    failuresPath: sidecarPath(outputPath, 'failures.jsonl'),
    metricsPath: sidecarPath(outputPath, 'metrics.json'),
    statePath: sidecarPath(outputPath, 'state.json'),
  };
}

/** The end of a collection, local or through a queue: the metrics file written, and the summary both return. */
export function finishCollection(
  paths: { outputPath: string; failuresPath: string; metricsPath: string },
  sink: RolloutSink,
  metrics: MetricsAccumulator,
  counts: { skipped: number; total: number; started: number },
  /** Failures by reason class, when the collector classified them. */
  failuresByReason?: Record<string, number>,
): CollectSummary {
  const summary = metrics.summary();
  summary.failed = sink.failed;
  if (sink.failed > 0 && failuresByReason) summary.failures_by_reason = failuresByReason;
  writeMetrics(paths.metricsPath, summary);
  return {
    written: sink.written,
    failed: sink.failed,
    skipped: counts.skipped,
    total: counts.total,
    elapsedS: (Date.now() - counts.started) / 1000,
    metrics: summary,
    outputPath: paths.outputPath,
    failuresPath: paths.failuresPath,
    metricsPath: paths.metricsPath,
    failuresByReason,
  };
}

export async function collectRollouts(opts: CollectOptions): Promise<CollectSummary> {
  const log = opts.log ?? (() => undefined);
  const numRepeats = opts.numRepeats && opts.numRepeats > 0 ? opts.numRepeats : 1;
  const limit = opts.limit && opts.limit > 0 ? opts.limit : null;
  const paths = collectionPaths(opts.outputPath);
  // Checks first: nothing is created, deleted or sent before they pass.
  checkCollectPaths(opts.inputPath, paths);
  if (opts.preflight) {
    const agents = await agentRefNames(opts.inputPath, limit);
    if (opts.agentName) agents.add(opts.agentName);
    await preflight(opts.client, [...agents], { log, rows: { path: opts.inputPath, limit, agentName: opts.agentName }, ...(typeof opts.preflight === 'object' ? opts.preflight : {}) });
  }
  if (opts.signal?.aborted) throw new NgError('NG_ERR_USAGE', 'the collection was stopped before it started; nothing was written.');

  const metrics = new MetricsAccumulator(numRepeats > 1);
  const fingerprint = await fingerprintOf(opts.inputPath, limit, numRepeats, opts.agentName ?? null, opts.overrides ?? {});
  const scoredTasks = new ScoredTasks();
  let resume: Awaited<ReturnType<typeof prepareResume>>;
  try {
    mkdirSync(dirname(opts.outputPath) || '.', { recursive: true });
    resume = await prepareResume(paths, fingerprint, opts.restart === true, metrics, log, (row) => scoredTasks.see(row));
  } catch (err) {
    if (err instanceof NgError) throw err;
    throw new CollectFileError(`${fileProblem('prepare the output', opts.outputPath, err)}.`);
  }
  const total = shardSize(await countLines(opts.inputPath, limit), opts.shard) * numRepeats;
  // Tokens of the rows already in the output are in the metrics, not in this run's tokens/s.
  const tokensBefore = { input: metrics.inputTokens, output: metrics.outputTokens };
  const sink = new RolloutSink(paths.outputPath, paths.failuresPath);
  const tracker = new FailureTracker();
  const maxInARow = opts.maxConsecutiveFailures ?? DEFAULT_MAX_CONSECUTIVE_FAILURES;
  const cancel = new AbortController();
  // Every rollout in flight listens to it.
  setMaxListeners(0, cancel.signal);

  let skipped = 0;
  let inFlight = 0;
  let cancelled = 0;
  let failedThisRun = 0;
  let inputTokens = 0;
  let outputTokens = 0;
  let abortedBecause: string | undefined;
  let interrupted = false;
  let fileError: NgError | null = null;
  const stop = (why: string | null) => {
    if (why !== null && !abortedBecause) abortedBecause = why;
    if (!cancel.signal.aborted) cancel.abort(new NgError('NG_ERR_USAGE', why ?? 'the collection was interrupted'));
  };
  const onAbort = () => {
    interrupted = true;
    stop(null);
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const stopped = () => cancel.signal.aborted;

  const started = Date.now();
  const progress = (): Progress => {
    const elapsedS = (Date.now() - started) / 1000;
    const finishedThisRun = sink.written + failedThisRun;
    const remaining = Math.max(0, total - sink.written - sink.failed - skipped);
    return {
      done: sink.written,
      failed: sink.failed,
      skipped,
      total,
      inFlight,
      elapsedS,
      rate: elapsedS > 0 ? sink.written / elapsedS : 0,
      etaS: finishedThisRun > 0 && elapsedS > 0 ? remaining / (finishedThisRun / elapsedS) : remaining === 0 ? 0 : null,
      failures: tracker.byLabel(),
      inputTokens,
      outputTokens,
      tokensPerS: elapsedS > 0 ? (inputTokens + outputTokens) / elapsedS : 0,
    };
  };
  const timer = opts.onProgress ? setInterval(() => opts.onProgress!(progress()), opts.progressIntervalMs ?? 1000) : null;
  const runRetry = opts.maxAttempts && opts.maxAttempts > 0 ? { maxAttempts: opts.maxAttempts } : undefined;

  /** A write that failed ends the run with its one-line error. */
  const guard = async (write: Promise<void>) => {
    try {
      await write;
    } catch (err) {
      fileError ??= err instanceof NgError ? err : new CollectFileError(fileProblem('write', paths.outputPath, err));
      stop(fileError.message);
    }
  };

  const fail = async (job: RolloutJob | BadRowJob, agent: string | null, given: Omit<AttemptRecord, 'attempt'>, err: unknown, failedRow?: Record<string, unknown>) => {
    // The reason is shown on the terminal and recorded: never with a URL's credentials.
    const attempt = { ...given, reason: redactUrlCredentials(given.reason) };
    const key = rolloutKey(job.taskIndex, job.rolloutIndex);
    const history = [...(resume.history.get(key) ?? [])];
    resume.previous.delete(key);
    history.push({ attempt: history.length + 1, ...attempt });
    failedThisRun++;
    const cls = classifyFailure(err);
    const note = tracker.failure(cls, attempt.reason);
    const verifyRequest = judgeFailureRequest(cls, err, failedRow);
    await guard(
      sink.failure({
        _ng_task_index: job.taskIndex,
        _ng_rollout_index: job.rolloutIndex,
        line: job.line,
        agent,
        attempts: history.length,
        reason: attempt.reason,
        status: attempt.status,
        reason_class: cls,
        history,
        ...(verifyRequest ? { verify_request: verifyRequest } : {}),
      }),
    );
    if (agent !== null && groups.grouped(agent)) groups.failed(job.taskIndex, job.rolloutIndex, agent);
    opts.onFailure?.({ cls, label: FAILURE_LABELS[cls], reason: attempt.reason, first: note.first, consecutive: note.consecutive, taskIndex: job.taskIndex, rolloutIndex: job.rolloutIndex });
    if (maxInARow > 0 && note.consecutive >= maxInARow && !abortedBecause) {
      stop(
        `${note.consecutive} rollouts failed in a row (+max_consecutive_failures=${maxInARow}), so the infrastructure looks down; ` +
          `failures so far: ${Object.entries(tracker.byLabel()).map(([l, n]) => `${l} ${n}`).join(', ')}; the last one (${FAILURE_LABELS[cls]}): ${attempt.reason.length > 400 ? `${attempt.reason.slice(0, 400)}…` : attempt.reason}`,
      );
    }
  };

  /** The books of a result written to the output. */
  const written = (row: Record<string, unknown>, taskIndex: number, rolloutIndex: number, agent: string, ms: number | undefined) => {
    resume.previous.delete(rolloutKey(taskIndex, rolloutIndex));
    metrics.add(row, taskIndex, agent, rolloutIndex);
    if (ms !== undefined) metrics.addLatency(ms);
    inputTokens = metrics.inputTokens - tokensBefore.input;
    outputTokens = metrics.outputTokens - tokensBefore.output;
  };

  // Rollouts of agents whose resources server scores groups are held until their group is scored.
  const groups = new GroupCollector({
    client: opts.client,
    numRepeats,
    verifierOf: (agent) => groupVerifierOf(opts.client.globalConfig, agent, opts.group),
    write: async (text, members) => {
      await guard(sink.results(text, members.length));
      if (!fileError) for (const { member: m, row } of members) written(row, m.taskIndex, m.rolloutIndex, m.agent, m.latencyMs);
    },
    lose: (l) =>
      fail({ kind: 'bad', taskIndex: l.taskIndex, rolloutIndex: l.rolloutIndex, line: l.line, reason: '' }, l.agent, { started_at: new Date().toISOString(), reason: describeError(l.err), status: l.err instanceof ServerResponseError ? l.err.status : null, delivered: 'yes', http_attempts: 0 }, l.err),
    signal: cancel.signal,
    log,
  });

  const runOne = async (job: RolloutJob) => {
    const startedAt = new Date().toISOString();
    const t0 = performance.now();
    let httpAttempts = 1;
    const grouped = groups.grouped(job.agent);
    // A member of a group is cancelled when its group stops waiting for it.
    const cut = grouped ? groups.memberSignal(job.taskIndex, job.rolloutIndex, job.agent) : null;
    const signal = cut ? AbortSignal.any([cancel.signal, cut]) : cancel.signal;
    try {
      const res = await opts.client.post(job.agent, '/run', job.body, runRetry ? { retry: runRetry, signal } : { signal });
      httpAttempts = res.attempts;
      if (!res.ok) throw res.error();
      const result = res.json<unknown>();
      if (result === null || typeof result !== 'object' || Array.isArray(result)) {
        throw new BadResultError(job.agent, JSON.stringify(result).slice(0, 200));
      }
      const row = result as Record<string, unknown>;
      const rowFailure = failedRowError(row);
      if (rowFailure) {
        const given = { started_at: startedAt, reason: rowFailure.message, status: res.status, delivered: 'yes' as const, http_attempts: httpAttempts };
        await fail(job, job.agent, given, rowFailure, row);
        return;
      }
      if (grouped) {
        tracker.success();
        await groups.result({ taskIndex: job.taskIndex, rolloutIndex: job.rolloutIndex, agent: job.agent, line: job.line, row, latencyMs: performance.now() - t0 });
        return;
      }
      await sink.result(taggedLine(res.text, row, job.taskIndex, job.rolloutIndex, job.agent));
      tracker.success();
      written(row, job.taskIndex, job.rolloutIndex, job.agent, performance.now() - t0);
    } catch (caught) {
      // Cut off by its group's deadline: recorded with the group's reason.
      const err: unknown = cut?.aborted && !cancel.signal.aborted ? cut.reason : caught;
      if (err instanceof CollectFileError) {
        fileError ??= err;
        stop(err.message);
        return;
      }
      // Stopped while in flight: not a failure of the rollout; a rerun runs it (it is not in the output).
      if (cancel.signal.aborted) {
        cancelled++;
        return;
      }
      const f = requestFailure(err);
      if (f) httpAttempts = f.attempts;
      const delivered = delivery(err);
      // Nothing reaches the agent any more: stop taking new rollouts (a rerun resumes).
      if (err instanceof ServerUnreachableError && delivered === 'no' && !abortedBecause) {
        stop(`agent \`${job.agent}\` is unreachable (${err.message})`);
      }
      await fail(
        job,
        job.agent,
        {
          started_at: startedAt,
          reason: describeError(err),
          status: err instanceof ServerResponseError ? err.status : null,
          delivered,
          http_attempts: httpAttempts,
        },
        err,
      );
    }
  };

  opts.onReady?.({ total, alreadyDone: resume.done.size, concurrency: opts.concurrency });
  try {
    const jobs = readJobs({
      inputPath: opts.inputPath,
      limit,
      numRepeats,
      agentName: opts.agentName,
      overrides: opts.overrides,
      // A task whose group was scored in an earlier run is done, members that failed then included.
      isDone: (t, r) => resume.done.has(rolloutKey(t, r)) || scoredTasks.tasks.has(t),
      onSkip: (n) => (skipped += n),
      stopped,
      shard: opts.shard,
      attemptIndex: (t, r) => resume.history.get(rolloutKey(t, r))?.length ?? 0,
    });
    await runBounded(
      jobs,
      async (job) => {
        if (job.kind === 'bad') {
          await fail(job, null, { started_at: new Date().toISOString(), reason: job.reason, status: null, delivered: 'no', http_attempts: 0 }, null);
          return;
        }
        inFlight++;
        try {
          await runOne(job);
        } finally {
          inFlight--;
        }
      },
      { concurrency: opts.concurrency, stopped },
    );
    await groups.drain();
    // Earlier failures this run did not get to keep their records (and attempt history).
    for (const rec of resume.previous.values()) await guard(sink.carryOver(rec));
  } finally {
    groups.stop();
    if (timer) clearInterval(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    await sink.close();
  }
  if (fileError) throw fileError;
  const summary = finishCollection(paths, sink, metrics, { skipped, total, started }, tracker.byLabel());
  opts.onProgress?.(progress());
  return { ...summary, abortedBecause, interrupted, cancelled };
}
