/**
 * The two ways a TaskPool runs tasks: worker threads (cheap, share the process) and child
 * processes (a fatal V8 error, an out-of-memory or a native crash in a task takes down only
 * that process). Both load the task module through an entry in this folder (thread-entry.ts,
 * process-entry.ts) that speaks the messages of core.ts.
 */
import { fork } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Transport, WorkerEvents, WorkerHandle } from './core.js';

export interface TransportOptions {
  /** Compiled task module file. */
  module: string;
  /** Compiled entry file of this transport (thread-entry.js or process-entry.js). */
  entry: string;
  /** Heap limit per worker in MB. */
  heapLimitMb?: number;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function threadTransport(options: TransportOptions): Transport {
  return {
    kind: 'thread',
    module: options.module,
    start(events: WorkerEvents): WorkerHandle {
      const worker = new Worker(options.entry, {
        workerData: { module: pathToFileURL(options.module).href },
        resourceLimits: options.heapLimitMb ? { maxOldGenerationSizeMb: options.heapLimitMb } : undefined,
      });
      worker.unref();
      let error: string | undefined;
      let exited = false;
      const done = new Promise<void>((resolve) => {
        worker.on('exit', (code) => {
          exited = true;
          resolve();
          events.exit(error ?? `exit code ${code}`);
        });
      });
      worker.on('error', (err) => (error = describe(err)));
      worker.on('message', (msg) => events.message(msg));
      return {
        id: worker.threadId,
        send: (msg) => worker.postMessage(msg),
        kill: async () => {
          if (exited) return;
          worker.ref(); // the exit must be awaited even though workers are unref'd
          await worker.terminate();
          await done;
        },
      };
    },
  };
}

export function processTransport(options: TransportOptions): Transport {
  return {
    kind: 'process',
    module: options.module,
    start(events: WorkerEvents): WorkerHandle {
      const child = fork(options.entry, [pathToFileURL(options.module).href], {
        execArgv: options.heapLimitMb ? [`--max-old-space-size=${options.heapLimitMb}`] : [],
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        serialization: 'advanced',
      });
      let error: string | undefined;
      let exited = false;
      let resolveDone!: () => void;
      const done = new Promise<void>((r) => (resolveDone = r));
      const gone = (why: string) => {
        if (exited) return;
        exited = true;
        resolveDone();
        events.exit(why);
      };
      child.on('exit', (code, signal) => gone(error ?? (signal ? `killed by ${signal}` : `exit code ${code}`)));
      child.on('error', (err) => {
        error = describe(err);
        // A process that could not be started never emits 'exit'.
        if (child.pid === undefined) gone(error);
      });
      child.on('message', (msg) => events.message(msg as Parameters<WorkerEvents['message']>[0]));
      // A worker must never keep the parent process alive.
      child.unref();
      (child as unknown as { channel?: { unref(): void } }).channel?.unref();
      return {
        id: child.pid,
        send: (msg) => {
          if (child.connected) child.send(msg);
        },
        kill: async () => {
          if (exited) return;
          child.ref(); // the exit must be awaited even though workers are unref'd
          child.kill('SIGKILL');
          await done;
        },
      };
    },
  };
}
