/**
 * A small worker-thread pool for CPU-heavy checks, so one process keeps serving while it
 * verifies. The task module exports plain functions; `run(name, args)` calls one in a worker.
 * A task that runs past its time limit has its worker terminated and replaced.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { NgError, TimeoutError } from '../errors.js';

export interface WorkerPoolOptions {
  /** Number of worker threads (default: cores - 1, at least 1). */
  size?: number;
  /** Per-task time limit; 0 = none. */
  taskTimeoutMs?: number;
  /** Per-worker heap limit in MB. */
  maxOldGenerationSizeMb?: number;
}

interface Task {
  id: number;
  fn: string;
  args: unknown[];
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  timer?: NodeJS.Timeout;
}

interface Slot {
  worker: Worker;
  task: Task | null;
  /** The task module is loaded; time limits start only then. */
  ready: boolean;
}

/** Maps a `.ts` source URL to its compiled file under the package's dist/ (null if not built). */
export function compiledPath(moduleUrl: URL | string): string | null {
  const file = fileURLToPath(moduleUrl);
  if (!file.endsWith('.ts')) return existsSync(file) ? file : null;
  let dir = dirname(file);
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) break;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
  const out = join(dir, 'dist', relative(dir, file)).replace(/\.ts$/, '.js');
  return existsSync(out) ? out : null;
}

function bootstrapPath(): string | null {
  return compiledPath(new URL(import.meta.url.endsWith('.ts') ? './bootstrap.ts' : './bootstrap.js', import.meta.url));
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private readonly size: number;
  private readonly timeoutMs: number;
  private readonly modulePath: string | null;
  private readonly moduleUrl: URL;
  private readonly bootstrap: string | null;
  private readonly maxOld?: number;
  private nextId = 1;
  private closed = false;
  private inline?: Promise<Record<string, (...a: unknown[]) => unknown>>;

  constructor(moduleUrl: URL | string, options: WorkerPoolOptions = {}) {
    this.moduleUrl = new URL(moduleUrl.toString());
    this.size = Math.max(1, options.size ?? Math.max(1, availableParallelism() - 1));
    this.timeoutMs = options.taskTimeoutMs ?? 0;
    this.maxOld = options.maxOldGenerationSizeMb;
    this.modulePath = compiledPath(this.moduleUrl);
    this.bootstrap = bootstrapPath();
  }

  /** True when tasks run in worker threads (false: inline, e.g. tests on unbuilt sources). */
  get threaded(): boolean {
    return this.modulePath !== null && this.bootstrap !== null;
  }

  run<T = unknown>(fn: string, args: unknown[] = []): Promise<T> {
    if (this.closed) return Promise.reject(new NgError('NG_ERR_POOL_CLOSED', 'the worker pool is closed'));
    if (!this.threaded) return this.runInline(fn, args) as Promise<T>;
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, fn, args, resolve: resolve as (v: unknown) => void, reject });
      this.pump();
    });
  }

  private async runInline(fn: string, args: unknown[]): Promise<unknown> {
    this.inline ??= import(this.moduleUrl.href) as Promise<Record<string, (...a: unknown[]) => unknown>>;
    const mod = await this.inline;
    const f = mod[fn];
    if (typeof f !== 'function') throw new NgError('NG_ERR_POOL_TASK', `the worker module has no exported function ${fn}`);
    return await f(...args);
  }

  private spawn(): Slot {
    const worker = new Worker(this.bootstrap!, {
      workerData: { module: pathToFileURL(this.modulePath!).href },
      resourceLimits: this.maxOld ? { maxOldGenerationSizeMb: this.maxOld } : undefined,
    });
    worker.unref();
    const slot: Slot = { worker, task: null, ready: false };
    worker.on('message', (msg: { id: number; ok: boolean; value?: unknown; error?: string; ready?: boolean }) => {
      if (msg.ready) {
        slot.ready = true;
        this.pump();
        return;
      }
      const task = slot.task;
      if (!task || task.id !== msg.id) return;
      clearTimeout(task.timer);
      slot.task = null;
      if (msg.ok) task.resolve(msg.value);
      else task.reject(new NgError('NG_ERR_POOL_TASK', msg.error ?? 'task failed'));
      this.pump();
    });
    const onDeath = (err: unknown) => {
      const task = slot.task;
      slot.task = null;
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      if (task) {
        clearTimeout(task.timer);
        task.reject(new NgError('NG_ERR_POOL_WORKER', `worker died while running ${task.fn}: ${err instanceof Error ? err.message : String(err)}`));
      }
      if (!slot.ready) {
        // The task module itself fails to load: every waiting task would fail the same way.
        const why = new NgError('NG_ERR_POOL_WORKER', `a worker could not start: ${err instanceof Error ? err.message : String(err)}`);
        for (const t of this.queue.splice(0)) t.reject(why);
        return;
      }
      this.pump();
    };
    worker.on('error', onDeath);
    worker.on('exit', (code) => {
      if (this.slots.includes(slot)) onDeath(new Error(`exit code ${code}`));
    });
    this.slots.push(slot);
    return slot;
  }

  private pump(): void {
    while (this.queue.length > 0 && !this.closed) {
      const slot = this.slots.find((s) => s.task === null && s.ready);
      if (!slot) {
        // Start another worker if there is room; the task waits until one is ready.
        let starting = this.slots.filter((s) => !s.ready).length;
        while (this.slots.length < this.size && starting < this.queue.length) {
          this.spawn();
          starting++;
        }
        return;
      }
      const task = this.queue.shift()!;
      slot.task = task;
      const s = slot;
      if (this.timeoutMs > 0) {
        task.timer = setTimeout(() => {
          if (s.task !== task) return;
          s.task = null;
          const i = this.slots.indexOf(s);
          if (i >= 0) this.slots.splice(i, 1);
          void s.worker.terminate();
          task.reject(new TimeoutError(`${task.fn} took longer than ${this.timeoutMs} ms and was stopped`));
          this.pump();
        }, this.timeoutMs);
      }
      s.worker.postMessage({ id: task.id, fn: task.fn, args: task.args });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.queue.splice(0)) t.reject(new NgError('NG_ERR_POOL_CLOSED', 'the worker pool is closed'));
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }
}
