/**
 * A simulated user through ng-run + ng-collect-rollouts: user_simulation_agent with table_bookings,
 * the policy and the user each a vllm_model (token ids on) in front of its own trainer-vLLM
 * stand-in (real Qwen3 tokenizer, NeMo-RL's prompt repair), both scripted. The conversations end
 * on the user's stop signal, the turn limit or an ending tool; a user model that fails or hangs is
 * a recorded failure with its code; every scored rollout passes NeMo-RL's contiguity walk with the
 * user's turns inside the prompts (masked), never in a generation.
 */
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nemoRlContiguity, startTrainerVllm, type PolicyContext, type ScriptedTurn, type TrainerVllm } from '@nemo-gym/trainer-vllm';
import { runCommand, startStack, type Stack } from './helpers/stack.js';
import { textOf, userModelYaml, userSimulationAgentYaml } from './helpers/user-model.js';

type Json = Record<string, any>;

const MODEL = 'responses_api_models/vllm_model/configs/vllm_model_for_training.yaml';
const BOOKINGS = 'resources_servers/table_bookings/configs/table_bookings.yaml';
const EXAMPLES = 'resources_servers/table_bookings/data/example.jsonl';
const TOKEN_FIELDS = ['prompt_token_ids', 'generation_token_ids', 'generation_log_probs'];

const readJsonl = (p: string): Json[] =>
  existsSync(p)
    ? readFileSync(p, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l))
    : [];


/** The booking assistant: confirms, then acts on "yes"; a party of twelve goes to a human. */
function bookingPolicy(ctx: PolicyContext): ScriptedTurn {
  const messages = ctx.messages as Json[];
  const last = messages.at(-1)!;
  const said = messages.filter((m) => m.role === 'user').map(textOf).join('\n');
  const id = said.match(/B-\d{4}/)?.[0];
  const call = (name: string, args: Json): ScriptedTurn => ({ reasoning: `I will call ${name}.`, toolCalls: [{ name, arguments: args }] });
  if (last.role === 'tool') return { reasoning: 'The tool answered.', content: `Done. ${textOf(last).slice(0, 60)}` };
  const text = textOf(last);
  if (/\b12 guests\b/.test(text)) return call('transfer_to_human_agents', { summary: `Party of 12 for ${id}` });
  if (/^yes/i.test(text) && id) {
    if (/cancel/i.test(said)) return call('cancel_booking', { booking_id: id });
    const n = said.match(/to (\d+) guests/)?.[1];
    if (n) return call('change_party_size', { booking_id: id, party_size: Number(n) });
  }
  if (/cancel|guests/i.test(text) && id) return { reasoning: 'Confirm first.', content: `I can do that for booking ${id}. Shall I go ahead?` };
  return { content: 'How else can I help?' };
}

/** Pending hangs of the user model, released when the test ends. */
const hanging: (() => void)[] = [];

/** The simulated user: says the lines of the `SCRIPT: [...]` in its instructions, one per turn (the last repeats). */
function scriptedUser(ctx: PolicyContext): ScriptedTurn | Promise<ScriptedTurn> {
  const messages = ctx.messages as Json[];
  const script = JSON.parse(textOf(messages[0]!).match(/SCRIPT: (\[.*\])/)![1]!) as string[];
  const line = script[Math.min(messages.filter((m) => m.role === 'assistant').length, script.length - 1)]!;
  if (line === '<fail>') throw new Error('the user model is broken');
  if (line === '<hang>') return new Promise((resolve) => hanging.push(() => resolve({ content: 'too late' })));
  return { content: line };
}

let policyVllm: TrainerVllm;
let userVllm: TrainerVllm;
let stack: Stack;
const dir = mkdtempSync(join(tmpdir(), 'ng-usersim-'));
const examples = new Map(readJsonl(EXAMPLES).map((r) => [r.task_id as string, r]));

/** A table_bookings example row whose user says `script`. */
function row(task: string, script: string[], note = ''): Json {
  return { ...examples.get(task)!, user_instructions: `${note}You call the restaurant. SCRIPT: ${JSON.stringify(script)}` };
}

/** A recorded call's body as the JSON object it is. */
const bodyOf = (c: { body: unknown }): Json => c.body as Json;

interface Collected {
  rows: Json[];
  failures: Json[];
  code: number | null;
  ms: number;
  output: string;
}

async function collect(name: string, agent: string, rows: Json[]): Promise<Collected> {
  const input = join(dir, `${name}.in.jsonl`);
  const output = join(dir, `${name}.jsonl`);
  writeFileSync(input, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const started = Date.now();
  const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, `+agent_name=${agent}`, `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${output}`]);
  return { rows: readJsonl(output), failures: readJsonl(output.replace(/\.jsonl$/, '_failures.jsonl')), code: r.code, ms: Date.now() - started, output };
}

const runs = new Map<string, Collected>();
let policyCallsBefore = 0;
let userCallsBefore = 0;
let policyCallsScored = 0;
let userCallsScored = 0;

beforeAll(async () => {
  policyVllm = await startTrainerVllm({ policy: bookingPolicy, reasoningParser: true });
  userVllm = await startTrainerVllm({ policy: scriptedUser, reasoningParser: true });
  // A second vllm_model for the user, and two agents: the example's, and one with a two-turn limit.
  const config = join(dir, 'usersim.yaml');
  writeFileSync(
    config,
    userModelYaml(userVllm.url, { tokenIds: true, maxAttempts: 1 }) + userSimulationAgentYaml('short_user_simulation_agent', 'table_bookings', { max_turns: 2 }),
  );
  stack = await startStack(
    [
      `+config_paths=[${MODEL},${BOOKINGS},${config}]`,
      `+policy_base_url=${policyVllm.url}`,
      '+policy_api_key=dummy',
      '+policy_model_name=Qwen/Qwen3-8B',
      '++table_bookings_user_simulation_agent.responses_api_agents.user_simulation_agent.user_model_server.name=user_model',
      '++table_bookings_user_simulation_agent.responses_api_agents.user_simulation_agent.user_timeout_s=3',
    ],
    90_000,
  );
  const agent = 'table_bookings_user_simulation_agent';
  policyCallsBefore = policyVllm.calls.length;
  userCallsBefore = userVllm.calls.length;
  runs.set(
    'scored',
    await collect('scored', agent, [
      row('cancel_by_id', ['Hi, please cancel booking B-1043.', 'Yes, go ahead.', 'Thank you! ###STOP###']),
      row('shrink_party', ['Could you change booking B-1060 to 2 guests?', 'Yes please.', '###STOP###']),
      row('large_party_transfer', ['Booking B-1071 needs to be for 12 guests now.', 'Fine. ###TRANSFER###']),
    ]),
  );
  policyCallsScored = policyVllm.calls.length - policyCallsBefore;
  userCallsScored = userVllm.calls.length - userCallsBefore;
  runs.set('limit', await collect('limit', 'short_user_simulation_agent', [row('cancel_by_id', ['Hello?'])]));
  runs.set('fail', await collect('fail', agent, [row('cancel_by_id', ['<fail>'])]));
  runs.set('hang', await collect('hang', agent, [row('cancel_by_id', ['Please cancel booking B-1043.', '<hang>'])]));
}, 240_000);

afterAll(async () => {
  for (const release of hanging) release();
  await stack?.stop();
  await policyVllm?.close();
  await userVllm?.close();
});

const byTask = (task: string) => runs.get('scored')!.rows.find((r) => r.task_id === task)!;
const userItems = (r: Json) => (r.response.output as Json[]).filter((o) => o.role === 'user');

describe('user_simulation_agent through ng-run and ng-collect-rollouts', () => {
  it('the user\'s stop signal ends the conversation; the verifier scores the bookings', () => {
    const { rows, failures, code } = runs.get('scored')!;
    expect(code, JSON.stringify(failures)).toBe(0);
    expect(rows).toHaveLength(3);
    for (const task of ['cancel_by_id', 'shrink_party']) {
      const r = byTask(task);
      expect(r.reward, task).toBe(1);
      expect(r.termination_reason).toBe('user_stop');
      expect(r.user_simulation).toMatchObject({ stop_signal: '###STOP###', end_tool: null, user_turns: 3, policy_turns: 2, policy_model_calls: 3, user_model_calls: 3 });
      // The stop message is the last item; nothing was generated after it.
      expect(r.response.output.at(-1)).toMatchObject({ type: 'message', role: 'user' });
      expect(textOf(r.response.output.at(-1))).toContain('###STOP###');
    }
    expect(userItems(byTask('cancel_by_id')).map(textOf)).toEqual(['Hi, please cancel booking B-1043.', 'Yes, go ahead.', 'Thank you! ###STOP###']);
    expect(byTask('cancel_by_id').response.output.map((o: Json) => o.type)).toEqual(['message', 'reasoning', 'message', 'message', 'reasoning', 'message', 'function_call', 'function_call_output', 'reasoning', 'message', 'message']);
  });

  it('an ending tool ends the conversation at once (agent_stop), without another user turn', () => {
    const r = byTask('large_party_transfer');
    expect(r.reward).toBe(1);
    expect(r.transferred).toBe(true);
    expect(r.termination_reason).toBe('agent_stop');
    expect(r.user_simulation).toMatchObject({ stop_signal: null, end_tool: 'transfer_to_human_agents', user_turns: 1, policy_turns: 1, user_model_calls: 1 });
    expect(r.response.output.at(-1)).toMatchObject({ type: 'function_call_output', output: '"Transfer successful"' });
  });

  it('the turn limit ends a conversation that would go on forever', () => {
    const { rows, code } = runs.get('limit')!;
    expect(code).toBe(0);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.termination_reason).toBe('max_turns');
    expect(rows[0]!.user_simulation).toMatchObject({ user_turns: 2, policy_turns: 2, user_model_calls: 2 });
    expect(rows[0]!.reward).toBe(0);
    expect(userItems(rows[0]!).map(textOf)).toEqual(['Hello?', 'Hello?']);
  });

  it('the user\'s turns are input items without token ids, though the user model server returned them', () => {
    const rows = [...runs.get('scored')!.rows, ...runs.get('limit')!.rows];
    let users = 0;
    for (const r of rows) {
      for (const item of r.response.output as Json[]) {
        if (item.role === 'user') {
          users++;
          expect(Object.keys(item).sort()).toEqual(['content', 'role', 'type']);
        }
      }
      // Every policy generation carries its bundle.
      const generations = (r.response.output as Json[]).filter((o) => o.generation_token_ids !== undefined);
      expect(generations.length).toBe(r.user_simulation.policy_model_calls);
    }
    expect(users).toBe(3 + 3 + 1 + 2);
    // The user model's own server did answer with token ids (the agent dropped them).
    const userChats = userVllm.calls.filter((c) => c.path === '/v1/chat/completions');
    expect(userChats.filter((c) => (c.generationIds ?? []).length > 0).length).toBeGreaterThanOrEqual(users);
  });

  it('the user model sees the conversation from its side: its prompt and instructions, the policy\'s texts as user turns, no tools', () => {
    const first = userVllm.calls.filter((c) => c.path === '/v1/chat/completions')[0]!;
    const messages = bodyOf(first).messages as Json[];
    expect(messages[0]!.role).toBe('system');
    expect(textOf(messages[0]!)).toContain('<scenario>\nYou call the restaurant. SCRIPT: ');
    expect(textOf(messages[0]!)).toContain('###TRANSFER###');
    expect(messages[1]).toMatchObject({ role: 'user', content: 'Trattoria Lume bookings, how can I help?' });
    expect(bodyOf(first).tools).toBeUndefined();
    // A later call: the user's own turns come back as assistant turns, tool traffic is left out.
    const later = userVllm.calls.filter((c) => c.path === '/v1/chat/completions').find((c) => (bodyOf(c).messages as Json[]).length === 6)!;
    expect((bodyOf(later).messages as Json[]).map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(JSON.stringify(bodyOf(later).messages)).not.toContain('cancel_booking');
  });

  it('usage: response.usage counts the policy\'s calls only; the user model\'s are in user_simulation.user_usage', () => {
    const rows = runs.get('scored')!.rows;
    const policyCalls = policyVllm.calls.slice(policyCallsBefore, policyCallsBefore + policyCallsScored);
    const userCalls = userVllm.calls.slice(userCallsBefore, userCallsBefore + userCallsScored);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    expect(sum(rows.map((r) => r.response.usage.input_tokens))).toBe(sum(policyCalls.map((c) => c.promptIds.length)));
    expect(sum(rows.map((r) => r.response.usage.output_tokens))).toBe(sum(policyCalls.map((c) => c.generationIds?.length ?? 0)));
    expect(sum(rows.map((r) => r.user_simulation.user_usage.input_tokens))).toBe(sum(userCalls.map((c) => c.promptIds.length)));
    expect(sum(rows.map((r) => r.user_simulation.user_usage.output_tokens))).toBe(sum(userCalls.map((c) => c.generationIds?.length ?? 0)));
  });

  it('a user model that fails is a recorded failure with its code, never a reward', () => {
    const { rows, failures, code } = runs.get('fail')!;
    expect(code).not.toBe(0);
    expect(rows).toHaveLength(0);
    expect(failures).toHaveLength(1);
    expect(failures[0]!.reason_class).toBe('model_unreachable');
    expect(failures[0]!.reason).toContain('NG_ERR_USER_MODEL_FAILED');
    expect(failures[0]!.reason).toContain('user model server `user_model` answered HTTP');
  });

  it('a user model that hangs is a recorded timeout within user_timeout_s', () => {
    const { rows, failures, code, ms } = runs.get('hang')!;
    expect(code).not.toBe(0);
    expect(rows).toHaveLength(0);
    expect(failures).toHaveLength(1);
    expect(failures[0]!.reason_class).toBe('timeout');
    expect(failures[0]!.reason).toContain('NG_ERR_USER_MODEL_TIMEOUT');
    expect(failures[0]!.reason).toContain('gave no answer within 3 s');
    // 3 s for the hung call plus one policy turn and the collector's start-up.
    expect(ms).toBeLessThan(20_000);
  });

  it('every scored multi-turn rollout passes NeMo-RL\'s contiguity walk, the user\'s turns inside the prompts', () => {
    const rows = [...runs.get('scored')!.rows, ...runs.get('limit')!.rows];
    for (const r of rows) {
      const walk = nemoRlContiguity(r.response.output);
      expect(walk, r.task_id).toMatchObject({ ok: true });
      // The user's text after a generation is in the next generation's prompt (masked), in no generation.
      const output = r.response.output as Json[];
      output.forEach((item, i) => {
        if (item.role !== 'user') return;
        const next = output.slice(i + 1).find((o) => o.generation_token_ids !== undefined);
        if (next) expect(policyVllm.tokenizer.decode(next.prompt_token_ids)).toContain(textOf(item));
        for (const g of output.filter((o) => o.generation_token_ids !== undefined)) expect(policyVllm.tokenizer.decode(g.generation_token_ids)).not.toContain(textOf(item));
      });
    }
    const turns = rows.map((r) => (nemoRlContiguity(r.response.output) as { turns: number }).turns);
    expect(Math.max(...turns)).toBe(3);
  });

  it('ng-export +format=rl: the user\'s turns are in the loss mask\'s zeros, the policy\'s generations in its ones', async () => {
    const { output, rows } = runs.get('scored')!;
    const out = join(dir, 'scored.rl.jsonl');
    const r = await runCommand('export', [`+input=${output}`, `+output=${out}`, '+format=rl']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const exported = readJsonl(out);
    expect(exported).toHaveLength(rows.length);
    for (const [i, e] of exported.entries()) {
      const masked = policyVllm.tokenizer.decode((e.input_ids as number[]).filter((_t, k) => e.loss_mask[k] === 0));
      const trained = policyVllm.tokenizer.decode((e.input_ids as number[]).filter((_t, k) => e.loss_mask[k] === 1));
      const said = userItems(rows[i]!).map(textOf).filter((t) => !t.includes('###'));
      expect(said.length).toBeGreaterThan(0);
      for (const text of said) {
        expect(masked).toContain(text);
        expect(trained).not.toContain(text);
      }
    }
  });
});
