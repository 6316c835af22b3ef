/**
 * The rollout collection engine behind ng-collect-rollouts.
 *
 * - Streams the input: rows are read as slots free up, so memory follows the concurrency,
 *   not the file size; each result is appended to the output as soon as it completes, tagged
 *   with its task index (input line) and rollout index (repeat).
 * - Nothing is lost or faked: a failed rollout (HTTP error, timeout, invalid input line) is
 *   written to `<stem>_failures.jsonl` with its reason and attempt count, never to the output
 *   with reward 0. The batch goes on; the summary and exit code say how many failed.
 * - Resumable: running the same command again skips the (task, rollout) pairs already in the
 *   output and re-runs the failed ones. A changed input file is detected and refused unless the
 *   caller asks to start over.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync, openSync, readSync, closeSync } from 'node:fs';
import { dirname, basename, extname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { NgError, ServerResponseError, ServerUnreachableError, TimeoutError, describeError } from '../errors.js';
import type { ServerClient } from '../client/client.js';
import { MetricsAccumulator } from './metrics.js';

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
  /** Attempts per rollout within one run (infrastructure failures only). */
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

export function sidecarPath(outputPath: string, suffix: string): string {
  const ext = extname(outputPath);
  const stem = ext ? outputPath.slice(0, -ext.length) : outputPath;
  return `${stem}_${suffix}`;
}

interface Fingerprint {
  input: string;
  input_sha256: string;
  input_bytes: number;
  limit: number | null;
  num_repeats: number;
  agent_name: string | null;
  overrides: Record<string, unknown>;
}

async function hashFile(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function countLines(path: string, limit: number | null): Promise<number> {
  let n = 0;
  let last = 10;
  for await (const chunk of createReadStream(path)) {
    const buf = chunk as Buffer;
    for (let i = 0; i < buf.length; i++) if (buf[i] === 10) n++;
    if (buf.length) last = buf[buf.length - 1]!;
    if (limit && n >= limit) return limit;
  }
  if (last !== 10) n++;
  return limit ? Math.min(n, limit) : n;
}

/** Drops a partial last line left by an interrupted write, so appends start on a clean line. */
function repairTail(path: string): void {
  const size = statSync(path).size;
  if (size === 0) return;
  const fd = openSync(path, 'r');
  try {
    const window = Math.min(size, 1 << 20);
    let pos = size;
    const buf = Buffer.alloc(window);
    // Find the last newline.
    while (pos > 0) {
      const start = Math.max(0, pos - window);
      const len = pos - start;
      readSync(fd, buf, 0, len, start);
      const idx = buf.subarray(0, len).lastIndexOf(10);
      if (idx >= 0) {
        const cut = start + idx + 1;
        if (cut !== size) truncateSync(path, cut);
        return;
      }
      pos = start;
    }
    truncateSync(path, 0);
  } finally {
    closeSync(fd);
  }
}

class Semaphore {
  private waiters: (() => void)[] = [];
  constructor(private free: number) {}
  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((r) => this.waiters.push(r));
  }
  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.free++;
  }
}

function isInfrastructureFailure(err: unknown): boolean {
  if (err instanceof ServerUnreachableError || err instanceof TimeoutError) return true;
  if (err instanceof ServerResponseError) return err.status >= 500 || err.status === 408 || err.status === 429;
  return false;
}

export async function collectRollouts(opts: CollectOptions): Promise<CollectSummary> {
  const log = opts.log ?? (() => undefined);
  if (!existsSync(opts.inputPath)) {
    throw new NgError('NG_ERR_USAGE', `Input file not found: ${opts.inputPath}. Give +input_jsonl_fpath=<path to a JSONL file of rows>.`);
  }
  const numRepeats = opts.numRepeats && opts.numRepeats > 0 ? opts.numRepeats : 1;
  const limit = opts.limit && opts.limit > 0 ? opts.limit : null;
  const maxAttempts = opts.maxAttempts ?? 3;
  const failuresPath = sidecarPath(opts.outputPath, 'failures.jsonl');
  const metricsPath = sidecarPath(opts.outputPath, 'metrics.json');
  const statePath = sidecarPath(opts.outputPath, 'state.json');
  mkdirSync(dirname(opts.outputPath) || '.', { recursive: true });

  // Resume bookkeeping.
  const fingerprint: Fingerprint = {
    input: opts.inputPath,
    input_sha256: await hashFile(opts.inputPath),
    input_bytes: statSync(opts.inputPath).size,
    limit,
    num_repeats: numRepeats,
    agent_name: opts.agentName ?? null,
    overrides: opts.overrides ?? {},
  };
  const metrics = new MetricsAccumulator(numRepeats > 1);
  const done = new Set<string>();
  const key = (t: number, r: number) => `${t}:${r}`;
  if (opts.restart) {
    for (const p of [opts.outputPath, failuresPath, metricsPath, statePath]) rmSync(p, { force: true });
  } else if (existsSync(opts.outputPath) && statSync(opts.outputPath).size > 0) {
    const previous = existsSync(statePath) ? (JSON.parse(readFileSync(statePath, 'utf8')) as Fingerprint) : null;
    const same =
      previous &&
      previous.input_sha256 === fingerprint.input_sha256 &&
      previous.limit === fingerprint.limit &&
      previous.num_repeats === fingerprint.num_repeats &&
      previous.agent_name === fingerprint.agent_name &&
      JSON.stringify(previous.overrides) === JSON.stringify(fingerprint.overrides);
    if (!same) {
      const why = !previous
        ? `it has no ${basename(statePath)} recording which input produced it`
        : previous.input_sha256 !== fingerprint.input_sha256
          ? `the input file changed since it was written`
          : 'the limit, num_repeats, agent_name or responses_create_params overrides differ from the earlier run';
      throw new NgError(
        'NG_ERR_RESUME_MISMATCH',
        `The output file ${opts.outputPath} already holds rollouts, but ${why}. ` +
          `Resuming would mix rollouts of different runs. Rerun with +restart=true to delete it and start over, or choose another +output_jsonl_fpath.`,
      );
    }
    repairTail(opts.outputPath);
    const rl = createInterface({ input: createReadStream(opts.outputPath), crlfDelay: Infinity });
    for await (const line of rl) {
      if (!line.trim()) continue;
      const row = JSON.parse(line) as Record<string, unknown>;
      const t = row._ng_task_index;
      const r = row._ng_rollout_index;
      if (typeof t === 'number' && typeof r === 'number') {
        done.add(key(t, r));
        metrics.add(row, t, typeof row._ng_agent === 'string' ? row._ng_agent : undefined);
      }
    }
    log(`Resuming: ${done.size} rollout(s) already in ${opts.outputPath} are skipped.`);
  }
  writeFileSync(statePath, `${JSON.stringify(fingerprint, null, 2)}\n`);
  // Failures of earlier runs are retried now; the file records this run's failures.
  rmSync(failuresPath, { force: true });

  const totalLines = await countLines(opts.inputPath, limit);
  const total = totalLines * numRepeats;
  const out = createWriteStream(opts.outputPath, { flags: 'a' });
  let failuresOut: ReturnType<typeof createWriteStream> | null = null;
  const writeLine = (stream: ReturnType<typeof createWriteStream>, obj: unknown) =>
    new Promise<void>((res, rej) => stream.write(`${JSON.stringify(obj)}\n`, (err) => (err ? rej(err) : res())));
  const recordFailure = async (rec: Record<string, unknown>) => {
    failuresOut ??= createWriteStream(failuresPath, { flags: 'a' });
    failed++;
    await writeLine(failuresOut, rec);
  };

  let written = 0;
  let failed = 0;
  let skipped = 0;
  let inFlight = 0;
  let abortedBecause: string | undefined;
  const started = Date.now();
  const progress = (): Progress => {
    const elapsedS = (Date.now() - started) / 1000;
    return { done: written, failed, skipped, total, inFlight, elapsedS, rate: elapsedS > 0 ? written / elapsedS : 0 };
  };
  const timer = opts.onProgress ? setInterval(() => opts.onProgress!(progress()), 1000) : null;

  const sem = new Semaphore(Math.max(1, opts.concurrency));
  const running = new Set<Promise<void>>();

  const runOne = async (row: Record<string, unknown>, agent: string, taskIndex: number, rolloutIndex: number, lineNo: number) => {
    let attempt = 0;
    for (;;) {
      attempt++;
      try {
        const res = await opts.client.post(agent, '/run', row);
        if (!res.ok) throw new ServerResponseError(res.url, res.status, res.text);
        const result = res.json<Record<string, unknown>>();
        if (result === null || typeof result !== 'object' || Array.isArray(result)) {
          throw new NgError('NG_ERR_BAD_RESULT', `agent \`${agent}\` answered /run with ${JSON.stringify(result).slice(0, 200)}, not an object`);
        }
        const tagged = { ...result, _ng_task_index: taskIndex, _ng_rollout_index: rolloutIndex, _ng_agent: agent };
        await writeLine(out, tagged);
        written++;
        metrics.add(tagged, taskIndex, agent);
        return;
      } catch (err) {
        const infra = isInfrastructureFailure(err);
        if (infra && attempt < maxAttempts && !abortedBecause) continue;
        if (err instanceof ServerUnreachableError && !abortedBecause) {
          abortedBecause = `agent \`${agent}\` is unreachable (${err.message})`;
        }
        await recordFailure({
          _ng_task_index: taskIndex,
          _ng_rollout_index: rolloutIndex,
          line: lineNo,
          agent,
          attempts: attempt,
          reason: describeError(err),
          status: err instanceof ServerResponseError ? err.status : null,
        });
        return;
      }
    }
  };

  try {
    const rl = createInterface({ input: createReadStream(opts.inputPath), crlfDelay: Infinity });
    let taskIndex = -1;
    for await (const line of rl) {
      taskIndex++;
      if (limit !== null && taskIndex >= limit) break;
      if (abortedBecause) break;
      const lineNo = taskIndex + 1;
      const pending: number[] = [];
      for (let r = 0; r < numRepeats; r++) if (!done.has(key(taskIndex, r))) pending.push(r);
      skipped += numRepeats - pending.length;
      if (pending.length === 0) continue;
      let row: Record<string, unknown>;
      try {
        if (!line.trim()) throw new Error('the line is empty');
        const parsed: unknown = JSON.parse(line);
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the line is not a JSON object');
        row = parsed as Record<string, unknown>;
        if (!row.responses_create_params || typeof row.responses_create_params !== 'object') {
          throw new Error('the row has no `responses_create_params` object');
        }
      } catch (err) {
        for (const r of pending) {
          await recordFailure({ _ng_task_index: taskIndex, _ng_rollout_index: r, line: lineNo, agent: null, attempts: 1, reason: `line ${lineNo} of ${opts.inputPath}: ${(err as Error).message}`, status: null });
        }
        continue;
      }
      const ref = row.agent_ref as { name?: unknown } | undefined;
      const agent = typeof ref?.name === 'string' ? ref.name : opts.agentName;
      if (!agent) {
        for (const r of pending) {
          await recordFailure({ _ng_task_index: taskIndex, _ng_rollout_index: r, line: lineNo, agent: null, attempts: 1, reason: `line ${lineNo}: no agent for this row: give +agent_name=<agent instance> or an agent_ref in the row`, status: null });
        }
        continue;
      }
      if (opts.overrides && Object.keys(opts.overrides).length > 0) {
        row = { ...row, responses_create_params: { ...(row.responses_create_params as object), ...structuredClone(opts.overrides) } };
      }
      for (const r of pending) {
        await sem.acquire();
        if (abortedBecause) {
          sem.release();
          break;
        }
        inFlight++;
        const p = runOne(row, agent, taskIndex, r, lineNo).finally(() => {
          inFlight--;
          sem.release();
          running.delete(p);
        });
        running.add(p);
      }
    }
    await Promise.all(running);
  } finally {
    if (timer) clearInterval(timer);
    await new Promise<void>((r) => out.end(r));
    if (failuresOut) await new Promise<void>((r) => failuresOut!.end(r));
  }
  const summary = metrics.summary();
  summary.failed = failed;
  writeFileSync(metricsPath, `${JSON.stringify(summary, null, 2)}\n`);
  opts.onProgress?.(progress());
  return {
    written,
    failed,
    skipped,
    total,
    elapsedS: (Date.now() - started) / 1000,
    metrics: summary,
    outputPath: opts.outputPath,
    failuresPath,
    metricsPath,
    abortedBecause,
  };
}
