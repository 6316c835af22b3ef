/**
 * Where the collector's results go: the output JSONL (one verify answer per line, tagged with
 * its task and rollout index and agent), `<stem>_failures.jsonl` (one record per failed rollout,
 * with its attempt history) and `<stem>_metrics.json`. A failure's reasons are written with URL
 * credentials masked by the one secret rule (secret-rule.ts), whoever built them.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { extname } from 'node:path';
import { redactUrlCredentials } from '../config/redact.js';
import { CollectFileError, type NgError } from '../errors.js';
import { writeFileAtomic } from '../files/atomic.js';
import { withJsonFields } from '../data/jsonl.js';
import { fileProblem } from './files.js';

export function sidecarPath(outputPath: string, suffix: string): string {
  const ext = extname(outputPath);
  const stem = ext ? outputPath.slice(0, -ext.length) : outputPath;
  return `${stem}_${suffix}`;
}

/**
 * One attempt of a rollout. `delivered`: `no` when the agent provably never got the rollout
 * (connection refused, 429/503 until the budget ran out), `yes` when it answered, `maybe` when
 * the connection dropped or timed out after the rollout was sent (it may have run).
 */
export interface AttemptRecord {
  attempt: number;
  /** ISO time the attempt started. */
  started_at: string;
  reason: string;
  status: number | null;
  delivered: 'no' | 'yes' | 'maybe';
  /** HTTP requests this attempt made (more than 1 only when the earlier ones provably did not arrive). */
  http_attempts: number;
}

export interface FailureRecord {
  _ng_task_index: number;
  _ng_rollout_index: number;
  line: number;
  agent: string | null;
  /** Attempts so far, this run's included. */
  attempts: number;
  reason: string;
  status: number | null;
  /** The reason class (failures.ts), e.g. `model_unreachable`. */
  reason_class?: string;
  history: AttemptRecord[];
  /**
   * A judge failure (`reason_class: judge_failed`): the /verify request the agent sent (the row and
   * its response), so `ng-reverify +judge_failed_only=true` can score it without running the model again.
   */
  verify_request?: Record<string, unknown>;
}

/** The record with the credentials of any URL in its reasons masked. */
function maskedFailure(rec: FailureRecord): FailureRecord {
  return {
    ...rec,
    reason: redactUrlCredentials(rec.reason),
    history: rec.history.map((h) => (typeof h.reason === 'string' ? { ...h, reason: redactUrlCredentials(h.reason) } : h)),
  };
}

/**
 * The output line for one result: the agent's JSON text with the tags added before its closing
 * brace, so the result's own bytes are written as they came. Falls back to serializing the
 * parsed object when the text cannot take a splice safely (a tag already present, a line break).
 */
export function taggedLine(text: string, result: Record<string, unknown>, taskIndex: number, rolloutIndex: number, agent: string): string {
  return `${withJsonFields(text, result, { _ng_task_index: taskIndex, _ng_rollout_index: rolloutIndex, _ng_agent: agent })}\n`;
}

/**
 * An append-only JSONL file. A failed open or write (permissions, a full disk) is kept and turned
 * into one CollectFileError naming the file; it never escapes as an unhandled stream error.
 */
class AppendFile {
  private readonly stream: WriteStream;
  error: NgError | null = null;

  constructor(
    readonly path: string,
    what: string,
  ) {
    this.stream = createWriteStream(path, { flags: 'a' });
    this.stream.on('error', (err) => {
      this.error ??= new CollectFileError(`${fileProblem(`write the ${what}`, path, err)}. What was written before stays; run the same command again to resume.`);
    });
  }

  write(text: string): Promise<void> {
    if (this.error) return Promise.reject(this.error);
    return new Promise<void>((resolve, reject) =>
      this.stream.write(text, (err) => {
        if (!err) resolve();
        else reject(this.error ?? new CollectFileError(fileProblem('write', this.path, err)));
      }),
    );
  }

  close(): Promise<void> {
    if (this.error || this.stream.destroyed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.stream.once('error', () => resolve());
      this.stream.end(() => resolve());
    });
  }
}

export class RolloutSink {
  private readonly out: AppendFile;
  private failuresOut: AppendFile | null = null;
  written = 0;
  failed = 0;

  constructor(
    readonly outputPath: string,
    readonly failuresPath: string,
  ) {
    this.out = new AppendFile(outputPath, 'output');
  }

  /** The first file error met, if any (the run then stops). */
  get error(): NgError | null {
    return this.out.error ?? this.failuresOut?.error ?? null;
  }

  /** Appends one output line (already ending in a newline). */
  async result(line: string): Promise<void> {
    await this.out.write(line);
    this.written++;
  }

  /** Appends `count` output lines given as one text (each line ending in a newline) in one write. */
  async results(lines: string, count: number): Promise<void> {
    if (count === 0) return;
    await this.out.write(lines);
    this.written += count;
  }

  async failure(rec: FailureRecord): Promise<void> {
    this.failuresOut ??= new AppendFile(this.failuresPath, 'failures file');
    this.failed++;
    await this.failuresOut.write(`${JSON.stringify(maskedFailure(rec))}\n`);
  }

  /** Writes an earlier run's record of a rollout this run did not attempt (not counted as a failure). */
  async carryOver(rec: FailureRecord): Promise<void> {
    this.failuresOut ??= new AppendFile(this.failuresPath, 'failures file');
    await this.failuresOut.write(`${JSON.stringify(maskedFailure(rec))}\n`);
  }

  async close(): Promise<void> {
    await this.out.close();
    if (this.failuresOut) await this.failuresOut.close();
  }
}

export function writeMetrics(path: string, summary: Record<string, unknown>): void {
  try {
    writeFileAtomic(path, `${JSON.stringify(summary, null, 2)}\n`);
  } catch (err) {
    throw new CollectFileError(`${fileProblem('write the metrics file', path, (err as Error).cause ?? err)}.`);
  }
}
