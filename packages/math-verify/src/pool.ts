// A pool of checker processes with a hard time limit per check. A check that overruns its limit
// has its process killed and replaced, and scores as upstream scores a timeout: (0.0, null).
// Processes rather than worker threads: a fatal V8 error (or a native crash) in a checker must
// not take the server down with it.

import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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
type Job = { id: number; expected: string; generated: string; resolve: (r: CheckResult) => void };
type Slot = { child: ChildProcess; job: Job | null; timer: NodeJS.Timeout | null; ready: boolean };

function checkerFile(): string | null {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return fileURLToPath(new URL('./worker.js', import.meta.url));
  // running from TypeScript sources (tests): use the compiled file when it exists
  const dist = fileURLToPath(new URL('../dist/src/worker.js', import.meta.url));
  return existsSync(dist) ? dist : null;
}

const FAILED: LibraryResult = { reward: 0.0, extracted: null };

export class MathVerifier {
  private slots: Slot[] = [];
  private queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  /** Holds the event loop open while checks are queued or running (the checkers themselves are unref'd). */
  private keepAlive: NodeJS.Timeout | null = null;
  readonly timeoutMs: number;
  readonly maxMemoryMb: number;
  readonly inline: boolean;
  private file: string | null;

  constructor(opts: MathVerifierOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.maxMemoryMb = opts.maxMemoryMb ?? 512;
    const size = opts.size ?? 2;
    this.file = size > 0 ? checkerFile() : null;
    this.inline = this.file === null;
    if (!this.inline) for (let i = 0; i < size; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot {
    const child = fork(this.file!, [], {
      execArgv: [`--max-old-space-size=${this.maxMemoryMb}`],
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      serialization: 'advanced',
    });
    const slot: Slot = { child, job: null, timer: null, ready: false };
    child.on('message', (msg: { id?: number; result?: LibraryResult; ready?: boolean }) => {
      if (msg.ready) {
        slot.ready = true;
        this.pump();
        return;
      }
      const job = slot.job;
      if (!job || job.id !== msg.id) return;
      this.finish(slot, msg.result ?? FAILED);
    });
    child.on('error', () => this.replace(slot, FAILED));
    child.on('exit', () => this.replace(slot, FAILED));
    // a checker must never keep the server process alive
    child.unref();
    (child as unknown as { channel?: { unref(): void } }).channel?.unref();
    return slot;
  }

  private finish(slot: Slot, result: CheckResult): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    const job = slot.job;
    slot.job = null;
    job?.resolve(result);
    this.pump();
  }

  private replace(slot: Slot, result: CheckResult): void {
    const idx = this.slots.indexOf(slot);
    if (idx < 0) return;
    const job = slot.job;
    slot.job = null;
    if (slot.timer) clearTimeout(slot.timer);
    slot.child.removeAllListeners();
    slot.child.kill('SIGKILL');
    if (this.closed) this.slots.splice(idx, 1);
    else this.slots[idx] = this.spawn();
    job?.resolve(result);
    this.pump();
  }

  private pump(): void {
    const busy = this.queue.length > 0 || this.slots.some((s) => s.job);
    if (!busy && this.keepAlive) {
      clearInterval(this.keepAlive);
      this.keepAlive = null;
    }
    for (const slot of this.slots) {
      if (!slot.ready || slot.job || this.queue.length === 0) continue;
      const job = this.queue.shift()!;
      slot.job = job;
      slot.timer = setTimeout(() => this.replace(slot, { ...FAILED, timedOut: true }), this.timeoutMs);
      slot.child.send({ id: job.id, expected: job.expected, generated: job.generated });
    }
  }

  /** Process ids of the checker processes (diagnostics). */
  pids(): number[] {
    return this.slots.map((s) => s.child.pid).filter((p): p is number => typeof p === 'number');
  }

  /** Library reward and extracted answer; never rejects while open (errors and timeouts give (0.0, null)). */
  check(expected: string, generated: string): Promise<CheckResult> {
    if (this.closed) return Promise.reject(new Error('MathVerifier is closed'));
    if (this.inline) return Promise.resolve(verifyAnswerWithLibrary(expected, generated));
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, expected, generated, resolve });
      this.keepAlive ??= setInterval(() => {}, 1 << 30);
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = null;
    for (const job of this.queue.splice(0)) job.resolve(FAILED);
    const slots = this.slots.splice(0);
    await Promise.all(
      slots.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.child.removeAllListeners();
            s.job?.resolve(FAILED);
            if (s.timer) clearTimeout(s.timer);
            if (s.child.exitCode !== null || s.child.signalCode !== null) return resolve();
            s.child.once('exit', () => resolve());
            s.child.ref(); // wait for the exit even though checkers are normally unref'd
            s.child.kill('SIGKILL');
          }),
      ),
    );
  }
}
