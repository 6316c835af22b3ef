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
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { BadResultError, NgError, ServerResponseError, ServerUnreachableError, UsageError, describeError } from '../errors.js';
import { requestFailure, type ServerClient } from '../client/client.js';
import { NOT_PROCESSED_STATUSES } from '../client/retry.js';
import { countLines, readJobs, type BadRowJob, type RolloutJob } from './input.js';
import { MetricsAccumulator } from './metrics.js';
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
  /** Called about every second with progress. */
  onProgress?: (p: Progress) => void;
  /** Informational messages. */
  log?: (msg: string) => void;
}

export interface Progress {
  done: number;
  failed: number;
  skipped: number;
  total: number;
  inFlight: number;
  elapsedS: number;
  rate: number;
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
}

/** How far a failed /run got: an answer from the agent, or a transport failure before or after sending. */
function delivery(err: unknown): AttemptRecord['delivered'] {
  if (err instanceof ServerResponseError) return NOT_PROCESSED_STATUSES.has(err.status) ? 'no' : 'yes';
  if (err instanceof NgError && (err.code === 'NG_ERR_BAD_RESULT' || err.code === 'NG_ERR_BAD_JSON')) return 'yes';
  const f = requestFailure(err);
  if (f) return f.sent ? 'maybe' : 'no';
  return 'maybe';
}

export async function collectRollouts(opts: CollectOptions): Promise<CollectSummary> {
  const log = opts.log ?? (() => undefined);
  if (!existsSync(opts.inputPath)) {
    throw new UsageError(`Input file not found: ${opts.inputPath}. Give +input_jsonl_fpath=<path to a JSONL file of rows>.`);
  }
  const numRepeats = opts.numRepeats && opts.numRepeats > 0 ? opts.numRepeats : 1;
  const limit = opts.limit && opts.limit > 0 ? opts.limit : null;
  const paths = {
    outputPath: opts.outputPath,
    failuresPath: sidecarPath(opts.outputPath, 'failures.jsonl'),
    metricsPath: sidecarPath(opts.outputPath, 'metrics.json'),
    statePath: sidecarPath(opts.outputPath, 'state.json'),
  };
  mkdirSync(dirname(opts.outputPath) || '.', { recursive: true });

  const metrics = new MetricsAccumulator(numRepeats > 1);
  const fingerprint = await fingerprintOf(opts.inputPath, limit, numRepeats, opts.agentName ?? null, opts.overrides ?? {});
  const resume = await prepareResume(paths, fingerprint, opts.restart === true, metrics, log);
  const total = (await countLines(opts.inputPath, limit)) * numRepeats;
  const sink = new RolloutSink(paths.outputPath, paths.failuresPath);

  let skipped = 0;
  let inFlight = 0;
  let abortedBecause: string | undefined;
  const started = Date.now();
  const progress = (): Progress => {
    const elapsedS = (Date.now() - started) / 1000;
    return { done: sink.written, failed: sink.failed, skipped, total, inFlight, elapsedS, rate: elapsedS > 0 ? sink.written / elapsedS : 0 };
  };
  const timer = opts.onProgress ? setInterval(() => opts.onProgress!(progress()), 1000) : null;
  const runRetry = opts.maxAttempts && opts.maxAttempts > 0 ? { maxAttempts: opts.maxAttempts } : undefined;

  const fail = (job: RolloutJob | BadRowJob, agent: string | null, attempt: Omit<AttemptRecord, 'attempt'>) => {
    const history = [...(resume.history.get(rolloutKey(job.taskIndex, job.rolloutIndex)) ?? [])];
    history.push({ attempt: history.length + 1, ...attempt });
    return sink.failure({
      _ng_task_index: job.taskIndex,
      _ng_rollout_index: job.rolloutIndex,
      line: job.line,
      agent,
      attempts: history.length,
      reason: attempt.reason,
      status: attempt.status,
      history,
    });
  };

  const runOne = async (job: RolloutJob) => {
    const startedAt = new Date().toISOString();
    let httpAttempts = 1;
    try {
      const res = await opts.client.post(job.agent, '/run', job.body, runRetry ? { retry: runRetry } : {});
      httpAttempts = res.attempts;
      if (!res.ok) throw new ServerResponseError(res.url, res.status, res.text);
      const result = res.json<unknown>();
      if (result === null || typeof result !== 'object' || Array.isArray(result)) {
        throw new BadResultError(job.agent, JSON.stringify(result).slice(0, 200));
      }
      const row = result as Record<string, unknown>;
      await sink.result(taggedLine(res.text, row, job.taskIndex, job.rolloutIndex, job.agent));
      metrics.add(row, job.taskIndex, job.agent);
    } catch (err) {
      const f = requestFailure(err);
      if (f) httpAttempts = f.attempts;
      const delivered = delivery(err);
      // Nothing reaches the agent any more: stop taking new rollouts (a rerun resumes).
      if (err instanceof ServerUnreachableError && delivered === 'no' && !abortedBecause) {
        abortedBecause = `agent \`${job.agent}\` is unreachable (${err.message})`;
      }
      await fail(job, job.agent, {
        started_at: startedAt,
        reason: describeError(err),
        status: err instanceof ServerResponseError ? err.status : null,
        delivered,
        http_attempts: httpAttempts,
      });
    }
  };

  try {
    const jobs = readJobs({
      inputPath: opts.inputPath,
      limit,
      numRepeats,
      agentName: opts.agentName,
      overrides: opts.overrides,
      isDone: (t, r) => resume.done.has(rolloutKey(t, r)),
      onSkip: (n) => (skipped += n),
      stopped: () => abortedBecause !== undefined,
    });
    await runBounded(
      jobs,
      async (job) => {
        if (job.kind === 'bad') {
          await fail(job, null, { started_at: new Date().toISOString(), reason: job.reason, status: null, delivered: 'no', http_attempts: 0 });
          return;
        }
        inFlight++;
        try {
          await runOne(job);
        } finally {
          inFlight--;
        }
      },
      { concurrency: opts.concurrency, stopped: () => abortedBecause !== undefined },
    );
  } finally {
    if (timer) clearInterval(timer);
    await sink.close();
  }
  const summary = metrics.summary();
  summary.failed = sink.failed;
  writeMetrics(paths.metricsPath, summary);
  opts.onProgress?.(progress());
  return {
    written: sink.written,
    failed: sink.failed,
    skipped,
    total,
    elapsedS: (Date.now() - started) / 1000,
    metrics: summary,
    outputPath: opts.outputPath,
    failuresPath: paths.failuresPath,
    metricsPath: paths.metricsPath,
    abortedBecause,
  };
}
