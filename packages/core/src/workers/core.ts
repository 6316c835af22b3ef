/**
 * The pool behind WorkerPool, whatever runs the tasks (worker threads or child processes, see
 * transports.ts): a queue; up to `size` workers, started as tasks arrive (or all at once with
 * `prestart`); a per-task time limit counted from the moment a ready worker takes the task; a
 * worker that dies or overruns is stopped and replaced; a task module that cannot load fails the
 * waiting tasks instead of being restarted again and again; close() returns once every worker
 * has exited. Workers never keep the process alive on their own: the pool holds the event loop
 * open only while tasks are queued or running.
 */
import { asNgCode, PoolClosedError, PoolTaskError, PoolWorkerDiedError, PoolWorkerError, TimeoutError } from '../errors.js';

/** Parent → worker. */
export interface TaskMessage {
  id: number;
  fn: string;
  args: unknown[];
}

/** Worker → parent. */
export type WorkerMessage =
  | { ready: true }
  | { loadError: string }
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: string; code?: string };

export interface WorkerEvents {
  message(msg: WorkerMessage): void;
  /** The worker is gone (exited, crashed, or never started), and why. Called once. */
  exit(why: string): void;
}

export interface WorkerHandle {
  /** Thread id or process id. */
  readonly id: number | undefined;
  send(msg: TaskMessage): void;
  /** Stops the worker now; resolves once it has exited. */
  kill(): Promise<void>;
}

/** Starts one worker that loads the task module and speaks the messages above. */
export interface Transport {
  /** "thread" or "process", for messages. */
  readonly kind: string;
  /** The task module, for messages. */
  readonly module: string;
  start(events: WorkerEvents): WorkerHandle;
}

export interface TaskPoolOptions {
  size: number;
  /** Per-task time limit in ms, from the moment a ready worker takes the task; 0 = none. */
  taskTimeoutMs?: number;
  /** Start every worker now and keep `size` of them running (default: start them as tasks arrive). */
  prestart?: boolean;
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
  handle: WorkerHandle;
  task: Task | null;
  /** The task module is loaded: the worker takes tasks, and its death is not a load failure. */
  ready: boolean;
}

export class TaskPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  /** Workers being stopped; close() waits for them. */
  private readonly stopping = new Set<Promise<void>>();
  private readonly timeoutMs: number;
  private nextId = 1;
  private closed = false;
  private keepAlive: NodeJS.Timeout | null = null;
  private startedCount = 0;

  constructor(
    private readonly transport: Transport,
    private readonly options: TaskPoolOptions,
  ) {
    this.timeoutMs = options.taskTimeoutMs ?? 0;
    if (options.prestart) this.topUp();
  }

  run<T>(fn: string, args: unknown[]): Promise<T> {
    if (this.closed) return Promise.reject(closedError());
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, fn, args, resolve: resolve as (v: unknown) => void, reject });
      this.pump();
    });
  }

  /** Workers started so far, replacements included (diagnostics). */
  get started(): number {
    return this.startedCount;
  }

  /** Thread or process ids of the running workers. */
  workerIds(): number[] {
    return this.slots.map((s) => s.handle.id).filter((id): id is number => typeof id === 'number');
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.queue.splice(0)) t.reject(closedError());
    for (const s of [...this.slots]) {
      if (s.task) {
        clearTimeout(s.task.timer);
        s.task.reject(closedError());
        s.task = null;
      }
      this.retire(s);
    }
    this.holdLoop();
    await Promise.all([...this.stopping]);
  }

  private spawn(): void {
    // The transport reports asynchronously, so `slot` is set before its first event.
    let slot: Slot | undefined;
    const handle = this.transport.start({
      message: (msg) => slot && this.onMessage(slot, msg),
      exit: (why) => slot && this.onExit(slot, why),
    });
    slot = { handle, task: null, ready: false };
    this.slots.push(slot);
    this.startedCount++;
  }

  private onMessage(slot: Slot, msg: WorkerMessage): void {
    if (!this.slots.includes(slot)) return;
    if ('ready' in msg) {
      slot.ready = true;
      this.pump();
    } else if ('loadError' in msg) {
      this.retire(slot);
      this.failStart(msg.loadError);
    } else {
      const task = slot.task;
      if (!task || task.id !== msg.id) return;
      clearTimeout(task.timer);
      slot.task = null;
      if (msg.ok) task.resolve(msg.value);
      // The task's own code (e.g. NG_ERR_TIMEOUT) survives the thread or process boundary.
      else task.reject(new PoolTaskError(msg.error, { code: asNgCode(msg.code) }));
      this.pump();
    }
  }

  private onExit(slot: Slot, why: string): void {
    const i = this.slots.indexOf(slot);
    if (i < 0) return; // stopped by the pool
    this.slots.splice(i, 1);
    const task = slot.task;
    slot.task = null;
    if (task) {
      clearTimeout(task.timer);
      task.reject(new PoolWorkerDiedError(`the ${this.transport.kind} running ${task.fn} died (${why}); it is replaced for the next tasks`));
    }
    if (!slot.ready) {
      this.failStart(why);
      return;
    }
    if (this.options.prestart) this.topUp();
    this.pump();
  }

  /** The task module does not load: every waiting task would fail the same way, so they fail now. */
  private failStart(why: string): void {
    const err = new PoolWorkerError(`a worker ${this.transport.kind} could not start: ${why} (task module ${this.transport.module})`);
    for (const t of this.queue.splice(0)) t.reject(err);
    this.holdLoop();
  }

  private topUp(): void {
    while (!this.closed && this.slots.length < this.options.size) this.spawn();
  }

  /** Removes a worker from the pool and stops it; close() waits for it. */
  private retire(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    const stopped = slot.handle.kill().catch(() => undefined);
    this.stopping.add(stopped);
    void stopped.then(() => this.stopping.delete(stopped));
  }

  private pump(): void {
    while (this.queue.length > 0 && !this.closed) {
      const slot = this.slots.find((s) => s.ready && s.task === null);
      if (!slot) {
        // Start more workers if there is room; the tasks wait until one is ready.
        let starting = this.slots.filter((s) => !s.ready).length;
        while (this.slots.length < this.options.size && starting < this.queue.length) {
          this.spawn();
          starting++;
        }
        break;
      }
      const task = this.queue.shift()!;
      slot.task = task;
      if (this.timeoutMs > 0) {
        task.timer = setTimeout(() => {
          if (slot.task !== task) return;
          slot.task = null;
          this.retire(slot);
          task.reject(new TimeoutError(`${task.fn} took longer than ${this.timeoutMs} ms and was stopped`));
          if (this.options.prestart) this.topUp();
          this.pump();
        }, this.timeoutMs);
      }
      slot.handle.send({ id: task.id, fn: task.fn, args: task.args });
    }
    this.holdLoop();
  }

  /** Keeps the event loop alive while tasks wait or run (the workers themselves are unref'd). */
  private holdLoop(): void {
    const busy = !this.closed && (this.queue.length > 0 || this.slots.some((s) => s.task));
    if (busy && !this.keepAlive) this.keepAlive = setInterval(() => undefined, 1 << 30);
    else if (!busy && this.keepAlive) {
      clearInterval(this.keepAlive);
      this.keepAlive = null;
    }
  }
}

function closedError(): Error {
  return new PoolClosedError();
}
