/**
 * Concurrent episodes against the concurrency bound.
 *
 *   pnpm build && node packages/bench/dist/src/sections/m-mini-swe-agent.js [--episodes 16] [--concurrency 4]
 *
 * A scripted chat-completions stub on 127.0.0.1 plays the model (read the file, fix the bug,
 * submit); every episode is a real sandboxed checkout of the example repository with a real
 * pytest evaluation. All episodes are posted to /run at once. Reported: rewards, wall time, and the
 * peak number of live episode sandboxes (sampled every 5 ms and the sandbox's own peak counter),
 * which must not exceed `concurrency`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { globalConfigFor, startStubServer, startTestServer } from '@nemo-gym/core/testing';
import { importBuilt } from '../built.js';
import { numberArg } from '../load.js';

const { server } = await importBuilt<typeof import('../../../../responses_api_agents/mini_swe_agent/app.js')>('responses_api_agents/mini_swe_agent/dist/app.js');
// The example repository generator of mini_swe_resource.
const { makeExampleRepo } = await importBuilt<{ makeExampleRepo: (dir: string) => Record<string, unknown>[] }>('resources_servers/mini_swe_resource/dist/src/example_repo.js');

const EPISODES = numberArg('episodes', 16);
const CONCURRENCY = numberArg('concurrency', 4);

const block = (cmd: string) => `THOUGHT: next.\n\n\`\`\`bash\n${cmd}\n\`\`\``;
const SCRIPT = [block('cat calc/ops.py'), block(`sed -i '2s/a - b/a + b/' calc/ops.py`), block('echo MINI_SWE_AGENT_FINAL_OUTPUT && git add -A && git diff --cached')];

const root = mkdtempSync(join(tmpdir(), 'ng-swe-bench-'));
const rows = makeExampleRepo(join(root, 'pycalc'));
const model = await startStubServer({
  '/v1/chat/completions': (req) => {
    const step = (req.body.messages as { role: string }[]).filter((m) => m.role === 'assistant').length;
    return { json: { choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: SCRIPT[Math.min(step, SCRIPT.length - 1)] } }] } };
  },
});
const agent = await startTestServer(server, {
  config: {
    name: 'mini_swe_bench',
    model_server: { type: 'responses_api_models', name: 'policy_model' },
    env: 'local',
    concurrency: CONCURRENCY,
    step_timeout: 30,
    eval_timeout: 120,
    repo_path_template: join(root, '{repo_name}'),
    results_dir: join(root, 'results'),
  },
  globalConfig: { policy_model_name: 'bench', ...globalConfigFor({ policy_model: { kind: 'responses_api_models', impl: 'stub', port: model.port } }) },
});
const state = agent.context.state as { sandbox: { stats(): { liveSessions: number; maxLive: number } } };
let sampledMax = 0;
const sampler = setInterval(() => {
  sampledMax = Math.max(sampledMax, state.sandbox.stats().liveSessions);
}, 5);
const t0 = performance.now();
const outs = await Promise.all(
  Array.from({ length: EPISODES }, (_, i) => agent.post('/run', { ...rows[0], instance_id: `NeMo-Gym__pycalc-1-bench${i}` })),
);
const wallS = (performance.now() - t0) / 1000;
clearInterval(sampler);
const rewards = outs.map((o) => o.json.reward as number);
const stats = state.sandbox.stats();
console.log(`${EPISODES} episodes, concurrency ${CONCURRENCY}: wall ${wallS.toFixed(1)} s, rewards ${rewards.filter((r) => r === 1).length}/${EPISODES} = 1.0`);
console.log(`live episode sandboxes: peak ${stats.maxLive} (sampled peak ${sampledMax}); bound ${CONCURRENCY}: ${stats.maxLive <= CONCURRENCY ? 'kept' : 'EXCEEDED'}; live after: ${stats.liveSessions}`);
await agent.close();
await model.close();
rmSync(root, { recursive: true, force: true });
if (stats.maxLive > CONCURRENCY || rewards.some((r) => r !== 1)) process.exitCode = 1;
