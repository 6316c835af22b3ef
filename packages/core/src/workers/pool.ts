/**
 * WorkerPool: runs the exported functions of a task module off the calling thread, so one process
 * keeps serving while it verifies. `run(name, args)` calls one in a worker thread (default) or a
 * child process (`transport: 'process'`, for code that may crash or exhaust memory). Queueing, time
 * limits, replacing workers and closing are the TaskPool's (core.ts), the same for both transports.
 * `size: 0` runs the functions inline on the calling thread instead (no worker, no copy of the
 * arguments and results), still within `taskTimeoutMs` (InlineQueue, inline.ts: a task stopped early
 * may run again, so inline tasks must be pure), for a process that is one of several replicas sharing
 * the cores, where the replicas are the parallelism. Without a compiled task module (tests on
 * unbuilt sources) the functions run inline the same way.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, PoolClosedError, PoolTaskError } from '../errors.js';
import { TaskPool } from './core.js';
import { InlineQueue } from './inline.js';
import { processTransport, threadTransport } from './transports.js';

export interface WorkerPoolOptions {
  /** Number of workers (default: cores - 1, at least 1); 0 = run the tasks inline on the calling thread. */
  size?: number;
  /**
   * Per-task time limit from the moment a ready worker takes the task; 0 = none. A task past it has
   * its worker stopped and replaced. Inline, the synchronous part of the task is stopped at the limit.
   */
  taskTimeoutMs?: number;
  /** Per-worker heap limit in MB. */
  maxOldGenerationSizeMb?: number;
  /** 'thread' (default) or 'process'. */
  transport?: 'thread' | 'process';
  /** Start every worker now and keep `size` running (default: started as tasks arrive). */
  prestart?: boolean;
}

/**
 * A module named by its source file (`new URL('./src/worker.ts', import.meta.url)`): that URL when
 * the `.ts` is there (running from source), else the `.js` beside it (running compiled from dist/).
 */
export function runnableModule(moduleUrl: URL | string): URL {
  const url = new URL(moduleUrl.toString());
  if (!url.pathname.endsWith('.ts') || existsSync(fileURLToPath(url))) return url;
  return new URL(url.href.replace(/\.ts$/, '.js'));
}

/** Maps a module's `.ts` source URL to its compiled file under the package's dist/ (null if not built). */
export function compiledPath(moduleUrl: URL | string): string | null {
  const file = fileURLToPath(runnableModule(moduleUrl));
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

/**
 * Replicas of this server process's instance on this host: `num_replicas` of its own config block
 * (ng-run starts that many processes of the instance on each host that runs it and passes the block
 * on unchanged), 1 when absent or not a whole number >= 1.
 */
export function replicasOnHost(config: Readonly<Record<string, unknown>>): number {
  const n = config.num_replicas;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 ? n : 1;
}

/**
 * Default number of check workers for one of `replicas` processes of an instance on a host with
 * `cores` cores: its share of the cores minus its own main thread, max(0, floor(cores / replicas) - 1).
 * 0 means inline checks (`size: 0`): one replica per core is then the whole parallelism.
 */
export function defaultWorkerCount(replicas = 1, cores = availableParallelism()): number {
  return Math.max(0, Math.floor(cores / Math.max(1, replicas)) - 1);
}

function entryPath(name: 'thread-entry' | 'process-entry'): string | null {
  return compiledPath(new URL(`./${name}.ts`, import.meta.url));
}

type TaskModule = Record<string, (...a: unknown[]) => unknown>;

export class WorkerPool {
  private readonly moduleUrl: URL;
  private readonly pool: TaskPool | null;
  private readonly inline: InlineQueue;
  private closed = false;
  private inlineModule?: Promise<TaskModule>;

  constructor(moduleUrl: URL | string, options: WorkerPoolOptions = {}) {
    this.moduleUrl = runnableModule(moduleUrl);
    const timeoutMs = options.taskTimeoutMs ?? 0;
    this.inline = new InlineQueue(timeoutMs);
    const size = options.size ?? Math.max(1, availableParallelism() - 1);
    if (!Number.isInteger(size) || size < 0) {
      throw new ConfigError(`WorkerPool size must be a whole number >= 0 (0 runs the tasks inline on the calling thread), got ${size}.`);
    }
    const kind = options.transport ?? 'thread';
    const module = compiledPath(this.moduleUrl);
    const entry = entryPath(kind === 'process' ? 'process-entry' : 'thread-entry');
    if (size === 0 || module === null || entry === null) {
      this.pool = null;
      return;
    }
    const transport = (kind === 'process' ? processTransport : threadTransport)({ module, entry, heapLimitMb: options.maxOldGenerationSizeMb });
    this.pool = new TaskPool(transport, {
      size,
      taskTimeoutMs: timeoutMs,
      prestart: options.prestart,
    });
  }

  /** True when tasks run in workers (threads or processes); false: inline (`size: 0`, or tests on unbuilt sources). */
  get threaded(): boolean {
    return this.pool !== null;
  }

  /** Thread or process ids of the running workers (diagnostics). */
  workerIds(): number[] {
    return this.pool?.workerIds() ?? [];
  }

  /** Workers started so far, replacements included (diagnostics). */
  get workersStarted(): number {
    return this.pool?.started ?? 0;
  }

  run<T = unknown>(fn: string, args: unknown[] = []): Promise<T> {
    if (this.closed) return Promise.reject(new PoolClosedError());
    if (!this.pool) return this.runInline(fn, args) as Promise<T>;
    return this.pool.run<T>(fn, args);
  }

  private async runInline(fn: string, args: unknown[]): Promise<unknown> {
    this.inlineModule ??= import(this.moduleUrl.href) as Promise<TaskModule>;
    const mod = await this.inlineModule;
    const f = mod[fn];
    if (typeof f !== 'function') throw new PoolTaskError(`the worker module has no exported function ${fn}`);
    return await this.inline.run(() => f(...args), fn);
  }

  /** Fails waiting and running tasks (NG_ERR_POOL_CLOSED) and resolves once every worker has exited. */
  async close(): Promise<void> {
    this.closed = true;
    await this.pool?.close();
  }
}
