/**
 * Worker modules are named by their source file (`new URL('./src/worker.ts', import.meta.url)`)
 * whether the caller runs from source or compiled from dist/: one rule (compiledPath) finds the
 * compiled module in both cases.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { compiledPath } from '@nemo-gym/core/workers';
import { WorkerPool } from '@nemo-gym/core/workers';

const pkg = mkdtempSync(join(tmpdir(), 'ng-worker-module-'));
writeFileSync(join(pkg, 'package.json'), '{"type": "module"}');
mkdirSync(join(pkg, 'src'));
mkdirSync(join(pkg, 'dist', 'src'), { recursive: true });
writeFileSync(join(pkg, 'src', 'task.ts'), 'export function twice(n: number): number { return 2 * n; }\n');
writeFileSync(join(pkg, 'dist', 'src', 'task.js'), 'export function twice(n) { return 2 * n; }\n');
const fromSource = pathToFileURL(join(pkg, 'src', 'task.ts'));
const fromDist = pathToFileURL(join(pkg, 'dist', 'src', 'task.ts')); // what new URL('./src/task.ts', <dist/app.js>) gives

afterAll(() => rmSync(pkg, { recursive: true, force: true }));

describe('worker modules named by their source file', () => {
  it('compiledPath finds the compiled module from the source and from dist/', () => {
    const compiled = join(pkg, 'dist', 'src', 'task.js');
    expect(compiledPath(fromSource)).toBe(compiled);
    expect(compiledPath(fromDist)).toBe(compiled);
    expect(compiledPath(pathToFileURL(join(pkg, 'dist', 'src', 'other.ts')))).toBeNull();
  });

  it('a pool given the .ts name from dist/ runs its tasks in workers and inline', async () => {
    const threaded = new WorkerPool(fromDist, { size: 1 });
    const inline = new WorkerPool(fromDist, { size: 0 });
    try {
      expect(threaded.threaded).toBe(true);
      expect(await threaded.run<number>('twice', [21])).toBe(42);
      expect(inline.threaded).toBe(false);
      expect(await inline.run<number>('twice', [4])).toBe(8);
    } finally {
      await threaded.close();
      await inline.close();
    }
  });
});
