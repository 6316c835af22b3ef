import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '@nemo-gym/core/config';

/** D-F, H, M, N, P, Q, R: the component benchmarks, each run in its own process as its module documents. */
export async function sectionExtras(want: (...letters: string[]) => boolean): Promise<void> {
  const root = repoRoot();
  const runs: [string, string, string[]][] = [
    ['D. vllm_model overhead per call vs calling the stub directly', 'packages/bench/dist/src/sections/d-vllm-overhead.js', ['--rounds', '3']],
    ['E. instruction_following verify at 256 concurrent requests', 'packages/bench/dist/src/sections/e-instruction-following.js', ['--concurrency', '256', '--requests', '3000', '--seconds', '20']],
    ['F. math-verify answer checks', 'packages/bench/dist/src/sections/f-math-verify.js', ['5']],
    ['H. workbench verify at 256 concurrent requests (example rows)', 'packages/bench/dist/src/sections/h-workbench.js', ['--concurrency', '256', '--requests', '3000', '--seconds', '20']],
    ['M. mini_swe_agent: 16 concurrent episodes against concurrency 4 (live sandboxes)', 'packages/bench/dist/src/sections/m-mini-swe-agent.js', ['--episodes', '16', '--concurrency', '4']],
    ['N. vllm_model, one 64-turn rollout with token ids: bytes to vLLM and CPU per call by token_id_forwarding mode', 'packages/bench/dist/src/sections/n-vllm-turns.js', ['--turns', '64', '--rounds', '4']],
    ['P. token capture + trajectory assembly per model call (vllm_model, 8-call harness rollouts) beside the same calls without capture', 'packages/bench/dist/src/sections/p-vllm-capture.js', ['--rounds', '5']],
    ['Q. harness_agent: 256 concurrent harness rollouts, a stub command making 8 model calls each (leaked processes and folders)', 'packages/bench/dist/src/sections/q-harness-agent.js', ['--rollouts', '256', '--calls', '8', '--concurrency', '256']],
    ['R. ng-viewer on a 200,000-row rollouts file: indexing, heap, and each API answer the page asks for', 'packages/bench/dist/src/sections/r-viewer.js', ['--rows', '200000']],
  ];
  for (const [title, script, args] of runs) {
    if (!want(title[0]!)) continue;
    console.log(`\n== ${title} ==`);
    const proc = spawn(process.execPath, [join(root, script), ...args], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    const code = await new Promise<number | null>((r) => proc.once('exit', r));
    if (code !== 0) console.log(`(${script} exited with ${code})`);
  }
}

