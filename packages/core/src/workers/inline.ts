/**
 * Synchronous work on the calling thread with a time limit, for servers that run their checks
 * inline (no worker, no structured-clone hop) yet must stop a pathological one. The function runs
 * under a `node:vm` script whose `timeout` arms V8's watchdog: past the limit V8 terminates the
 * running JavaScript wherever it is, in our own functions too (a loop, a backtracking regular
 * expression), and the call throws TimeoutError. A terminated function runs no `catch` or `finally`
 * of its own, so it must not leave shared state half-updated (fill caches only once a value is
 * complete). Each call with a limit costs one watchdog thread start (about 60 µs of CPU here),
 * which is as much as a cheap check: InlineQueue runs the tasks that arrive in one turn of the
 * event loop under one limit-armed call instead, and still gives each task its full limit.
 *
 * Only the synchronous part is limited: a function returning a promise is stopped only while it
 * runs on the stack, not while it waits.
 */
import { createContext, Script, type Context } from 'node:vm';
import { TimeoutError } from '../errors.js';

/** Largest time limit node:vm takes (2^32 - 1 ms, about 49 days); longer ones are clamped to it. */
const MAX_TIMEOUT_MS = 0xffff_ffff;

interface Runner {
  context: Context;
  script: Script;
  /** The call the script makes next; a stack, so a limited function may itself call runWithTimeLimit. */
  pending: (() => unknown)[];
}

let runner: Runner | null = null;

function getRunner(): Runner {
  if (runner) return runner;
  const pending: (() => unknown)[] = [];
  // The context's only global is a function of this realm: the code it calls keeps this realm's
  // built-ins (arrays, errors, regular expressions), so its results need no conversion.
  const context = createContext({ ngRunPending: () => pending[pending.length - 1]!() });
  const script = new Script('ngRunPending()', { filename: 'ng-time-limit' });
  runner = { context, script, pending };
  return runner;
}

function isScriptTimeout(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
}

/**
 * Calls `fn()` on this thread and returns its result; throws TimeoutError (NG_ERR_TIMEOUT) naming
 * `what` when it runs longer than `timeoutMs`. `timeoutMs` <= 0 means no limit (a plain call).
 * Errors thrown by `fn` pass through unchanged.
 */
export function runWithTimeLimit<T>(fn: () => T, timeoutMs: number, what = 'the task'): T {
  if (!(timeoutMs > 0)) return fn();
  const r = getRunner();
  const limit = Math.min(MAX_TIMEOUT_MS, Math.max(1, Math.ceil(timeoutMs)));
  r.pending.push(fn);
  try {
    return r.script.runInContext(r.context, { timeout: limit }) as T;
  } catch (err) {
    if (isScriptTimeout(err)) throw new TimeoutError(`${what} took longer than ${limit} ms and was stopped`);
    throw err;
  } finally {
    r.pending.pop();
  }
}

interface QueuedTask {
  fn: () => unknown;
  what: string;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * Runs tasks on the calling thread, each within `timeoutMs` (0 = no limit). Tasks queued in one
 * turn of the event loop (e.g. every request that arrived in one poll) run together after it, under
 * one limit-armed call. A task is stopped with TimeoutError only once it has run a full limit as
 * the first of a call; one cut short because earlier tasks of its call used part of the time runs
 * again, first of the next call. So tasks must be safe to run again after being stopped (pure
 * functions of their arguments, caches filled only with complete values).
 */
export class InlineQueue {
  private queue: QueuedTask[] = [];
  private scheduled = false;

  constructor(private readonly timeoutMs: number) {}

  run<T>(fn: () => T, what = 'the task'): Promise<T> {
    if (!(this.timeoutMs > 0)) {
      try {
        return Promise.resolve(fn());
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, what, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    let i = 0;
    const runFrom = () => {
      for (; i < batch.length; i++) {
        const task = batch[i]!;
        let value: unknown;
        try {
          value = task.fn();
        } catch (err) {
          task.reject(err);
          continue;
        }
        task.resolve(value);
      }
    };
    while (i < batch.length) {
      const first = i;
      try {
        runWithTimeLimit(runFrom, this.timeoutMs);
      } catch (err) {
        const task = batch[i]!;
        if (!(err instanceof TimeoutError)) {
          // Not from the task (its own errors are caught above): fail it rather than the process.
          task.reject(err);
          i++;
        } else if (i === first) {
          // Task i was running when the time ran out, and it had the whole limit.
          task.reject(new TimeoutError(`${task.what} took longer than ${Math.ceil(this.timeoutMs)} ms and was stopped`));
          i++;
        }
        // Else it was cut short by the others of its call: it runs again, first of the next call.
      }
    }
  }
}
