/**
 * The three harness CLIs at their pinned versions, as a user runs them: `ng-run` with openai_model
 * (in front of a scripted model on 127.0.0.1), coding_repo and one harness_agent per preset, then
 * `ng-collect-rollouts` over coding_repo's five example rows. The scripted model makes each
 * harness run the row's fix through its own shell tool; coding_repo scores the work folder's diff.
 * Codex (streaming Responses) and OpenCode (streaming Chat Completions) reach the model through
 * openai_model; Claude Code talks Anthropic Messages, which our model servers do not serve yet, so
 * its agent is pointed at the scripted model directly (`model_base_url`).
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
    writeFileSync(agentsYaml, [...block(AGENTS.opencode, 'opencode'), ...block(AGENTS.claude_code, 'claude_code', [`model_base_url: ${model.url}`]), ...hangAgent, ''].join('\n'));
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
    }
    expect(out.map((r) => r.id).sort()).toEqual(rows().map((r) => r.id).sort());
  });

  it('codex and opencode went through openai_model (policy key added there); the harnesses only ever held a dummy key', () => {
    const byDialect = (d: string) => model.calls.filter((c) => c.dialect === d);
    expect(byDialect('responses').length).toBeGreaterThanOrEqual(10);
    expect(byDialect('chat').length).toBeGreaterThanOrEqual(10);
    expect(byDialect('messages').length).toBeGreaterThanOrEqual(10);
    for (const c of [...byDialect('responses'), ...byDialect('chat')]) expect(c.headers.authorization).toBe(`Bearer ${CANARY}`);
    for (const c of byDialect('messages')) {
      expect(String(c.headers['x-api-key'])).toMatch(/^ng-harness-[0-9a-f]{24}$/);
      expect(JSON.stringify(c.headers)).not.toContain(CANARY);
    }
    for (const out of Object.values(results)) expect(JSON.stringify(out)).not.toContain(CANARY);
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
