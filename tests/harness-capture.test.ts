/**
 * harness_agent with token capture, end to end: a stand-in harness (the `generic` preset running
 * tests/fixtures/fake_harness.py in `agent` mode: a Chat Completions tool loop, like a real harness
 * CLI) talks to vllm_model through `/ng-rollout/<rollout_id>/v1` in front of the trainer's vLLM
 * stand-in (real Qwen3 tokenizer and chat template); ng-collect-rollouts' engine sends the rows, so
 * the rollout ids are the collector's (`<task>-<repeat>`). After the harness exits the agent reads
 * the rollout's trajectory from vllm_model and puts it in the response. A harness that keeps its
 * history append-only gives one chain that passes NeMo-RL's contiguity walk; one that compacts its
 * history gives a row that is scored, kept, and masked with the builder's reason. A harness that
 * crashes after its calls is a recorded failure, and its capture is dropped at once.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { collectRollouts } from '@nemo-gym/core/rollouts';
import { globalConfigFor, readJsonl } from '@nemo-gym/core/testing';
import { nemoRlContiguity, startTrainerVllm, type Json as StandinJson, type PolicyContext, type ScriptedTurn, type TrainerVllm } from '@nemo-gym/trainer-vllm';
import { server as vllmModel } from '../responses_api_models/vllm_model/app.js';
import { inProcessStack, rows, type InProcess } from '../responses_api_agents/harness_agent/tests/helpers.js';

type Json = Record<string, any>;

const FIXTURES = new URL('../responses_api_agents/harness_agent/tests/fixtures/', import.meta.url).pathname;
/** Tool calls the stand-in harness makes before its answer. */
const TOOL_CALLS = 3;

/** The policy: a `run` tool call per turn until TOOL_CALLS results are back (after a compaction: one), then an answer. */
function policy(ctx: PolicyContext): ScriptedTurn {
  const messages = ctx.messages as Json[];
  const done = messages.filter((m) => m.role === 'tool').length;
  const compacted = messages.some((m) => m.role === 'user' && String(m.content).includes('[compacted]'));
  if (done >= TOOL_CALLS || (compacted && done >= 1)) return { reasoning: 'The tests should pass now.', content: 'Fixed calc.py.' };
  return { reasoning: `Step ${done + 1}: look around.`, toolCalls: [{ name: 'run', arguments: { cmd: `ls ${done}` }, argumentsText: `{"cmd": "ls ${done}"}` }] };
}

const hasDebianPython = existsSync('/usr/bin/python3');

describe.skipIf(!hasDebianPython)('harness_agent: the response from vllm_model\'s token capture', () => {
  let standin: TrainerVllm;
  let closeModel: () => Promise<void>;
  let stack: InProcess;
  let client: ServerClient;
  let dir: string;
  let modelUrl = '';
  let out: Json[] = [];
  let failures: Json[] = [];

  beforeAll(async () => {
    standin = await startTrainerVllm({ policy, reasoningParser: true });
    const app = await vllmModel.build({
      config: {
        name: 'policy_model', base_url: standin.url, api_key: 'dummy', model: 'Qwen/Qwen3-8B', return_token_id_information: true,
        uses_reasoning_parser: true, request_prompt_and_generation_token_ids: false, health_check_interval_s: 0,
      },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const modelPort = (app.server.address() as AddressInfo).port;
    modelUrl = `http://127.0.0.1:${modelPort}`;
    closeModel = () => app.close();
    stack = await inProcessStack(
      { preset: 'generic', command: '/usr/bin/python3', args: [join(FIXTURES, 'fake_harness.py'), 'agent', String(TOOL_CALLS)], readable_paths: [FIXTURES], model: 'Qwen/Qwen3-8B', concurrency: 4 },
      globalConfigFor({ policy_model: { kind: 'responses_api_models', impl: 'vllm_model', port: modelPort } }),
    );
    client = new ServerClient({ globalConfig: globalConfigFor({ harness: { kind: 'responses_api_agents', impl: 'harness_agent', port: stack.agent.port } }) });
    dir = mkdtempSync(join(tmpdir(), 'ng-harness-capture-'));
    const calc = rows()[0]!;
    const input = join(dir, 'in.jsonl');
    // Task 0 keeps its history; task 1 compacts it after the second call; task 2 crashes after its calls.
    const tasks = [calc, { ...calc, instruction: `${calc.instruction} [compact]` }, { ...calc, instruction: `${calc.instruction} [crash]` }];
    writeFileSync(input, tasks.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const output = join(dir, 'out.jsonl');
    const summary = await collectRollouts({ client, inputPath: input, outputPath: output, agentName: 'harness', concurrency: 4, numRepeats: 2 });
    expect(summary, JSON.stringify(summary)).toMatchObject({ written: 4, failed: 2 });
    out = readJsonl(output) as Json[];
    failures = readFileSync(summary.failuresPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
    const line = (r: Json) => `${r._ng_task_index}-${r._ng_rollout_index}: reward ${r.reward}, source ${r.response.metadata.trajectory_source}, chains ${r.harness.trajectory?.chains}, mask ${r.mask_sample ?? false}`;
    console.log(`harness rollouts with capture (vllm_model + stand-in):\n  ${out.map(line).join('\n  ')}`);
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await stack?.close();
    await closeModel?.();
    await standin?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the harness reached vllm_model under the collector\'s rollout ids; every row is scored', () => {
    expect(out).toHaveLength(4);
    for (const r of out) {
      expect(r.reward, r.test_output).toBe(1);
      expect(r.harness.rollout_id).toBe(`${r._ng_task_index}-${r._ng_rollout_index}`);
      expect(r.response.metadata.rollout_id).toBe(r.harness.rollout_id);
    }
  });

  it('an append-only harness history: one chain of every call, token ids on each generation, contiguous for NeMo-RL', () => {
    const kept = out.filter((r) => r._ng_task_index === 0);
    expect(kept).toHaveLength(2);
    for (const r of kept) {
      expect(r.mask_sample, r.failure_reason).toBeUndefined();
      expect(r.response.metadata.trajectory_source).toBe('capture_prefix_merging');
      expect(r.harness.trajectory).toMatchObject({ chains: 1, quarantined: 0, metrics: { calls: TOOL_CALLS + 1, calls_without_token_ids: 0, delivered_fraction: 1 } });
      const generations = (r.response.output as Json[]).filter((i) => Array.isArray(i.generation_token_ids) && i.generation_token_ids.length > 0);
      expect(generations).toHaveLength(TOOL_CALLS + 1);
      expect(nemoRlContiguity(r.response.output as StandinJson[])).toEqual({ ok: true, turns: TOOL_CALLS + 1 });
      // The rebuilt items are the model's own: its run calls, then the answer.
      expect((r.response.output as Json[]).filter((i) => i.type === 'function_call').map((i) => i.name)).toEqual(Array(TOOL_CALLS).fill('run'));
    }
  });

  it('a harness that rewrites its history: the row stays, scored, with mask_sample and the reason', () => {
    const compacted = out.filter((r) => r._ng_task_index === 1);
    expect(compacted).toHaveLength(2);
    for (const r of compacted) {
      expect(r.mask_sample).toBe(true);
      expect(r.failure_reason).toMatch(/new chain/);
      expect(r.harness.trajectory.chains).toBeGreaterThan(1);
      // Only the main chain is delivered, and it is still contiguous (for inspection, not training).
      expect(nemoRlContiguity(r.response.output as StandinJson[]).ok).toBe(true);
    }
  });

  it('the trajectory request released each capture on the model server', async () => {
    for (const r of out) expect((await fetch(`${modelUrl}/ng-rollout/${r.harness.rollout_id}/capture`)).status).toBe(404);
  });

  it('a harness that crashes after its model calls is a recorded failure, and its capture is dropped at once', async () => {
    expect(failures.map((f) => [f._ng_task_index, f.reason_class]).sort()).toEqual([
      [2, expect.any(String)],
      [2, expect.any(String)],
    ]);
    for (const f of failures) expect(f.reason).toMatch(/NG_ERR_HARNESS[\s\S]*exited with code 3/);
    // It did reach the model (every call of its loop), under its own rollout ids…
    const crashCalls = standin.calls.filter((c) => JSON.stringify(c.body).includes('[crash]'));
    expect(crashCalls.length).toBe(2 * (TOOL_CALLS + 1));
    // …and nothing of those rollouts is held on the model server any more.
    for (const id of ['2-0', '2-1']) expect((await fetch(`${modelUrl}/ng-rollout/${id}/capture`)).status).toBe(404);
  });
});
