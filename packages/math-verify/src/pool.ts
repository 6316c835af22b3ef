// Checks in a pool of checker processes with a hard time limit per check. A check that overruns its
// limit has its process killed and replaced, and scores as upstream scores a timeout: (0.0, null).
// Processes rather than worker threads: a fatal V8 error (or a native crash) in a checker must
// not take the server down with it. The pool itself is @nemo-gym/core's WorkerPool.

import { TimeoutError } from '@nemo-gym/core/errors';
import { WorkerPool } from '@nemo-gym/core/workers';
import { verifyAnswerWithLibrary, type LibraryResult } from './verify.js';

export interface MathVerifierOptions {
  /** Number of checker processes (default 2). 0 runs checks inline on the calling thread. */
  size?: number;
  /** Hard limit per check in ms (default 10000, as upstream's library_verifier_timeout_seconds). */
  timeoutMs?: number;
  /** Heap limit of each checker process in MB (default 512); a checker that exceeds it is replaced. */
  maxMemoryMb?: number;
}

export type CheckResult = LibraryResult & { timedOut?: boolean };

const FAILED: LibraryResult = { reward: 0.0, extracted: null };

export class MathVerifier {
  private readonly pool: WorkerPool | null;
  private closed = false;
  readonly timeoutMs: number;
  readonly maxMemoryMb: number;
  /** Checks run on the calling thread (size 0, or the checker module is not built). */
  readonly inline: boolean;

  constructor(opts: MathVerifierOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.maxMemoryMb = opts.maxMemoryMb ?? 512;
    const size = opts.size ?? 2;
    const pool =
      size > 0
        ? new WorkerPool(new URL('./worker.ts', import.meta.url), {
            transport: 'process',
            size,
            taskTimeoutMs: this.timeoutMs,
            maxOldGenerationSizeMb: this.maxMemoryMb,
            prestart: true,
          })
        : null;
    this.pool = pool?.threaded ? pool : null;
    this.inline = this.pool === null;
  }

  /** Process ids of the checker processes (diagnostics). */
  pids(): number[] {
    return this.pool?.workerIds() ?? [];
  }

  /** Library reward and extracted answer; never rejects while open (errors and timeouts give (0.0, null)). */
  check(expected: string, generated: string): Promise<CheckResult> {
    if (this.closed) return Promise.reject(new Error('MathVerifier is closed'));
    if (!this.pool) return Promise.resolve(verifyAnswerWithLibrary(expected, generated));
    return this.pool.run<LibraryResult>('check', [expected, generated]).catch((err: unknown) => (err instanceof TimeoutError ? { ...FAILED, timedOut: true } : { ...FAILED }));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.pool?.close();
  }
}
