import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '@nemo-gym/core/config';

/** O: the Python package's run_examples beside ng-collect-rollouts, same stack and stub (python/bench-python-surface.py). */
export async function sectionPython(n: number, c: number): Promise<void> {
  console.log(`\n== O. Python run_examples vs ng-collect-rollouts: ${n} rollouts per round at ${c} in flight, same stack and stub ==`);
  const proc = spawn('python3', [join(repoRoot(), 'packages', 'bench', 'python', 'bench-python-surface.py'), '--rollouts', String(n), '--concurrency', String(c)], { cwd: repoRoot(), stdio: ['ignore', 'inherit', 'inherit'] });
  const code = await new Promise<number | null>((r) => {
    proc.once('exit', r);
    proc.once('error', () => r(null));
  });
  if (code !== 0) console.log(`(python3 packages/bench/python/bench-python-surface.py exited with ${code})`);
}

