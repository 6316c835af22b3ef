/**
 * The three harness CLIs at their pinned versions, as a user runs them: `ng-run` with openai_model
 * (in front of a scripted model on 127.0.0.1), coding_repo and one harness_agent per preset, then
 * `ng-collect-rollouts` over coding_repo's five example rows. The scripted model makes each
 * harness run the row's fix through its own shell tool; coding_repo scores the work folder's diff.
 * All three reach the model through openai_model's per-rollout routes: Codex with streaming
 * Responses, OpenCode with streaming Chat Completions, Claude Code with streaming Anthropic
 * Messages (`/v1/messages`, mapped onto the Responses call openai_model makes). Capture is on (the
 * default); openai_model's backend gives no token ids, so each row is scored, kept, and masked with
 * that reason, its response rebuilt from the harness's own events.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonl } from '@nemo-gym/core/testing';
import { runCommand, startStack, type Stack } from '../../../tests/helpers/stack.js';
import { PRESETS } from '../src/presets.js';
import { startStubModel, type StubModel } from '../src/stub_model.js';
import { EXAMPLE, fixingScript, processesWith, rows } from './helpers.js';

const installed = (['codex', 'claude_code', 'opencode'] as const).every((p) => PRESETS[p].binary() !== null);
if (!installed) console.log('skipping harness CLI end-to-end: the pinned CLIs are not installed (pnpm install)');

const CANARY = 'sk-canary-policy-key-2f9c41';
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const HANG_MARKER = 'ng-e2e-hang-marker-9a41';
const AGENTS = { codex: 'coding_repo_harness_agent', opencode: 'harness_opencode', claude_code: 'harness_claude_code' } as const;

describe.skipIf(!installed)('harness CLIs through ng-run and ng-collect-rollouts', () => {
  let model: StubModel;
  let stack: Stack;
  let dir: string;
  const results: Record<string, Array<Record<string, any>>> = {};
  let hang: { code: number | null; output: string; failures: Array<Record<string, any>> };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ng-harness-e2e-'));
    model = await startStubModel(fixingScript);
    const agentsYaml = join(dir, 'agents.yaml');
    const block = (name: string, preset: string, extra: string[] = []) => [
      `${name}:`,
      '  responses_api_agents:',
      '    harness_agent:',
      '      entrypoint: app.ts',
      '      resources_server: {type: resources_servers, name: coding_repo}',
      '      model_server: {type: responses_api_models, name: policy_model}',
      `      preset: ${preset}`,
      '      timeout_s: 120',
      '      concurrency: 5',
      ...extra.map((l) => `      ${l}`),
    ];
    const hangAgent = block('harness_hang', 'generic', ['command: /usr/bin/python3', `args: [${join(FIXTURES, 'fake_harness.py')}, hang, ${HANG_MARKER}]`, `readable_paths: [${FIXTURES}]`]).map((l) => l.replace('timeout_s: 120', 'timeout_s: 2'));
    writeFileSync(agentsYaml, [...block(AGENTS.opencode, 'opencode'), ...block(AGENTS.claude_code, 'claude_code'), ...hangAgent, ''].join('\n'));
    stack = await startStack([
      `+config_paths=[responses_api_models/openai_model/configs/openai_model.yaml,resources_servers/coding_repo/configs/coding_repo.yaml,${agentsYaml}]`,
      `+policy_base_url=${model.url}/v1`,
      `+policy_api_key=${CANARY}`,
      '+policy_model_name=scripted-policy',
      `++${AGENTS.codex}.responses_api_agents.harness_agent.timeout_s=120`,
    ]);
    for (const [preset, agent] of Object.entries(AGENTS)) {
      const output = join(dir, `${preset}.jsonl`);
      const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, `+agent_name=${agent}`, `+input_jsonl_fpath=${EXAMPLE}`, `+output_jsonl_fpath=${output}`]);
      expect(r.code, `${preset}: ${r.stderr}\n${stack.output().slice(-4000)}`).toBe(0);
      results[preset] = readJsonl(output) as Array<Record<string, any>>;
    }
    const one = join(dir, 'one.jsonl');
    writeFileSync(one, `${JSON.stringify(rows()[0])}\n`);
    const hangOut = join(dir, 'hang.jsonl');
    const h = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, '+agent_name=harness_hang', `+input_jsonl_fpath=${one}`, `+output_jsonl_fpath=${hangOut}`]);
    const failuresPath = join(dir, 'hang_failures.jsonl');
    hang = { code: h.code, output: existsSync(hangOut) ? readFileSync(hangOut, 'utf8') : '', failures: existsSync(failuresPath) ? (readJsonl(failuresPath) as Array<Record<string, any>>) : [] };
  }, 300_000);

  afterAll(async () => {
    await stack?.stop('SIGTERM');
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each(Object.keys(AGENTS))('%s fixes all five example repositories: reward 1.0 each, from the diff', (preset) => {
    const out = results[preset]!;
    expect(out).toHaveLength(5);
    for (const row of out) {
      expect(row.reward, `${row.id}: ${row.test_output}`).toBe(1);
      expect(row.harness.preset).toBe(preset);
      expect(row.harness.patch).toMatch(/^diff --git a\//);
      expect(row.changed_files).toHaveLength(1);
      // The response is rebuilt from the harness's own events: the shell call, its output, the answer.
      const types = row.response.output.map((o: any) => o.type);
      expect(types).toEqual(['function_call', 'function_call_output', 'message']);
      expect(row.response.output[0].arguments).toContain('sed -i');
      expect(row.harness.final_text).toBe('Fixed; the tests pass now.');
      expect(row.response.metadata.trajectory_source).toBe('harness_events');
    }
    expect(out.map((r) => r.id).sort()).toEqual(rows().map((r) => r.id).sort());
  });

  it('all three went through openai_model (policy key added there, Claude Code\'s Messages as Responses calls); the harnesses only ever held a dummy key', () => {
    const byDialect = (d: string) => model.calls.filter((c) => c.dialect === d);
    // Codex's and Claude Code's calls reach the scripted model as Responses calls, OpenCode's as Chat Completions.
    expect(byDialect('responses').length).toBeGreaterThanOrEqual(20);
    expect(byDialect('chat').length).toBeGreaterThanOrEqual(10);
    expect(byDialect('messages')).toHaveLength(0);
    for (const c of model.calls) expect(c.headers.authorization).toBe(`Bearer ${CANARY}`);
    for (const out of Object.values(results)) expect(JSON.stringify(out)).not.toContain(CANARY);
  });

  it.each([
    ['codex', '/v1/responses'],
    ['opencode', '/v1/chat/completions'],
    ['claude_code', '/v1/messages'],
  ])('%s: captured under its rollout id on %s; no token ids from openai_model, so the row is kept, masked, and says why', (preset, route) => {
    for (const row of results[preset]!) {
      expect(row.harness.rollout_id).toBe(`${row._ng_task_index}-${row._ng_rollout_index}`);
      expect(row.mask_sample).toBe(true);
      expect(row.failure_reason).toMatch(/call\(s\) have no token ids/);
      expect(row.failure_reason).toContain(`(${route})`);
      expect(row.harness.trajectory.metrics.calls).toBeGreaterThanOrEqual(2);
      expect(row.harness.trajectory.metrics.calls_without_token_ids).toBe(row.harness.trajectory.metrics.calls);
    }
  });

  it('a harness that hangs is killed at timeout_s and recorded as a failed rollout (class timeout), not a reward 0', () => {
    expect(hang.output.trim()).toBe('');
    expect(hang.failures).toHaveLength(1);
    expect(hang.failures[0]!.reason).toContain('NG_ERR_HARNESS');
    expect(hang.failures[0]!.reason).toContain('timed out after 2 s');
    expect(hang.failures[0]!.reason_class).toBe('timeout');
    expect(processesWith(HANG_MARKER)).toEqual([]);
  });
});
