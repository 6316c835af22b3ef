/**
 * Many harness rollouts at once, and what they leave behind.
 *
 *   pnpm build && node packages/bench/dist/src/sections/q-harness-agent.js [--rollouts 256] [--calls 8] [--concurrency 256] [--capture]
 *
 * With `--capture`, the harness reaches a real model server instead: vllm_model (token ids on, as for
 * training) in front of a stub vLLM that answers with inline ids chaining by prefix, through the
 * per-rollout routes, so every call is captured and each rollout's response is its rebuilt
 * trajectory. The stand-in then runs an append-only tool loop of `calls` tool calls and a final
 * answer; reported as well: rows whose response carries token ids (must be all) and masked rows
 * (must be none).
 *
 * harness_agent (generic preset) runs a stand-in harness (tests/fixtures/fake_harness.py) that
 * makes `calls` chat completions through the agent's model proxy to a scripted model on 127.0.0.1,
 * then fixes coding_repo's first example row; coding_repo runs the row's tests on the diff. All
 * rollouts are posted to /run at once. Reported: rewards and failures, wall time, model calls seen
 * by the model, the peak of live harness sandboxes, and, after the last answer, processes of the
 * stand-in still alive and work folders still on disk (both must be 0).
 */
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@nemo-gym/core/config';
import { globalConfigFor, readJsonl, startTestServer } from '@nemo-gym/core/testing';
import { importBuilt } from '../built.js';
import { startStubVllm } from '../stub-vllm.js';

const HARNESS = 'responses_api_agents/harness_agent';
const { server } = await importBuilt<typeof import('../../../../responses_api_agents/harness_agent/app.js')>(`${HARNESS}/dist/app.js`);
const { processesWith } = await importBuilt<typeof import('../../../../responses_api_agents/harness_agent/src/processes.js')>(`${HARNESS}/dist/src/processes.js`);
const { startStubModel } = await importBuilt<typeof import('../../../../responses_api_agents/harness_agent/src/stub_model.js')>(`${HARNESS}/dist/src/stub_model.js`);

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const ROLLOUTS = arg('rollouts', 256);
const CALLS = arg('calls', 8);
const CONCURRENCY = arg('concurrency', 256);
const CAPTURE = process.argv.includes('--capture');

const root = repoRoot();
const { server: codingRepo } = await importBuilt<typeof import('../../../../resources_servers/coding_repo/app.js')>('resources_servers/coding_repo/dist/app.js');
const fixtures = join(root, 'responses_api_agents/harness_agent/tests/fixtures');
const marker = `ng-harness-bench-${process.pid}`;
const row = (readJsonl(join(root, 'resources_servers/coding_repo/data/example.jsonl')) as Array<Record<string, unknown>>)[0]!;

function workFolders(): number {
  let n = 0;
  for (const r of readdirSync(tmpdir()).filter((x) => x.startsWith(`ng-harness-${process.pid}-`))) n += readdirSync(join(tmpdir(), r)).length;
  return n;
}

const model = CAPTURE ? null : await startStubModel(() => ({ text: 'ok' }));
const vllm = CAPTURE ? await startStubVllm({ toolTurns: CALLS }) : null;
const { server: vllmModel } = await importBuilt<typeof import('../../../../responses_api_models/vllm_model/app.js')>('responses_api_models/vllm_model/dist/app.js');
const policy = vllm
  ? await startTestServer(vllmModel, {
      config: { name: 'policy_model', base_url: vllm.url, api_key: 'k', model: 'm', return_token_id_information: true, uses_reasoning_parser: false, request_inline_token_ids: true, health_check_interval_s: 0 },
      listen: true,
    })
  : null;
const repo = await startTestServer(codingRepo, { config: { name: 'coding_repo', domain: 'coding', num_processes: 4 }, listen: true });
const agent = await startTestServer(server, {
  config: {
    name: 'harness',
    resources_server: { type: 'resources_servers', name: 'coding_repo' },
    model_server: { type: 'responses_api_models', name: 'policy_model' },
    preset: 'generic',
    command: '/usr/bin/python3',
    args: [join(fixtures, 'fake_harness.py'), CAPTURE ? 'agent' : 'calls', String(CALLS), marker],
    readable_paths: [fixtures],
    ...(model ? { model_base_url: model.url } : {}),
    concurrency: CONCURRENCY,
    timeout_s: 300,
  },
  globalConfig: globalConfigFor({
    coding_repo: { kind: 'resources_servers', impl: 'coding_repo', port: repo.port },
    ...(policy ? { policy_model: { kind: 'responses_api_models', impl: 'vllm_model', port: policy.port } } : {}),
  }) as never,
  listen: true,
});
const provider = (agent.context.state as { sandbox: { provider: string } }).sandbox.provider;
console.log(`harness_agent bench: ${ROLLOUTS} rollouts, ${CALLS} model calls each, concurrency ${CONCURRENCY}, sandbox ${provider}`);

let peak = 0;
const sampler = setInterval(() => {
  const s = (agent.context.state as { sandbox: { stats(): { liveSessions: number } } }).sandbox.stats();
  peak = Math.max(peak, s.liveSessions);
}, 20);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const answers = await Promise.all(Array.from({ length: ROLLOUTS }, (_, i) => agent.post('/run', { ...row, _ng_task_index: 0, _ng_rollout_index: i })));
const wall = (performance.now() - t0) / 1000;
clearInterval(sampler);
const cpu = process.cpuUsage(cpu0);
const ok = answers.filter((a) => a.status === 200);
const rewards = ok.filter((a) => a.json.reward === 1).length;
const failures = answers.filter((a) => a.status !== 200);
const calls = model ? model.calls.length : vllm!.calls();
const expectedCalls = ROLLOUTS * (CAPTURE ? CALLS + 1 : CALLS);
const withIds = ok.filter((a) => JSON.stringify(a.json.response ?? {}).includes('"generation_token_ids":[')).length;
const masked = ok.filter((a) => a.json.mask_sample === true);
// Give the kernel a moment to reap what was killed, then look for leftovers.
await new Promise((r) => setTimeout(r, 500));
const leakedProcs = processesWith(marker).length;
const leakedDirs = workFolders();
console.log(`rewards 1.0: ${rewards}/${ROLLOUTS}; failures: ${failures.length}${failures.length ? ` (first: ${failures[0]!.text.slice(0, 300)})` : ''}`);
console.log(`wall ${wall.toFixed(1)} s (${(ROLLOUTS / wall).toFixed(1)} rollouts/s); agent process CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s`);
console.log(`model calls seen by the model: ${calls} (expected ${expectedCalls}); peak live harness sandboxes: ${peak} (limit ${CONCURRENCY})`);
if (CAPTURE) {
  console.log(`captured: ${withIds}/${ok.length} rows carry the rebuilt trajectory's token ids; masked ${masked.length}${masked.length ? ` (first: ${String(masked[0]!.json.failure_reason).slice(0, 200)})` : ''}`);
}
console.log(`after the last answer: ${leakedProcs} stand-in harness processes alive, ${leakedDirs} work folders on disk`);
await agent.close();
await repo.close();
await model?.close();
await policy?.close();
await vllm?.close();
const bad = rewards !== ROLLOUTS || calls !== expectedCalls || leakedProcs !== 0 || leakedDirs !== 0 || peak > CONCURRENCY || (CAPTURE && (withIds !== ROLLOUTS || masked.length !== 0));
process.exit(bad ? 1 : 0);
