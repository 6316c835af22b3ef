/**
 * tau2-bench retail rows with a simulated user: user_simulation_agent against resources_servers/tau2,
 * the policy and the user scripted behind vllm_model (token ids on) and the trainer-vLLM stand-in.
 * The user opens with the scenario's reason for calling and then stops; the policy makes the task's
 * gold calls and answers. tau2's evaluator receives `termination_reason`: a conversation the user
 * ended scores 1.0, one cut off by the turn limit scores 0.0 as tau2 scores a premature end.
 * Runs only where the tau2 server and its data are present.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core/config';
import { nemoRlContiguity, startTrainerVllm, type PolicyContext, type ScriptedTurn } from '@nemo-gym/trainer-vllm';
import { ROOT, runCommand, startStack } from './helpers/stack.js';
import { textOf, userModelYaml, userSimulationAgentYaml } from './helpers/user-model.js';

type Json = Record<string, any>;

const DATA_DIR = sharedPath('tau2', 'retail');
const TAU2 = 'resources_servers/tau2/configs/tau2.yaml';
const EXAMPLE = join(ROOT, 'resources_servers/tau2/data/example.jsonl');
const MODEL = 'responses_api_models/vllm_model/configs/vllm_model_for_training.yaml';
const AGENT = 'responses_api_agents/user_simulation_agent/configs/tau2_user_simulation_agent.yaml';
const missing = !existsSync(join(ROOT, TAU2)) ? `${TAU2} is absent` : !existsSync(join(DATA_DIR, 'db.json')) ? `${DATA_DIR} is absent` : null;
if (missing) console.log(`tau2 simulated-user test skipped: ${missing}`);

const readJsonl = (p: string): Json[] =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));

describe.skipIf(missing !== null)('tau2 retail rows with a simulated user', () => {
  it('the user\'s stop scores the gold conversation 1.0; the turn limit ends it prematurely (0.0)', { timeout: 240_000 }, async () => {
    const rows = readJsonl(EXAMPLE);
    const reason = (row: Json): string => row.user_scenario.instructions.reason_for_call;
    /** The policy: the row's gold calls one by one, then an answer with what it must communicate. */
    const policy = (ctx: PolicyContext): ScriptedTurn => {
      const messages = ctx.messages as Json[];
      const row = rows.find((r) => textOf(messages.find((m) => m.role === 'user')) === reason(r))!;
      const actions = row.evaluation_criteria.actions as { name: string; arguments: Json }[];
      const done = messages.filter((m) => m.role === 'tool').length;
      if (done < actions.length) return { toolCalls: [{ name: actions[done]!.name, arguments: actions[done]!.arguments }] };
      const info = (row.evaluation_criteria.communicate_info as string[]).map((c) => ` It was $${c}.`).join('');
      return { content: `All done.${info}` };
    };
    /** The user: the scenario's reason for calling, then the stop signal. */
    const user = (ctx: PolicyContext): ScriptedTurn => {
      const messages = ctx.messages as Json[];
      const row = rows.find((r) => textOf(messages[0]).includes(r.user_instructions))!;
      return { content: messages.some((m) => m.role === 'assistant') ? 'Thanks, that is all. ###STOP###' : reason(row) };
    };
    const policyVllm = await startTrainerVllm({ policy });
    const userVllm = await startTrainerVllm({ policy: user });
    const dir = mkdtempSync(join(tmpdir(), 'ng-usersim-tau2-'));
    const config = join(dir, 'agents.yaml');
    writeFileSync(
      config,
      // The shipped agent config with a second model for the user, and an agent limited to one user turn.
      userModelYaml(userVllm.url, { tokenIds: false }) + userSimulationAgentYaml('tau2_one_turn_agent', 'tau2', { max_turns: 1, max_steps: 30 }),
    );
    const stack = await startStack(
      [
        `+config_paths=[${MODEL},${TAU2},${AGENT},${config}]`,
        '++tau2_user_simulation_agent.responses_api_agents.user_simulation_agent.user_model_server.name=user_model',
        `+policy_base_url=${policyVllm.url}`,
        '+policy_api_key=dummy',
        '+policy_model_name=Qwen/Qwen3-8B',
        `++tau2.resources_servers.tau2.data_dir=${DATA_DIR}`,
        '++tau2.resources_servers.tau2.data_url=null',
      ],
      90_000,
    );
    try {
      const collect = async (agentName: string) => {
        const out = join(dir, `${agentName}.jsonl`);
        const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, `+agent_name=${agentName}`, `+input_jsonl_fpath=${EXAMPLE}`, `+output_jsonl_fpath=${out}`]);
        expect(r.code, r.stdout + r.stderr + stack.output().slice(-3000)).toBe(0);
        return readJsonl(out);
      };
      const scored = await collect('tau2_user_simulation_agent');
      expect(scored).toHaveLength(5);
      for (const row of scored) {
        expect(row.reward, `${row.task_id}: ${JSON.stringify(row.reward_info)}`).toBe(1.0);
        expect(row.termination_reason).toBe('user_stop');
        expect(row.reward_info.db_check).toEqual({ db_match: true, db_reward: 1.0 });
        expect(row.user_simulation).toMatchObject({ stop_signal: '###STOP###', user_turns: 2, policy_turns: 1 });
        expect(nemoRlContiguity(row.response.output)).toMatchObject({ ok: true });
        const users = (row.response.output as Json[]).filter((o) => o.role === 'user');
        expect(users.map((u) => u.content)).toEqual([reason(row), 'Thanks, that is all. ###STOP###']);
      }
      const cut = await collect('tau2_one_turn_agent');
      expect(cut).toHaveLength(5);
      for (const row of cut) {
        expect(row.termination_reason).toBe('max_turns');
        expect(row.reward).toBe(0.0);
        expect(row.reward_info.info.note).toBe('Simulation terminated prematurely. Termination reason: max_turns');
      }
    } finally {
      await stack.stop();
      await policyVllm.close();
      await userVllm.close();
    }
  });
});
