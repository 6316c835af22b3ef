/**
 * Online multi-turn RL: rollouts collected with ng-run + ng-collect-rollouts through vllm_model
 * (token ids on) against a trainer's vLLM server — the stand-in of NeMo-RL's, with the real Qwen3
 * tokenizer and chat template, which repairs each prompt from the last message carrying a token
 * bundle — must all pass NeMo-RL's contiguity walk. The scripted model writes tool-call arguments
 * as compact JSON, which vLLM's tool parser re-serialises, so re-templating the history really
 * drifts: with the bundles forwarded the drift is repaired, with `token_id_forwarding: none` it is
 * not and the walk fails.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core/config';
import { nemoRlContiguity, startTrainerVllm, type PolicyContext, type ScriptedTurn, type TrainerVllm } from '@nemo-gym/trainer-vllm';
import { runCommand, startStack, type Stack } from './helpers/stack.js';

type Json = Record<string, any>;
/** A recorded call of the stand-in, with its body as the JSON it is. */
interface Call { path: string; body: Json; promptIds: number[]; generationIds?: number[]; requiredPrefix: number[] | null; drifted: boolean }
const callsOf = (v: TrainerVllm): Call[] => v.calls as unknown as Call[];

const MODEL = 'responses_api_models/vllm_model/configs/vllm_model_for_training.yaml';
const ENVS = {
  simple_weather: { config: 'resources_servers/simple_weather/configs/simple_weather.yaml', agent: 'simple_weather_simple_agent', data: 'resources_servers/simple_weather/data/example.jsonl' },
  multineedle: { config: 'resources_servers/multineedle/configs/multineedle.yaml', agent: 'multineedle_simple_agent', data: 'resources_servers/multineedle/data/example.jsonl' },
  workbench: { config: 'resources_servers/workbench/configs/workbench.yaml', agent: 'workbench_simple_agent', data: 'resources_servers/workbench/data/example.jsonl' },
} as const;
const LONG_MARKER = '[twenty turns]';
const LONG_TURNS = 20;

const csvDir = sharedPath('upstream-data', 'workbench', 'csv_data');
const haveWorkbench = existsSync(join(csvDir, 'processed'));
if (!haveWorkbench) console.log(`online RL test: workbench rows skipped, ${csvDir} is absent`);
const envNames = (Object.keys(ENVS) as (keyof typeof ENVS)[]).filter((e) => e !== 'workbench' || haveWorkbench);

/** Arguments for a tool from its JSON schema: the required properties, filled by type. */
function fill(schema: Json | undefined, k: number): Json {
  const out: Json = {};
  const props: Json = schema?.properties ?? {};
  for (const name of schema?.required ?? Object.keys(props).slice(0, 1)) {
    const p: Json = props[name] ?? {};
    const t = Array.isArray(p.type) ? p.type[0] : p.type;
    if (p.enum) out[name] = p.enum[0];
    else if (t === 'integer' || t === 'number') out[name] = k + 1;
    else if (t === 'boolean') out[name] = true;
    else if (t === 'array') out[name] = p.items?.type === 'string' ? ['a'] : [k + 1, k + 2];
    else if (t === 'object') out[name] = {};
    else out[name] = name.includes('email') ? 'fatima.khan@atlas.com' : name.includes('date') || name.includes('time') ? '2023-11-30 10:00:00' : `Value ${k}`;
  }
  return out;
}

/**
 * The scripted policy: a few tool calls (compact JSON arguments, with a short reasoning), then an
 * answer. The twenty-turn rows call get_weather nineteen times before answering.
 */
function policy(ctx: PolicyContext): ScriptedTurn {
  const messages = ctx.messages as Json[];
  const done = messages.filter((m) => m.role === 'assistant').length;
  const user = String(messages.find((m) => m.role === 'user')?.content ?? '');
  const tools = ((ctx.tools ?? []) as Json[]).map((t) => t.function ?? t);
  const byName = (n: string) => tools.find((t: Json) => t.name === n);
  const call = (name: string, args: Json): ScriptedTurn => ({ reasoning: `Step ${done + 1}: I will call ${name}.`, toolCalls: [{ name, arguments: args }] });
  if (user.includes(LONG_MARKER)) {
    return done < LONG_TURNS - 1 ? call('get_weather', { city: `City number ${done}` }) : { reasoning: 'I have them all.', content: 'It is cold in every city.' };
  }
  if (byName('get_weather')) return done === 0 ? call('get_weather', { city: 'San Francisco' }) : { reasoning: 'Answer now.', content: 'It is cold; bring a jacket.' };
  if (byName('get_synonym_value')) {
    if (done < 2) return call('get_synonym_value', fill(byName('get_synonym_value').parameters, done));
    if (done === 2) return call('extract_synonym_values', fill(byName('extract_synonym_values').parameters, done));
    return { content: 'Submitted.' };
  }
  if (done < 3 && tools.length) {
    const t = tools[done % tools.length];
    return call(t.name, fill(t.parameters, done));
  }
  return { reasoning: 'That is all.', content: 'Done.' };
}

const readJsonl = (p: string): Json[] =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));

interface ModeRun {
  rows: Json[];
  failures: number;
  outputs: string[];
}

let standin: TrainerVllm;
const dir = mkdtempSync(join(tmpdir(), 'ng-online-rl-'));
const runs = new Map<string, ModeRun>();
const callsByMode = new Map<string, Call[]>();

/** The twenty-turn rows: simple_weather tasks that ask for nineteen cities. */
function longRows(): string {
  const p = join(dir, 'long.jsonl');
  const rows = [0, 1].map((i) => ({
    responses_create_params: { input: [{ role: 'user', content: `${LONG_MARKER} What is the weather in each of nineteen cities? (${i})` }], tools: readJsonl(ENVS.simple_weather.data)[0]!.responses_create_params.tools },
  }));
  writeFileSync(p, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return p;
}

async function collectAll(mode: string): Promise<ModeRun> {
  const configs = [MODEL, ...envNames.map((e) => ENVS[e].config)];
  const stack: Stack = await startStack([
    `+config_paths=[${configs.join(',')}]`,
    `+policy_base_url=${standin.url}`,
    '+policy_api_key=dummy',
    '+policy_model_name=Qwen/Qwen3-8B',
    `++policy_model.responses_api_models.vllm_model.token_id_forwarding=${mode}`,
    ...(haveWorkbench ? [`++workbench.resources_servers.workbench.csv_data_dir=${csvDir}`, '++workbench.resources_servers.workbench.csv_data_url=null'] : []),
  ], 90_000);
  const before = standin.calls.length;
  const out: ModeRun = { rows: [], failures: 0, outputs: [] };
  try {
    const jobs: [string, string][] = [...envNames.map((e) => [ENVS[e].agent, ENVS[e].data] as [string, string]), [ENVS.simple_weather.agent, longRows()]];
    for (const [agent, input] of jobs) {
      const output = join(dir, `${mode}-${agent}-${out.outputs.length}.jsonl`);
      const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, `+agent_name=${agent}`, `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${output}`]);
      expect(r.code, `${agent}: ${r.stdout}\n${r.stderr}\n${stack.output().slice(-3000)}`).toBe(0);
      out.rows.push(...readJsonl(output));
      out.outputs.push(output);
    }
  } finally {
    await stack.stop();
  }
  callsByMode.set(mode, callsOf(standin).slice(before));
  return out;
}

beforeAll(async () => {
  standin = await startTrainerVllm({ policy, reasoningParser: true });
  runs.set('last', await collectAll('last'));
  runs.set('none', await collectAll('none'));
}, 300_000);

afterAll(async () => {
  await standin?.close();
});

const expectedRows = envNames.length * 5 + 2;

describe('online multi-turn RL through a trainer\'s vLLM server (real Qwen3 tokenizer)', () => {
  it('with the last bundle forwarded, every rollout passes NeMo-RL\'s contiguity walk', () => {
    const { rows } = runs.get('last')!;
    expect(rows).toHaveLength(expectedRows);
    for (const row of rows) {
      const walk = nemoRlContiguity(row.response.output);
      expect(walk, JSON.stringify(row.responses_create_params.input.at(-1)).slice(0, 200)).toMatchObject({ ok: true });
    }
    // Multi-turn for real: every environment made several model calls per rollout; the long rows twenty.
    const turns = rows.map((r) => (nemoRlContiguity(r.response.output) as { turns: number }).turns);
    expect(Math.min(...turns)).toBeGreaterThanOrEqual(2);
    expect(Math.max(...turns)).toBe(LONG_TURNS);
  });

  it('every follow-up call reached the server with the previous generation\'s bundle, and re-templating alone would have drifted', () => {
    const chats = callsByMode.get('last')!.filter((c) => c.path === '/v1/chat/completions');
    const followUps = chats.filter((c) => c.body.messages.some((m: Json) => m.role === 'assistant'));
    expect(followUps.length).toBeGreaterThan(expectedRows);
    const produced = new Set(chats.map((c) => JSON.stringify([...c.promptIds, ...(c.generationIds ?? [])])));
    for (const c of followUps) {
      expect(c.requiredPrefix).not.toBeNull();
      // The prefix is exactly one earlier generation's prompt + generation ids.
      expect(produced.has(JSON.stringify(c.requiredPrefix))).toBe(true);
      // Only the last assistant message carries a bundle (linear growth).
      const carriers = c.body.messages.filter((m: Json) => m.prompt_token_ids !== undefined);
      expect(carriers).toHaveLength(1);
      expect(carriers[0]).toBe(c.body.messages.filter((m: Json) => m.role === 'assistant').at(-1));
    }
    // The drift is real: re-tokenizing the history gave other ids for most follow-ups (repaired here).
    const drifted = followUps.filter((c) => c.drifted).length;
    console.log(`online RL: ${runs.get('last')!.rows.length} rollouts, ${followUps.length} follow-up calls, ${drifted} of them drifted without repair`);
    expect(drifted).toBeGreaterThan(followUps.length / 2);
  });

  it('with forwarding none the same rollouts are not contiguous', () => {
    const { rows } = runs.get('none')!;
    expect(rows).toHaveLength(expectedRows);
    const chats = callsByMode.get('none')!.filter((c) => c.path === '/v1/chat/completions');
    expect(chats.every((c) => c.requiredPrefix === null)).toBe(true);
    const broken = rows.filter((r) => !nemoRlContiguity(r.response.output).ok);
    // Every rollout with a tool call has a drifting turn: none of them is contiguous.
    expect(broken.length).toBe(expectedRows);
    const first = nemoRlContiguity(broken[0]!.response.output);
    expect(first).toMatchObject({ ok: false, message: expect.stringContaining('Non-contiguous messages found!') });
  });

  it('ng-export +format=rl accepts every row of the forwarded run and refuses the drifted ones', async () => {
    for (const [mode, expectCode] of [['last', 0], ['none', 1]] as const) {
      for (const input of runs.get(mode)!.outputs) {
        const out = join(dir, `export-${mode}-${input.split('/').at(-1)}`);
        const r = await runCommand('export', [`+input=${input}`, `+output=${out}`, '+format=rl', '+trainer=nemo_rl']);
        expect(r.code, r.stdout + r.stderr).toBe(expectCode);
        if (mode === 'last') expect(readJsonl(out)).toHaveLength(readJsonl(input).length);
        else expect(r.stdout).toMatch(/does not extend the tokens before it/);
      }
    }
  });
});

/** A config block written as upstream's NeMo-RL recipes write it (keys and entrypoint unchanged). */
const UPSTREAM_STYLE = `policy_model:
  responses_api_models:
    vllm_model:
      entrypoint: app.py
      base_url: \${policy_base_url}
      api_key: \${policy_api_key}
      model: \${policy_model_name}
      return_token_id_information: true
      request_prompt_and_generation_token_ids: false
      uses_reasoning_parser: true
      chat_template_kwargs:
        enable_thinking: true
      extra_body:
        skip_special_tokens: false
        chat_template_kwargs:
          force_nonempty_content: true
      sampling_overrides:
        temperature: 1.0
        top_p: 1.0
`;

describe('upstream configs and token-source faults, through ng-run', () => {
  it('an upstream-style config runs unchanged: its template switches reach generation and /tokenize, sampling is pinned, rows may turn thinking off', async () => {
    const vllm = await startTrainerVllm({ policy, reasoningParser: true, tokenSource: 'vllm' });
    const cfg = join(dir, 'upstream_vllm_model.yaml');
    writeFileSync(cfg, UPSTREAM_STYLE);
    const input = join(dir, 'thinking.jsonl');
    const rows = readJsonl(ENVS.simple_weather.data).slice(0, 2).map((r, i) => {
      const p = { ...r.responses_create_params, temperature: 0.2 };
      // The second row turns thinking off, as upstream's per-row metadata does.
      if (i === 1) p.metadata = { chat_template_kwargs: '{"enable_thinking": false}' };
      return { ...r, responses_create_params: p };
    });
    writeFileSync(input, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const stack = await startStack([`+config_paths=[${cfg},${ENVS.simple_weather.config}]`, `+policy_base_url=${vllm.url}`, '+policy_api_key=dummy', '+policy_model_name=Qwen/Qwen3-8B']);
    try {
      const output = join(dir, 'upstream-style.jsonl');
      const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, `+agent_name=${ENVS.simple_weather.agent}`, `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${output}`]);
      expect(r.code, r.stdout + r.stderr + stack.output().slice(-2000)).toBe(0);
      const out = readJsonl(output);
      expect(out).toHaveLength(2);
      for (const row of out) expect(nemoRlContiguity(row.response.output)).toMatchObject({ ok: true });
    } finally {
      await stack.stop();
      await vllm.close();
    }
    const chats = callsOf(vllm).filter((c) => c.path === '/v1/chat/completions');
    const tokenizes = callsOf(vllm).filter((c) => c.path === '/tokenize');
    expect(chats.length).toBe(4);
    expect(tokenizes.length).toBe(4);
    for (const c of chats) {
      expect(c.body).toMatchObject({ temperature: 1, top_p: 1, skip_special_tokens: false });
      expect(c.body).not.toHaveProperty('return_token_ids');
    }
    const thinkingOff = (c: { body: Json }) => c.body.chat_template_kwargs?.enable_thinking === false;
    for (const c of [...chats, ...tokenizes]) {
      expect(c.body.chat_template_kwargs).toMatchObject({ force_nonempty_content: true });
      expect(typeof c.body.chat_template_kwargs.enable_thinking).toBe('boolean');
    }
    // /tokenize got the same template switches as the generation it measures, and with thinking
    // off Qwen3's template opens the answer with an empty think block.
    expect(tokenizes.filter(thinkingOff)).toHaveLength(2);
    const tail = (c: { promptIds: number[] }) => vllm.tokenizer.decode(c.promptIds.slice(-8));
    for (const c of chats) expect(tail(c).endsWith('<think>\n\n</think>\n\n')).toBe(thinkingOff(c));
  }, 120_000);

  it('token ids from two sources that disagree fail the rollout with a message naming both, recorded as a failure', async () => {
    const vllm = await startTrainerVllm({ policy, tokenSource: 'vllm', fault: 'token_ids_disagree' });
    const stack = await startStack([
      `+config_paths=[${MODEL},${ENVS.simple_weather.config}]`, `+policy_base_url=${vllm.url}`, '+policy_api_key=dummy', '+policy_model_name=Qwen/Qwen3-8B',
      '++policy_model.responses_api_models.vllm_model.request_prompt_and_generation_token_ids=true',
    ]);
    try {
      const output = join(dir, 'disagree.jsonl');
      const input = join(dir, 'two.jsonl');
      writeFileSync(input, readFileSync(ENVS.simple_weather.data, 'utf8').split('\n').slice(0, 2).join('\n') + '\n');
      const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, `+agent_name=${ENVS.simple_weather.agent}`, `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${output}`]);
      expect(r.code).not.toBe(0);
      expect(existsSync(output) ? readJsonl(output) : []).toHaveLength(0);
      const failures = readJsonl(output.replace(/\.jsonl$/, '_failures.jsonl'));
      expect(failures).toHaveLength(2);
      for (const f of failures) expect(JSON.stringify(f)).toMatch(/choices\[0\]\.token_ids disagree with the log-prob tokens/);
    } finally {
      await stack.stop();
      await vllm.close();
    }
  }, 120_000);

  it('an unknown key in a model server block stops ng-run with its name', async () => {
    await expect(
      startStack([`+config_paths=[${MODEL},${ENVS.simple_weather.config}]`, '+policy_base_url=http://127.0.0.1:9/v1', '+policy_api_key=dummy', '+policy_model_name=m', '++policy_model.responses_api_models.vllm_model.chat_template_kwarg={enable_thinking: false}']),
    ).rejects.toThrow(/unknown key in its block:\n.*- `chat_template_kwarg` \(did you mean `chat_template_kwargs`\?\)[\s\S]*exited during start-up/);
  });
});
