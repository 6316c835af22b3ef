/**
 * Gymnasium-style environments end to end: ng-run starts tic_tac_toe, blackjack and
 * follow_up_conversation with gymnasium_agent and openai_model in front of a scripted model (a
 * real HTTP stub on 127.0.0.1); ng-collect-rollouts runs rows that win, lose, make illegal moves,
 * hit max_steps, whose reset throws, and whose step hangs. Then the same environments through
 * vllm_model (token ids on) against the trainer's vLLM stand-in: every rollout passes NeMo-RL's
 * contiguity walk, and the environment's turns carry no token ids.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { functionCall, messageItem, modelResponse, startStubServer, type StubRequest, type StubServer } from '@nemo-gym/core/testing';
import { hasTokenFields } from '@nemo-gym/core/openai';
import { nemoRlContiguity, startTrainerVllm, type PolicyContext, type ScriptedTurn, type TrainerVllm } from '@nemo-gym/trainer-vllm';
import { deal, handValue, settle } from '../resources_servers/blackjack/src/game.js';
import { runCommand, startStack, type Stack } from './helpers/stack.js';

type Json = Record<string, any>;

const TTT = 'resources_servers/tic_tac_toe/configs/tic_tac_toe.yaml';
const BJ = 'resources_servers/blackjack/configs/blackjack.yaml';
const FU = 'resources_servers/follow_up_conversation/configs/follow_up_conversation.yaml';
const OPENAI = 'responses_api_models/openai_model/configs/openai_model.yaml';
const VLLM = 'responses_api_models/vllm_model/configs/vllm_model_for_training.yaml';

const dir = mkdtempSync(join(tmpdir(), 'ng-gymnasium-'));
const readJsonl = (p: string): Json[] =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
const writeJsonl = (name: string, rows: Json[]): string => {
  const p = join(dir, name);
  writeFileSync(p, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return p;
};

const PLAY_MOVE = { type: 'function', name: 'play_move', description: 'Place your X on a free cell (1-9).', strict: true, parameters: { type: 'object', properties: { cell: { type: 'integer' } }, required: ['cell'], additionalProperties: false } };
const TTT_SYSTEM = 'You are playing tic-tac-toe as X.';
const BJ_SYSTEM = 'You are playing blackjack. Reply with <action>hit</action> or <action>stand</action>.';
const FU_SYSTEM = 'Answer each question briefly.';

/** A tic-tac-toe row: the moves the scripted model will make, by tool call or by action tag. */
function tttRow(plan: (number | string)[], opts: { tools?: boolean; opponent?: string; opponent_starts?: boolean } = {}): Json {
  const params: Json = { input: [{ role: 'system', content: TTT_SYSTEM }, { role: 'user', content: `Play. [plan ${plan.join(',')}]` }] };
  if (opts.tools !== false) params.tools = [PLAY_MOVE];
  return { responses_create_params: params, opponent: opts.opponent ?? 'first_free', ...(opts.opponent_starts ? { opponent_starts: true } : {}) };
}
const bjRow = (seed: number, strategy: 'stand' | 'hit'): Json => ({
  responses_create_params: { input: [{ role: 'system', content: BJ_SYSTEM }, { role: 'user', content: `Deal me in. [strategy ${strategy}]` }] },
  seed,
});
const FRANCE = {
  expect: ['Paris'],
  right: { say: 'Right. Which river flows through that city?', expect: ['Seine'], right: { say: 'Correct, that is all.' } },
  wrong: { say: 'No, it is Paris. Which river flows through Paris?', expect: ['Seine'] },
};
const fuRow = (wrongFirst: boolean): Json => ({
  responses_create_params: { input: [{ role: 'system', content: FU_SYSTEM }, { role: 'user', content: `What is the capital of France? ${wrongFirst ? '[wrong first]' : '[straight]'}` }] },
  script: FRANCE,
});

/** The text of an input item (message content as a string or parts). */
function textOf(item: Json): string {
  const c = item.content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map((p: Json) => p.text ?? '').join('');
  return '';
}

/** What the scripted player does next, from the conversation so far (Responses input items). */
function decide(input: Json[]): { text?: string; call?: { name: string; args: Json } } {
  const first = textOf(input.find((m) => m.role === 'user') ?? {});
  const system = textOf(input.find((m) => m.role === 'system') ?? {});
  const done = input.filter((m) => m.type === 'function_call' || (m.role === 'assistant' && (m.type ?? 'message') === 'message')).length;
  const lastUser = textOf([...input].reverse().find((m) => m.role === 'user') ?? {});
  if (system === TTT_SYSTEM) {
    const plan = /\[plan ([^\]]*)\]/.exec(first)![1]!.split(',');
    const move = plan[Math.min(done, plan.length - 1)]!;
    const cell = /^\d+$/.test(move) ? Number(move) : move;
    return hasTools ? { call: { name: 'play_move', args: { cell } } } : { text: `<action>${move}</action>` };
  }
  if (system === BJ_SYSTEM) {
    const strategy = /\[strategy (\w+)\]/.exec(first)![1];
    return { text: strategy === 'hit' && done === 0 ? 'I will take a card. <action>hit</action>' : '<action>stand</action>' };
  }
  if (/capital of France/.test(lastUser)) return { text: first.includes('[wrong first]') ? 'Lyon.' : 'Paris.' };
  if (/river/.test(lastUser)) return { text: 'The Seine.' };
  return { text: 'I do not know.' };
}
// Set per request by the stub (whether the row offers tools).
let hasTools = false;

let turnNo = 0;
/** The stub model: a Responses answer for each request. */
function answer(req: StubRequest): Json {
  const body = req.body as Json;
  hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  const d = decide(body.input as Json[]);
  turnNo++;
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
  const out = d.call ? functionCall(d.call.name, d.call.args, `fc_${turnNo}`) : messageItem(d.text!, { id: `msg_${turnNo}` });
  return modelResponse([out], { id: `resp_${turnNo}`, usage });
}

/** The row of an output file whose first user message contains `marker`. */
function rowWith(rows: Json[], marker: string): Json {
  const found = rows.filter((r) => (r.responses_create_params.input as Json[]).some((m) => m.role === 'user' && textOf(m).includes(marker)));
  expect(found, marker).toHaveLength(1);
  return found[0]!;
}

/** Blackjack seeds whose outcome under a strategy is known, found with the game's own rules. */
function bjOutcome(seed: number, strategy: 'stand' | 'hit'): { reward: number; result: string } {
  const g = deal(seed);
  if (strategy === 'hit') {
    g.player.push(g.shoe.draw());
    if (handValue(g.player) > 21) return { reward: -1, result: 'bust' };
  }
  const s = settle(g);
  return { reward: s.reward, result: s.outcome };
}
function seedWhere(strategy: 'stand' | 'hit', result: string): number {
  for (let seed = 1; seed < 10_000; seed++) if (bjOutcome(seed, strategy).result === result) return seed;
  throw new Error(`no seed gives ${result}`);
}

describe('Gymnasium environments through ng-run and ng-collect-rollouts (scripted model)', () => {
  let model: StubServer;
  let stack: Stack;
  let rows: Json[] = [];
  let failures: Json[] = [];
  let collectOut = '';
  const seeds = { standWin: seedWhere('stand', 'win'), standLoss: seedWhere('stand', 'loss'), hitBust: seedWhere('hit', 'bust') };
  let envPid = 0;
  let hangAt: number | null = null;

  beforeAll(async () => {
    model = await startStubServer({
      '/v1/models': () => ({ json: { object: 'list', data: [{ id: 'scripted', object: 'model', created: 0, owned_by: 'test' }] } }),
      '/v1/responses': (req) => {
        const input = (req.body as Json).input as Json[];
        // The row that hangs its environment: the model's second move freezes the tic_tac_toe process.
        if (envPid && hangAt !== null && input.some((m) => textOf(m).includes('[hang]')) && input.filter((m) => m.type === 'function_call').length === hangAt) process.kill(envPid, 'SIGSTOP');
        return { json: answer(req) };
      },
    });
    // A second agent on tic_tac_toe with a step limit of two.
    const shortAgent = join(dir, 'short_agent.yaml');
    writeFileSync(
      shortAgent,
      'ttt_two_steps_agent:\n  responses_api_agents:\n    gymnasium_agent:\n      entrypoint: app.ts\n      resources_server:\n        type: resources_servers\n        name: tic_tac_toe\n      model_server:\n        type: responses_api_models\n        name: policy_model\n      max_steps: 2\n',
    );
    stack = await startStack(
      [
        `+config_paths=[${OPENAI},${TTT},${BJ},${FU},${shortAgent}]`,
        `+policy_base_url=${model.url}/v1`,
        '+policy_api_key=dummy',
        '+policy_model_name=scripted',
        '++tic_tac_toe_gymnasium_agent.responses_api_agents.gymnasium_agent.step_timeout_s=3',
      ],
      90_000,
    );
    const collect = async (agent: string, name: string, input: Json[]) => {
      const output = join(dir, `${name}.jsonl`);
      const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, `+agent_name=${agent}`, `+input_jsonl_fpath=${writeJsonl(`${name}-in.jsonl`, input)}`, `+output_jsonl_fpath=${output}`]);
      collectOut += `${name}: exit ${r.code}\n${r.stdout}\n${r.stderr}\n`;
      return output;
    };
    const ttt = await collect('tic_tac_toe_gymnasium_agent', 'ttt', [
      tttRow([5, 3, 7]), // win (tool calls)
      tttRow([1, 9, 2], { opponent: 'blocking', tools: false }), // loss (action tags)
      tttRow([5, 5, 3, 7]), // an illegal move, then a win
      tttRow([5, 'x', 3, 7], { tools: false }), // an unreadable move, then a win
      tttRow([5, 5, 5, 5]), // three illegal moves: forfeit
      tttRow([1, 2, 3], { opponent: 'grandmaster' }), // reset throws
    ]);
    rows.push(...readJsonl(ttt));
    failures.push(...readJsonl(ttt.replace(/\.jsonl$/, '_failures.jsonl')));
    rows.push(...readJsonl(await collect('ttt_two_steps_agent', 'ttt-short', [tttRow([5, 3, 7, '[short]'])])));
    rows.push(...readJsonl(await collect('blackjack_gymnasium_agent', 'bj', [bjRow(seeds.standWin, 'stand'), bjRow(seeds.standLoss, 'stand'), bjRow(seeds.hitBust, 'hit')])));
    rows.push(...readJsonl(await collect('follow_up_conversation_gymnasium_agent', 'fu', [fuRow(false), fuRow(true)])));

    // A step that hangs: the environment process stops answering during the second step.
    const client = await ServerClient.fromHeadServer({ host: '127.0.0.1', port: stack.headPort });
    envPid = (await client.get('tic_tac_toe', '/ng_status')).json<{ pid: number }>().pid;
    await client.close();
    hangAt = 1;
    const hang = await collect('tic_tac_toe_gymnasium_agent', 'ttt-hang', [tttRow([5, 3, 7, '[hang]'])]);
    process.kill(envPid, 'SIGCONT');
    hangAt = null;
    failures.push(...readJsonl(hang.replace(/\.jsonl$/, '_failures.jsonl')).map((f) => ({ ...f, hang: true })));
  }, 240_000);

  afterAll(async () => {
    if (envPid) process.kill(envPid, 'SIGCONT');
    await stack?.stop();
    await model?.close();
  });

  it('wins and losses score 1 and -1, by tool call and by action tag', () => {
    const win = rowWith(rows, '[plan 5,3,7]');
    expect(win).toMatchObject({ reward: 1, terminated: true, truncated: false, info: { result: 'win' }, num_steps: 3 });
    // The model's three calls, each answered by a function_call_output from the environment (none after the last move).
    const out = win.response.output as Json[];
    expect(out.map((o) => o.type)).toEqual(['function_call', 'function_call_output', 'function_call', 'function_call_output', 'function_call']);
    expect(out[1].call_id).toBe(out[0].call_id);
    expect(out[1].output).toMatch(/^O plays 1\./);
    // The reset's observation is the last input message; usage is summed over the three calls.
    expect(textOf(win.responses_create_params.input.at(-1))).toMatch(/You are X\. You move first\./);
    expect(win.response.usage).toMatchObject({ input_tokens: 30, output_tokens: 15, total_tokens: 45 });

    const loss = rowWith(rows, '[plan 1,9,2]');
    expect(loss).toMatchObject({ reward: -1, terminated: true, info: { result: 'loss' } });
    const lossOut = loss.response.output as Json[];
    expect(lossOut.filter((o) => o.type === 'function_call_output')).toHaveLength(0);
    // Observations are user messages between the model's action tags.
    expect(lossOut.filter((o) => o.role === 'user').map((o) => textOf(o).split('\n')[0])).toEqual(['O plays 5.', 'O plays 3.']);
  });

  it('illegal moves cost illegal_move_reward each and the game goes on; the third forfeits; rewards are summed', () => {
    const once = rowWith(rows, '[plan 5,5,3,7]');
    expect(once.reward).toBeCloseTo(0.9, 10);
    expect(once).toMatchObject({ terminated: true, info: { result: 'win', illegal_moves: 1 }, num_steps: 4 });
    expect(once.response.output[3].output).toMatch(/^Illegal move: cell 5 is taken by X\./);
    const tag = rowWith(rows, '[plan 5,x,3,7]');
    expect(tag.reward).toBeCloseTo(0.9, 10);
    expect(textOf(tag.response.output[3])).toMatch(/^Illegal move: "x" is not a cell number/);
    const forfeit = rowWith(rows, '[plan 5,5,5,5]');
    expect(forfeit.reward).toBeCloseTo(-1.2, 10);
    expect(forfeit).toMatchObject({ terminated: true, info: { result: 'forfeit', illegal_moves: 3 }, num_steps: 4 });
  });

  it('an episode still open at max_steps is truncated with the rewards so far', () => {
    const short = rowWith(rows, '[short]');
    expect(short).toMatchObject({ reward: 0, terminated: false, truncated: true, num_steps: 2 });
    expect((short.response.output as Json[]).filter((o) => o.type === 'function_call')).toHaveLength(2);
  });

  it('blackjack is seeded: each row ends as the game\'s rules say for its seed', () => {
    const bj = rows.filter((r) => textOf(r.responses_create_params.input.at(-1)).startsWith('Your hand: '));
    expect(bj).toHaveLength(3);
    const byResult = Object.fromEntries(bj.map((r) => [r.info.result, r]));
    expect(Object.keys(byResult).sort()).toEqual(['bust', 'loss', 'win']);
    expect(byResult.win).toMatchObject({ reward: 1, terminated: true, num_steps: 1 });
    expect(byResult.win.info.player_value > byResult.win.info.dealer_value || byResult.win.info.dealer_value > 21).toBe(true);
    expect(byResult.loss).toMatchObject({ reward: -1, terminated: true, num_steps: 1 });
    // Hit once: the hand went over 21 and the episode ended on that step.
    expect(byResult.bust).toMatchObject({ reward: -1, terminated: true, num_steps: 1 });
    // The cards are the seed's: the dealt hand shown to the model is the one the rules deal.
    const g = deal(seeds.standWin);
    expect(textOf(byResult.win.responses_create_params.input.at(-1))).toContain(`Your hand: [${g.player.join(', ')}] = ${handValue(g.player)}\nDealer shows: ${g.dealer[0]}`);
  });

  it('the follow-up conversation asks what follows from the answer, and scores each right answer', () => {
    const right = rowWith(rows, '[straight]');
    const wrongFirst = rowWith(rows, '[wrong first]');
    expect(right).toMatchObject({ reward: 2, terminated: true, num_steps: 2, info: { right: 2, answers: [true, true], closing: 'Correct, that is all.' } });
    expect(textOf(right.response.output[1])).toBe('Right. Which river flows through that city?');
    expect(wrongFirst).toMatchObject({ reward: 1, terminated: true, num_steps: 2, info: { right: 1, answers: [false, true] } });
    expect(textOf(wrongFirst.response.output[1])).toBe('No, it is Paris. Which river flows through Paris?');
  });

  it('a reset that throws and a step that hangs are recorded failures with their reasons, not rewards', () => {
    expect(failures, collectOut).toHaveLength(2);
    const reset = failures.find((f) => !f.hang)!;
    expect(reset.reason).toMatch(/\/reset answered HTTP 500/);
    expect(reset.reason).toMatch(/TicTacToeResourcesServer: reset failed: ZodError/);
    expect(reset.reason).toMatch(/NG_ERR_ENV_RESET_FAILED/);
    expect(reset.reason).toMatch(/grandmaster|opponent/);
    const hang = failures.find((f) => f.hang)!;
    expect(hang.reason_class).toBe('timeout');
    expect(hang.reason).toMatch(/\/step \(step 2\) gave no answer within step_timeout_s = 3 s/);
    // Neither row was written as a result.
    expect(rows.some((r) => r.responses_create_params.input.some((m: Json) => /grandmaster|\[hang\]/.test(textOf(m))))).toBe(false);
  });
});

/** The scripted policy behind the trainer's vLLM stand-in (chat messages). */
function chatPolicy(ctx: PolicyContext): ScriptedTurn {
  const input = (ctx.messages as Json[]).flatMap((m): Json[] => {
    if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length) return m.tool_calls.map(() => ({ type: 'function_call' }));
    if (m.role === 'tool') return [{ type: 'function_call_output' }];
    return [{ role: m.role, content: typeof m.content === 'string' ? m.content : '' }];
  });
  hasTools = Array.isArray(ctx.tools) && ctx.tools.length > 0;
  const d = decide(input);
  return d.call ? { reasoning: 'My move.', toolCalls: [{ name: d.call.name, arguments: d.call.args }] } : { reasoning: 'Thinking.', content: d.text! };
}

describe('multi-turn Gymnasium rollouts through vllm_model against the trainer\'s vLLM stand-in', () => {
  let vllm: TrainerVllm;
  let stack: Stack;
  const out: Json[] = [];

  beforeAll(async () => {
    vllm = await startTrainerVllm({ policy: chatPolicy, reasoningParser: true });
    stack = await startStack([`+config_paths=[${VLLM},${TTT},${BJ},${FU}]`, `+policy_base_url=${vllm.url}`, '+policy_api_key=dummy', '+policy_model_name=Qwen/Qwen3-8B'], 90_000);
    const jobs: [string, Json[]][] = [
      ['tic_tac_toe_gymnasium_agent', [tttRow([5, 3, 7]), tttRow([5, 5, 3, 7], { tools: false })]],
      ['blackjack_gymnasium_agent', [bjRow(seedWhere('hit', 'win'), 'hit')]],
      ['follow_up_conversation_gymnasium_agent', [fuRow(true)]],
    ];
    for (const [agent, input] of jobs) {
      const output = join(dir, `rl-${agent}.jsonl`);
      const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, `+agent_name=${agent}`, `+input_jsonl_fpath=${writeJsonl(`rl-${agent}-in.jsonl`, input)}`, `+output_jsonl_fpath=${output}`]);
      expect(r.code, `${agent}: ${r.stdout}\n${r.stderr}\n${stack.output().slice(-3000)}`).toBe(0);
      out.push(...readJsonl(output));
    }
  }, 240_000);

  afterAll(async () => {
    await stack?.stop();
    await vllm?.close();
  });

  it('every rollout is scored, multi-turn, and passes NeMo-RL\'s contiguity walk; the environment\'s turns carry no token ids', () => {
    expect(out).toHaveLength(4);
    for (const row of out) {
      const output = row.response.output as Json[];
      const walk = nemoRlContiguity(output) as { ok: boolean; turns: number };
      expect(walk, JSON.stringify(row.info)).toMatchObject({ ok: true });
      expect(walk.turns).toBeGreaterThanOrEqual(2);
      expect(typeof row.reward).toBe('number');
      // Observations and tool outputs are input, not generations: no token ids on them.
      for (const item of output.filter((o) => o.role === 'user' || o.type === 'function_call_output')) expect(hasTokenFields(item)).toBe(false);
      expect(output.filter((o) => hasTokenFields(o)).length).toBe(walk.turns);
    }
    expect(out.map((r) => r.reward).sort()).toEqual([0.9, 1, 1, 1].sort());
  });
});
