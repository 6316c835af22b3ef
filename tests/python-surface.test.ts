/**
 * The Python import surface (`nemo_gym/` at the repo root) that NeMo-RL and VeRL use, tested in
 * Python: each module under tests/python runs with `python3 -m unittest` (standard library only,
 * PYTHONPATH=<repo>, a tiny omegaconf stand-in for the DictConfig the callers pass), against the
 * real stack started by the package's RunHelper. The modules' summary lines are printed; a failure
 * shows the whole output.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireBuild, ROOT } from './helpers/stack.js';

const DIR = join(ROOT, 'tests', 'python');
const probe = spawnSync('python3', ['-c', 'import sys; print(sys.version_info >= (3, 10))'], { encoding: 'utf8' });
const havePython = probe.status === 0 && probe.stdout.trim() === 'True';
if (!havePython) console.log('python surface tests skipped: python3 >= 3.10 is not on PATH');

function runModule(module: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('python3', ['-m', 'unittest', '-v', module], {
      cwd: DIR,
      env: { ...process.env, PYTHONPATH: [ROOT, join(DIR, 'stubs')].join(':'), NEMO_GYM_QUIET: '1', NEMO_GYM_ROOT: '', PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const SUMMARY = /(nemo-rl caller:|verl caller:|dead backends \(|first: POST|bad config:|poll: |SIGKILL of the parent|4096 rows at|cancel 32 of 64|later run_examples:|consumer cancelled|editable install|hung backend:|start-up deadline:|group verify)/;

describe.skipIf(!havePython)('nemo_gym Python package', () => {
  const modules: [string, number][] = [
    ['test_units', 60_000],
    ['test_nemo_rl_caller', 90_000],
    ['test_verl_caller', 90_000],
    ['test_failures', 120_000],
    ['test_lifecycle', 90_000],
    ['test_scale', 90_000],
    ['test_cancellation', 90_000],
    ['test_group_verify', 90_000],
  ];
  for (const [module, timeoutMs] of modules) {
    it(module, async () => {
      requireBuild();
      const { code, output } = await runModule(module, timeoutMs - 5000);
      // unittest -v writes a test's own output after its name, on the same line.
      const lines = output.split('\n').flatMap((l) => {
        const m = SUMMARY.exec(l);
        return m ? [l.slice(m.index)] : [];
      });
      if (lines.length) console.log(`${module}:\n${lines.map((l) => `  ${l.slice(0, 400)}`).join('\n')}`);
      expect(code, output.slice(-8000)).toBe(0);
    }, timeoutMs);
  }
});
