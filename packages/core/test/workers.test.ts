import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NgError, TimeoutError } from '@nemo-gym/core/errors';
import { defaultWorkerCount, replicasOnHost, WorkerPool } from '@nemo-gym/core/workers';
import { runWithTimeLimit } from '../src/workers/inline.js';

function taskModule(source: string): URL {
  const dir = mkdtempSync(join(tmpdir(), 'ng-pool-'));
  const file = join(dir, 'tasks.mjs');
  writeFileSync(file, source);
  return pathToFileURL(file);
}

const TASKS = taskModule(`
import { threadId } from 'node:worker_threads';
export function add(a, b) { return a + b; }
export function where() { return { pid: process.pid, thread: threadId }; }
export function spin(ms) { const end = Date.now() + ms; while (Date.now() < end) {} return 'done'; }
export function fail() { throw new Error('nope'); }
export function spinForever() { for (;;) {} }
export function backtrack(n) { return /(a+)+$/.test('a'.repeat(n) + '!'); }
export function guarded() { try { for (;;) {} } catch { return 'caught'; } finally { globalThis.finallyRan = true; } }
`);

// Loading takes 600 ms; a task's time limit must not count it.
const SLOW_LOAD = taskModule(`
const end = Date.now() + 600; while (Date.now() < end) {}
export function add(a, b) { return a + b; }
`);

const BROKEN = taskModule(`import 'node:does-not-exist'; export const x = 1;`);

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('WorkerPool', () => {
  it('runs exported functions in worker threads', async () => {
    const pool = new WorkerPool(TASKS, { size: 2 });
    expect(pool.threaded).toBe(true);
    expect(await pool.run('add', [2, 3])).toBe(5);
    const at = await pool.run<{ pid: number; thread: number }>('where');
    expect(at.thread).not.toBe(0);
    expect(at.pid).toBe(process.pid);
    await pool.close();
  });

  it('runs them in child processes with transport: process', async () => {
    const pool = new WorkerPool(TASKS, { size: 2, transport: 'process' });
    expect(pool.threaded).toBe(true);
    expect(await pool.run('add', [2, 3])).toBe(5);
    const at = await pool.run<{ pid: number }>('where');
    expect(at.pid).not.toBe(process.pid);
    expect(pool.workerIds()).toContain(at.pid);
    await pool.close();
  });
});

describe.each(['thread', 'process'] as const)('WorkerPool over %s workers', (transport) => {
  it('stops a task past its time limit and keeps serving', async () => {
    const pool = new WorkerPool(TASKS, { size: 1, taskTimeoutMs: 300, transport });
    await expect(pool.run('spin', [5000])).rejects.toBeInstanceOf(TimeoutError);
    expect(await pool.run('add', [1, 1])).toBe(2);
    expect(pool.workersStarted).toBe(2);
    await pool.close();
  });

  it('counts the time limit from the moment the worker is ready, not while the module loads', async () => {
    const pool = new WorkerPool(SLOW_LOAD, { size: 1, taskTimeoutMs: 300, transport });
    expect(await pool.run('add', [2, 2])).toBe(4);
    await pool.close();
  });

  it('reports errors thrown by a task', async () => {
    const pool = new WorkerPool(TASKS, { size: 1, transport });
    await expect(pool.run('fail')).rejects.toThrow(/nope/);
    await expect(pool.run('missing')).rejects.toThrow(/no exported function missing/);
    await pool.close();
  });

  it('fails waiting tasks when the module cannot load, instead of respawning forever', async () => {
    const pool = new WorkerPool(BROKEN, { size: 2, transport });
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => pool.run('x')));
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect(String((r as PromiseRejectedResult).reason)).toMatch(/could not start: .*does-not-exist.*tasks\.mjs/);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(pool.workersStarted).toBeLessThanOrEqual(2);
    // A later task tries once more, and fails the same way.
    await expect(pool.run('x')).rejects.toThrow(/could not start/);
    expect(pool.workersStarted).toBeLessThanOrEqual(4);
    await pool.close();
  });

  it('close fails the running and waiting tasks and returns once the workers have exited', async () => {
    const pool = new WorkerPool(TASKS, { size: 1, transport });
    await pool.run('add', [1, 1]);
    const ids = pool.workerIds();
    const outcomes = [pool.run('spin', [10_000]), pool.run('add', [1, 2])].map((p) => p.then(() => null, (e: unknown) => e));
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await pool.close();
    expect(Date.now() - started).toBeLessThan(5000);
    for (const outcome of outcomes) {
      const err = await outcome;
      expect(err).toBeInstanceOf(NgError);
      expect((err as NgError).code).toBe('NG_ERR_POOL_CLOSED');
    }
    expect(pool.workerIds()).toEqual([]);
    if (transport === 'process') for (const pid of ids) expect(isAlive(pid)).toBe(false);
    await expect(pool.run('add', [1, 1])).rejects.toThrow(/closed/);
  });
});

describe('WorkerPool over process workers, crashes', () => {
  it('a worker killed mid-task fails that task and is replaced', async () => {
    const pool = new WorkerPool(TASKS, { size: 1, transport: 'process', prestart: true });
    await pool.run('add', [1, 1]);
    const [pid] = pool.workerIds();
    const pending = pool.run('spin', [10_000]);
    await new Promise((r) => setTimeout(r, 100));
    process.kill(pid!, 'SIGKILL');
    await expect(pending).rejects.toThrow(/the process running spin died \(killed by SIGKILL\)/);
    expect(pool.workerIds()).toHaveLength(1);
    expect(pool.workerIds()[0]).not.toBe(pid);
    expect(await pool.run('add', [2, 2])).toBe(4);
    await pool.close();
  });
});

describe('WorkerPool with size 0 (inline)', () => {
  it('runs the functions on the calling thread', async () => {
    const pool = new WorkerPool(TASKS, { size: 0, taskTimeoutMs: 5000 });
    expect(pool.threaded).toBe(false);
    expect(await pool.run('add', [2, 3])).toBe(5);
    expect(await pool.run('where')).toEqual({ pid: process.pid, thread: 0 });
    await expect(pool.run('fail')).rejects.toThrow(/nope/);
    await expect(pool.run('missing')).rejects.toThrow(/no exported function missing/);
    expect(pool.workersStarted).toBe(0);
    await pool.close();
    await expect(pool.run('add', [1, 1])).rejects.toThrow(/closed/);
  });

  it('stops a task past its time limit with TimeoutError (a loop, a backtracking regex) and keeps serving', async () => {
    const pool = new WorkerPool(TASKS, { size: 0, taskTimeoutMs: 300 });
    for (const [fn, args] of [['spinForever', []], ['backtrack', [40]]] as const) {
      const t0 = performance.now();
      const err = await pool.run(fn, [...args]).then(() => null, (e: unknown) => e);
      const took = performance.now() - t0;
      expect(err).toBeInstanceOf(TimeoutError);
      expect((err as Error).message).toMatch(new RegExp(`${fn} took longer than 300 ms and was stopped`));
      expect(took).toBeGreaterThanOrEqual(280);
      expect(took).toBeLessThan(10_000);
    }
    expect(await pool.run('backtrack', [10])).toBe(false);
    expect(await pool.run('add', [1, 1])).toBe(2);
    await pool.close();
  });

  it('gives every task of one event-loop turn its full time limit', async () => {
    // One call runs all five; the second spin is cut at 300 ms after 100 ms of its own, so it runs
    // again, first of the next call, and finishes; only the endless one is stopped.
    const pool = new WorkerPool(TASKS, { size: 0, taskTimeoutMs: 300 });
    await pool.run('add', [0, 0]); // the module is loaded: the five below queue in the same turn
    const outcomes = await Promise.allSettled([
      pool.run('add', [1, 2]),
      pool.run('spin', [200]),
      pool.run('spin', [200]),
      pool.run('spinForever'),
      pool.run('add', [3, 4]),
    ]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).name))).toEqual([3, 'done', 'done', 'TimeoutError', 7]);
    await pool.close();
  });

  it('refuses a negative or fractional size', () => {
    expect(() => new WorkerPool(TASKS, { size: -1 })).toThrow(/size must be a whole number >= 0 \(0 runs the tasks inline on the calling thread\), got -1/);
    expect(() => new WorkerPool(TASKS, { size: 1.5 })).toThrow(/got 1\.5/);
  });
});

describe('runWithTimeLimit', () => {
  it('returns the result, passes errors through, and runs without a limit for 0', () => {
    expect(runWithTimeLimit(() => [1, 2], 1000)).toEqual([1, 2]);
    expect(runWithTimeLimit(() => [1, 2], 1000)).toBeInstanceOf(Array);
    const boom = new RangeError('boom');
    expect(() => runWithTimeLimit(() => { throw boom; }, 1000)).toThrow(boom);
    expect(runWithTimeLimit(() => 7, 0)).toBe(7);
  });

  it('ends the function past the limit without running its catch or finally', async () => {
    const mod = (await import(TASKS.href)) as { guarded(): string };
    const g = globalThis as { finallyRan?: boolean };
    delete g.finallyRan;
    expect(() => runWithTimeLimit(() => mod.guarded(), 200, 'guarded')).toThrow(TimeoutError);
    expect(g.finallyRan).toBeUndefined();
  });

  it('nests: an inner limit ends only the inner call', () => {
    const out = runWithTimeLimit(() => {
      let inner = 'finished';
      try {
        runWithTimeLimit(() => {
          for (;;);
        }, 100);
      } catch (e) {
        inner = e instanceof TimeoutError ? 'stopped' : String(e);
      }
      return inner;
    }, 5000);
    expect(out).toBe('stopped');
  });
});

describe('default worker count of a replica', () => {
  it('is its share of the cores minus its main thread, 0 once replicas take every core', () => {
    expect(defaultWorkerCount(1, 2)).toBe(1);
    expect(defaultWorkerCount(2, 2)).toBe(0);
    expect(defaultWorkerCount(3, 2)).toBe(0);
    expect(defaultWorkerCount(1, 8)).toBe(7);
    expect(defaultWorkerCount(2, 8)).toBe(3);
    expect(defaultWorkerCount(3, 8)).toBe(1);
    expect(defaultWorkerCount(8, 8)).toBe(0);
    expect(defaultWorkerCount(1, 1)).toBe(0);
  });

  it('reads the replica count from num_replicas of the server config (1 when absent or invalid)', () => {
    expect(replicasOnHost({ num_replicas: 4 })).toBe(4);
    expect(replicasOnHost({})).toBe(1);
    expect(replicasOnHost({ num_replicas: 0 })).toBe(1);
    expect(replicasOnHost({ num_replicas: '4' })).toBe(1);
  });
});

describe('a script using a pool', () => {
  const dist = fileURLToPath(new URL('../dist/src/workers/pool.js', import.meta.url));
  it.each(['thread', 'process'])('over %s workers waits for its tasks and exits once the pool is closed', (transport) => {
    const script = `
      import { WorkerPool } from ${JSON.stringify(dist)};
      const pool = new WorkerPool(${JSON.stringify(TASKS.href)}, { size: 2, transport: ${JSON.stringify(transport)} });
      // Nothing but the pending tasks holds the event loop here.
      const r = await Promise.all([pool.run('spin', [300]), pool.run('add', [40, 2])]);
      await pool.close();
      console.log(JSON.stringify(r));
    `;
    const file = join(mkdtempSync(join(tmpdir(), 'ng-pool-script-')), 'script.mjs');
    writeFileSync(file, script);
    const run = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 20_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(['done', 42]);
  });
});
