import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TimeoutError, WorkerPool } from '@nemo-gym/core';

function taskModule(source: string): URL {
  const dir = mkdtempSync(join(tmpdir(), 'ng-pool-'));
  const file = join(dir, 'tasks.mjs');
  writeFileSync(file, source);
  return pathToFileURL(file);
}

const TASKS = taskModule(`
import { threadId } from 'node:worker_threads';
export function add(a, b) { return a + b; }
export function thread() { return threadId; }
export function spin(ms) { const end = Date.now() + ms; while (Date.now() < end) {} return 'done'; }
export function fail() { throw new Error('nope'); }
`);

describe('WorkerPool', () => {
  it('runs exported functions in worker threads', async () => {
    const pool = new WorkerPool(TASKS, { size: 2 });
    expect(pool.threaded).toBe(true);
    expect(await pool.run('add', [2, 3])).toBe(5);
    expect(await pool.run('thread')).not.toBe(0);
    await pool.close();
  });

  it('stops a task past its time limit and keeps serving', async () => {
    const pool = new WorkerPool(TASKS, { size: 1, taskTimeoutMs: 300 });
    await expect(pool.run('spin', [5000])).rejects.toBeInstanceOf(TimeoutError);
    expect(await pool.run('add', [1, 1])).toBe(2);
    await pool.close();
  });

  it('reports errors thrown by a task', async () => {
    const pool = new WorkerPool(TASKS, { size: 1 });
    await expect(pool.run('fail')).rejects.toThrow(/nope/);
    await expect(pool.run('missing')).rejects.toThrow(/no exported function missing/);
    await pool.close();
  });

  it('fails waiting tasks when the module cannot load, instead of respawning forever', async () => {
    const broken = taskModule(`import 'node:does-not-exist'; export const x = 1;`);
    const pool = new WorkerPool(broken, { size: 2 });
    await expect(pool.run('x')).rejects.toThrow(/could not start/);
    await pool.close();
  });
});
