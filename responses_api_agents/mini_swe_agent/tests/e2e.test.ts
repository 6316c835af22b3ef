/**
 * The whole stack as a user runs it: `ng-run` with vllm_model (token ids on), mini_swe_resource
 * and two mini_swe_agent instances (one with run_golden), a scripted vLLM backend on 127.0.0.1,
 * and `ng-collect-rollouts` over rows of the example repository made in a temporary folder.
 * Then an episode is cut off by killing the agent server: no process of it may survive.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { sharedPath } from '@nemo-gym/core/config';
import { isAlive, runCommand, startStack, type Stack } from '../../../tests/helpers/stack.js';
import { exampleRepo, havePytest, processesWith, scenarioRow, scriptedModel, type ExampleRepo, type ScriptedModel } from './helpers.js';

const RESOURCE = 'resources_servers/mini_swe_resource/configs/mini_swe_resource.yaml';
const VLLM = 'responses_api_models/vllm_model/configs/vllm_model_for_training.yaml';
const AGENT = 'mini_swe_simple_agent';
const KEY = `${AGENT}.responses_api_agents.mini_swe_agent`;

const ready = havePytest();
if (!ready) console.log('skipping mini_swe_agent end-to-end: /usr/bin/python3 cannot run pytest (apt-get install python3-pytest)');

const readJsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, any>);

const SCENARIOS = ['fix', 'break', 'never', 'malformed', 'hang', 'collapse'];

describe.skipIf(!ready)('mini_swe_agent through ng-run and ng-collect-rollouts', () => {
  let repo: ExampleRepo;
  let model: ScriptedModel;
  let stack: Stack;
  let rows: Record<string, Record<string, any>>;
  let client: ServerClient;

  beforeAll(async () => {
    repo = exampleRepo();
    model = await scriptedModel('/v1/chat/completions');
    const golden = join(repo.root, 'golden.yaml');
    writeFileSync(
      golden,
      [
        'mini_swe_golden_agent:',
        '  responses_api_agents:',
        '    mini_swe_agent:',
        '      entrypoint: app.ts',
        '      model_server: {type: responses_api_models, name: policy_model}',
        '      env: local',
        '      concurrency: 8',
        '      run_golden: true',
        `      repo_path_template: ${repo.template}`,
        `      results_dir: ${join(repo.root, 'results')}`,
        '',
      ].join('\n'),
    );
    stack = await startStack([
      `+config_paths=[${VLLM},${RESOURCE},${golden}]`,
      `+policy_base_url=${model.url}/v1`,
      '+policy_api_key=dummy',
      '+policy_model_name=scripted-policy',
      `++${KEY}.repo_path_template=${repo.template}`,
      // The test brings its own repository: the shipped config's example one is not made in the tree.
      '++mini_swe_resource_resources_server.resources_servers.mini_swe_resource.example_repo_path=null',
      `++${KEY}.results_dir=${join(repo.root, 'results')}`,
      `++${KEY}.step_timeout=2`,
      `++${KEY}.step_limit=6`,
      `++${KEY}.eval_timeout=60`,
    ]);
    client = await ServerClient.fromHeadServer({ host: '127.0.0.1', port: stack.headPort });
    const input = join(repo.root, 'input.jsonl');
    const goldenRows = repo.rows.map((r) => ({ ...r, agent_ref: { type: 'responses_api_agents', name: 'mini_swe_golden_agent' } }));
    writeFileSync(input, [...SCENARIOS.map((s) => scenarioRow(repo, s)), ...goldenRows].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const output = join(repo.root, 'rollouts.jsonl');
    const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, `+agent_name=${AGENT}`, `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${output}`]);
    expect(r.code, r.stderr + stack.output()).toBe(0);
    rows = Object.fromEntries(readJsonl(output).map((row) => [row.instance_id, row]));
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await stack?.stop('SIGTERM');
    await model?.close();
    repo?.cleanup();
  });

  const row = (scenario: string) => rows[`NeMo-Gym__pycalc-1-${scenario}`]!;
  const texts = (r: Record<string, any>) => r.response.output.map((o: any) => o.content[0].text as string);

  it('a fixing trajectory scores 1.0 with token ids (through vllm_model) on every assistant item', () => {
    const r = row('fix');
    expect(r.reward, JSON.stringify(r.metadata)).toBe(1);
    const assistant = r.response.output.filter((o: any) => o.role === 'assistant');
    expect(assistant).toHaveLength(4);
    for (const a of assistant) {
      expect(a.generation_token_ids.length).toBe(3);
      expect(a.generation_log_probs).toEqual([-0.5, -0.25, -0.125]);
      expect(a.prompt_token_ids.length).toBe(2);
    }
    expect(r.response.model).toBe('scripted-policy');
  });

  it('a patch that breaks a PASS_TO_PASS test scores 0.0', () => {
    const r = row('break');
    expect(r.reward).toBe(0);
    const ts = r.metadata.eval_report[r.instance_id].tests_status;
    expect(ts.FAIL_TO_PASS.success).toEqual(['tests/test_ops.py::test_add']);
    expect(ts.PASS_TO_PASS.failure).toEqual(['tests/test_ops.py::test_sub']);
  });

  it('a model that never submits is stopped at step_limit: 0.0 with the reason', () => {
    const r = row('never');
    expect(r.reward).toBe(0);
    expect(r.metadata.exit_status).toBe('LimitsExceeded');
    expect(r.response.output.filter((o: any) => o.role === 'assistant')).toHaveLength(6);
    expect(texts(r).at(-1)).toContain('step limit');
  });

  it('malformed replies get format-error turns, long output is cut to head and tail, and the fix still counts', () => {
    const r = row('malformed');
    const t = texts(r);
    expect(t[1]).toContain('0 were found');
    expect(t[3]).toContain('2 were found');
    expect(t[5]).toContain('<elided_chars>');
    expect(t[5]).toMatch(/<output_head>\n1\n2\n3\n/);
    expect(t[5]).toMatch(/3999\n4000\n<\/output_tail>/);
    expect(r.reward).toBe(1);
  });

  it('a hanging command is stopped at step_timeout and the episode goes on', () => {
    const r = row('hang');
    expect(texts(r)[1]).toContain('<command>sleep 30</command> ran past its time limit');
    expect(r.reward).toBe(1);
  });

  it('repeating a command is warned about at collapse_limit, then ends the episode', () => {
    const r = row('collapse');
    expect(texts(r)[5]).toContain('Your last 3 commands were all the same');
    expect(r.metadata.exit_status).toBe('CollapseContinued');
    expect(r.reward).toBe(0);
  });

  it('run_golden scores 1.0 on the five example rows without calling the model', () => {
    for (const ex of repo.rows) {
      const r = rows[ex.instance_id]!;
      expect(r.reward, JSON.stringify(r.metadata)).toBe(1);
      expect(r.metadata.exit_status).toBe('GoldPatchApplied');
    }
    const golden = model.requestsTo('/v1/chat/completions').filter((q) => JSON.stringify(q.body).includes('NeMo-Gym__pycalc'));
    expect(golden).toHaveLength(0);
  });

  const upstream = sharedPath('upstream-data', 'mini_swe_resource', 'example_rollouts.jsonl');
  it.skipIf(!existsSync(upstream))('rows have the keys and item shapes of upstream recorded rows', () => {
    const theirs = readJsonl(upstream)[1]!;
    const ours = row('fix');
    for (const k of Object.keys(theirs)) expect(ours, k).toHaveProperty(k);
    expect(Object.keys(ours.response).sort()).toEqual(Object.keys(theirs.response).sort());
    expect(Object.keys(ours.responses_create_params).sort()).toEqual(Object.keys(theirs.responses_create_params).sort());
    expect(ours.responses_create_params.input.map((m: any) => Object.keys(m).sort())).toEqual(theirs.responses_create_params.input.map((m: any) => Object.keys(m).sort()));
    const shape = (o: any) => `${o.role}:${Object.keys(o).filter((k) => !k.endsWith('_ids') && !k.endsWith('_probs')).sort()}:${o.content.map((c: any) => Object.keys(c).sort().join(','))}`;
    expect(new Set(ours.response.output.map(shape))).toEqual(new Set(theirs.response.output.map(shape)));
    // Both alternate assistant and user items and end with the submitted patch.
    expect(ours.response.output[0].role).toBe(theirs.response.output[0].role);
    expect(texts(ours).at(-1)).toMatch(/^diff --git /);
    expect(theirs.response.output.at(-1).content[0].text).toMatch(/^diff --git /);
  });

  it('killing the agent server during an episode leaves no process behind', async () => {
    const instances = (await client.get('head_server', '/server_instances')).json<{ name: string; pid: number }[]>();
    const agentPid = instances.find((i) => i.name === AGENT)!.pid;
    const marker = 'sleep 31.4159';
    const hung = scenarioRow(repo, 'fix');
    hung.instance_id = 'NeMo-Gym__pycalc-1-killed';
    hung.responses_create_params = { input: [{ role: 'system', content: 'scripted' }, { role: 'user', content: `[[scenario:kill]] ${marker}` }] };
    const pending = client.post(AGENT, '/run', hung, { retry: false }).catch((e: unknown) => e);
    const t0 = Date.now();
    while (processesWith(marker).length === 0 && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 50));
    if (processesWith(marker).length === 0) {
      const res = await pending;
      throw new Error(`no episode process appeared: ${res instanceof Error ? res.message : JSON.stringify((res as any).json?.() ?? res).slice(0, 2000)}`);
    }
    process.kill(agentPid, 'SIGKILL');
    await pending;
    const t1 = Date.now();
    while (processesWith(marker).length > 0 && Date.now() - t1 < 5000) await new Promise((r) => setTimeout(r, 50));
    expect(processesWith(marker)).toEqual([]);
    // Until ng-run reaps it, a killed child still answers signal 0 (a zombie): give the reaping time.
    const t2 = Date.now();
    while (isAlive(agentPid) && Date.now() - t2 < 5000) await new Promise((r) => setTimeout(r, 50));
    expect(isAlive(agentPid)).toBe(false);
  });
});
