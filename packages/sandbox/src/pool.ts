// A bounded pool of run slots with a FIFO queue: at most `size` sandboxed programs run at once,
// at most `maxQueue` callers wait; more fail at once with SandboxBusyError (backpressure).
import { SandboxBusyError } from './errors.js';

export interface PoolStats {
  size: number;
  running: number;
  queued: number;
  maxRunning: number;
  maxQueued: number;
  completed: number;
  /** Over completed slots: queue wait and hold time, ms. */
  queueMsTotal: number;
  queueMsMax: number;
  runMsTotal: number;
}

export class SlotPool {
  private running = 0;
  private readonly waiters: Array<() => void> = [];
  private readonly s: PoolStats;

  constructor(
    readonly size: number,
    readonly maxQueue: number,
  ) {
    if (!(size >= 1)) throw new RangeError(`pool size must be at least 1, got ${size}`);
    this.s = { size, running: 0, queued: 0, maxRunning: 0, maxQueued: 0, completed: 0, queueMsTotal: 0, queueMsMax: 0, runMsTotal: 0 };
  }

  stats(): PoolStats {
    return { ...this.s, running: this.running, queued: this.waiters.length };
  }

  /** Waits for a slot (FIFO); returns the queue wait in ms and a release function to call once. */
  async acquire(): Promise<{ queueMs: number; release: () => void }> {
    const t0 = performance.now();
    if (this.running >= this.size) {
      if (this.waiters.length >= this.maxQueue) {
        throw new SandboxBusyError(
          `the sandbox pool is full: ${this.running} programs running and ${this.waiters.length} waiting (pool size ${this.size}, queue limit ${this.maxQueue}); retry later or raise the queue limit`,
        );
      }
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        this.s.maxQueued = Math.max(this.s.maxQueued, this.waiters.length);
      });
    } else {
      this.running += 1;
    }
    this.s.maxRunning = Math.max(this.s.maxRunning, this.running);
    const queueMs = performance.now() - t0;
    const t1 = performance.now();
    let released = false;
    return {
      queueMs,
      release: () => {
        if (released) return;
        released = true;
        this.s.completed += 1;
        this.s.queueMsTotal += queueMs;
        this.s.queueMsMax = Math.max(this.s.queueMsMax, queueMs);
        this.s.runMsTotal += performance.now() - t1;
        const next = this.waiters.shift();
        if (next) next(); // the slot passes straight to the next waiter
        else this.running -= 1;
      },
    };
  }

  async use<T>(fn: (queueMs: number) => Promise<T>): Promise<T> {
    const { queueMs, release } = await this.acquire();
    try {
      return await fn(queueMs);
    } finally {
      release();
    }
  }
}
