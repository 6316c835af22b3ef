// A small worker-thread pool with a hard time limit per check. A check that overruns its limit
// has its worker terminated and replaced, and scores as upstream scores a timeout: (0.0, null).

import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { verifyAnswerWithLibrary, type LibraryResult } from './verify.js';

export interface MathVerifierOptions {
  /** Number of worker threads (default 2). 0 runs checks inline on the calling thread. */
  size?: number;
  /** Hard limit per check in ms (default 10000, as upstream's library_verifier_timeout_seconds). */
  timeoutMs?: number;
  /** Heap limit of each worker in MB (default 512); a worker that exceeds it is replaced. */
  maxMemoryMb?: number;
}

type Job = { id: number; expected: string; generated: string; resolve: (r: LibraryResult & { timedOut?: boolean }) => void };
type Slot = { worker: Worker; job: Job | null; timer: NodeJS.Timeout | null; ready: boolean };

function workerFile(): string | null {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return fileURLToPath(new URL('./worker.js', import.meta.url));
  // running from TypeScript sources (tests): use the compiled file when it exists
  const dist = fileURLToPath(new URL('../dist/src/worker.js', import.meta.url));
  return existsSync(dist) ? dist : null;
}

export class MathVerifier {
  private slots: Slot[] = [];
  private queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  readonly timeoutMs: number;
  readonly maxMemoryMb: number;
  readonly inline: boolean;
  private file: string | null;

  constructor(opts: MathVerifierOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.maxMemoryMb = opts.maxMemoryMb ?? 512;
    const size = opts.size ?? 2;
    this.file = size > 0 ? workerFile() : null;
    this.inline = this.file === null;
    if (!this.inline) for (let i = 0; i < size; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot {
    const worker = new Worker(this.file!, { resourceLimits: { maxOldGenerationSizeMb: this.maxMemoryMb } });
    const slot: Slot = { worker, job: null, timer: null, ready: false };
    worker.unref();
    worker.on('message', (msg: { id: number; result: LibraryResult; ready?: boolean }) => {
      if (msg.ready) {
        slot.ready = true;
        this.pump();
        return;
      }
      const job = slot.job;
      if (!job || job.id !== msg.id) return;
      this.finish(slot, msg.result);
    });
    worker.on('error', () => this.replace(slot, { reward: 0.0, extracted: null }));
    worker.on('exit', () => {
      if (slot.job) this.replace(slot, { reward: 0.0, extracted: null });
    });
    return slot;
  }

  private finish(slot: Slot, result: LibraryResult & { timedOut?: boolean }): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    const job = slot.job;
    slot.job = null;
    job?.resolve(result);
    this.pump();
  }

  private replace(slot: Slot, result: LibraryResult & { timedOut?: boolean }): void {
    const idx = this.slots.indexOf(slot);
    const job = slot.job;
    slot.job = null;
    if (slot.timer) clearTimeout(slot.timer);
    slot.worker.removeAllListeners();
    void slot.worker.terminate();
    if (idx >= 0 && !this.closed) this.slots[idx] = this.spawn();
    job?.resolve(result);
    this.pump();
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.job || this.queue.length === 0) continue;
      const job = this.queue.shift()!;
      slot.job = job;
      slot.timer = setTimeout(() => this.replace(slot, { reward: 0.0, extracted: null, timedOut: true }), this.timeoutMs);
      slot.worker.postMessage({ id: job.id, expected: job.expected, generated: job.generated });
    }
  }

  /** Library reward and extracted answer; never rejects (errors and timeouts give (0.0, null)). */
  check(expected: string, generated: string): Promise<LibraryResult & { timedOut?: boolean }> {
    if (this.closed) return Promise.reject(new Error('MathVerifier is closed'));
    if (this.inline) return Promise.resolve(verifyAnswerWithLibrary(expected, generated));
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, expected, generated, resolve });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.resolve({ reward: 0.0, extracted: null });
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
    this.slots = [];
  }
}
