/**
 * The end-to-end check every in-process example agent (responses_api_agents/openai_agents_agent,
 * langgraph_agent, ai_sdk_agent) passes: its rollouts on simple_weather and multineedle, collected
 * with ng-run + ng-collect-rollouts as a user would, against
 *
 *   - the replay model (recordings written here: the same model turns whoever asks), and
 *   - vllm_model in front of the trainer's vLLM stand-in (real Qwen3 tokenizer and chat template,
 *     a scripted policy),
 *
 * next to simple_agent's rollouts of the same rows on the same scripted model. The rewards must be
 * the same row for row; the token ids come from the model server's capture.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pyJsonDumps } from '@nemo-gym/core/py';
import { nemoRlContiguity, startTrainerVllm, type PolicyContext, type ScriptedTurn, type TrainerVllm } from '@nemo-gym/trainer-vllm';
import { synonymValue } from '../../resources_servers/multineedle/src/score.js';
import { ROOT, runCommand, startStack } from './stack.js';

export type Json = Record<string, any>;
export type Env = 'simple_weather' | 'multineedle';
export const ENVS: readonly Env[] = ['simple_weather', 'multineedle'];

const ENV_CONFIGS = ['resources_servers/simple_weather/configs/simple_weather.yaml', 'resources_servers/multineedle/configs/multineedle.yaml'];
const REPLAY = 'responses_api_models/replay_model/configs/replay_model.yaml';
const VLLM = 'responses_api_models/vllm_model/configs/vllm_model_for_training.yaml';
/** multineedle's task that the scripted model gets wrong (reversed values): reward 0 for every agent. */
const WRONG_TASK = 1;

export const readJsonl = (p: string): Json[] =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Json);

/**
 * The rows: each environment's five example rows. simple_weather's instruction is given as a
 * `system` message (the OpenAI Agents SDK has no `developer` role; every agent gets the same rows).
 */
export function exampleRows(env: Env): Json[] {
  const rows = readJsonl(join(ROOT, `resources_servers/${env}/data/example.jsonl`));
  for (const r of rows) for (const i of r.responses_create_params.input) if (i.role === 'developer') i.role = 'system';
  return rows;
}

/** multineedle: the synonyms to look up and the list to submit (reversed on WRONG_TASK). */
function needlePlan(row: Json): { synonyms: string[]; submit: number[] } {
  const synonyms: string[] = row.expected_synonyms;
  const values = synonyms.map(synonymValue);
  return { synonyms, submit: row.id === WRONG_TASK ? [...values].reverse() : values };
}

/** A chat message's text: its string content, or its text parts joined (as vLLM joins them, with newlines). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? content.map((p: Json) => (typeof p?.text === 'string' ? p.text : '')).join('\n') : '';
}

const call = (name: string, args: Json) => ({ name, arguments: args, argumentsText: pyJsonDumps(args) });

/**
 * The scripted policy of the vLLM stand-in: simple_weather asks get_weather for the city in the
 * question, then answers; multineedle looks up each synonym, submits, then answers. Arguments are
 * written as Python's json.dumps writes them, so the chat template renders a re-sent history with
 * the very tokens the model generated.
 */
export function scriptedPolicy(rows: Record<Env, Json[]>): (ctx: PolicyContext) => ScriptedTurn {
  return (ctx) => {
    const messages = ctx.messages as Json[];
    const user = contentText(messages.find((m) => m.role === 'user')?.content);
    const done = messages.filter((m) => m.role === 'tool').length;
    const needle = rows.multineedle.find((r) => r.responses_create_params.input.some((i: Json) => i.role === 'user' && i.content === user));
    if (needle) {
      const plan = needlePlan(needle);
      if (done < plan.synonyms.length) return { toolCalls: [call('get_synonym_value', { synonym: plan.synonyms[done] })] };
      if (done === plan.synonyms.length) return { toolCalls: [call('extract_synonym_values', { synonym_values: plan.submit })] };
      return { content: 'Submitted.' };
    }
    const city = /(?:in|to|for) ([A-Z][a-z]+(?: [A-Z][a-z]+)*)/.exec(user)?.[1] ?? 'Paris';
    return done === 0 ? { toolCalls: [call('get_weather', { city })] } : { content: `It is cold in ${city}.` };
  };
}

/**
 * Recordings for the replay model: each row's trajectory under the scripted policy above (compact
 * JSON arguments, as a client's JSON.stringify writes them), so the replay answers every agent's
 * requests the same way.
 */
function recordings(rows: Record<Env, Json[]>): Json[] {
  const out: Json[] = [];
  for (const env of ENVS) {
    rows[env].forEach((row, t) => {
      const items: Json[] = [];
      const tool = (k: number, name: string, args: Json, output: Json) => {
        items.push({ type: 'function_call', id: `fc_${env}_${t}_${k}`, call_id: `call_${env}_${t}_${k}`, name, arguments: JSON.stringify(args), status: 'completed' });
        items.push({ type: 'function_call_output', call_id: `call_${env}_${t}_${k}`, output: JSON.stringify(output) });
      };
      let answer: string;
      if (env === 'multineedle') {
        const plan = needlePlan(row);
        plan.synonyms.forEach((s, k) => tool(k, 'get_synonym_value', { synonym: s }, { synonym_value: synonymValue(s) }));
        tool(plan.synonyms.length, 'extract_synonym_values', { synonym_values: plan.submit }, { success: true });
        answer = 'Submitted.';
      } else {
        const user = String(row.responses_create_params.input.find((i: Json) => i.role === 'user').content);
        const city = /(?:in|to|for) ([A-Z][a-z]+(?: [A-Z][a-z]+)*)/.exec(user)?.[1] ?? 'Paris';
        tool(0, 'get_weather', { city }, { city, weather_description: `The weather in ${city} is cold.` });
        answer = `It is cold in ${city}.`;
      }
      items.push({ type: 'message', id: `msg_${env}_${t}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: answer, annotations: [] }] });
      out.push({ responses_create_params: row.responses_create_params, response: { id: `resp_${env}_${t}`, created_at: 1763700000, error: null, incomplete_details: null, instructions: null, metadata: null, model: 'scripted', object: 'response', output: items, parallel_tool_calls: true, temperature: null, tool_choice: 'auto', tools: [], top_p: null, status: 'completed', usage: null } });
    });
  }
  return out;
}

export interface ExampleRun {
  /** Rows of each agent instance, by task index. */
  rows: Map<string, Json[]>;
}

export interface ExampleSpec {
  /** The example's config (both agent instances). */
  config: string;
  /** Its instance names, by environment. */
  agents: Record<Env, string>;
}

const SIMPLE_AGENTS: Record<Env, string> = { simple_weather: 'simple_weather_simple_agent', multineedle: 'multineedle_simple_agent' };

async function collectBoth(spec: ExampleSpec, dir: string, tag: string, model: string, modelArgs: string[], inputs: Record<Env, string>): Promise<ExampleRun> {
  const stack = await startStack([`+config_paths=[${[model, ...ENV_CONFIGS, spec.config].join(',')}]`, ...modelArgs], 90_000);
  const out: ExampleRun = { rows: new Map() };
  try {
    // One environment at a time: two collections at once would both name their rollouts 0-0, 1-0, …
    // on the one model server, and the example's per-rollout captures would mix. simple_agent
    // (no per-rollout routes) runs beside the example.
    for (const env of ENVS) {
      await Promise.all(
        [SIMPLE_AGENTS[env], spec.agents[env]].map(async (agent) => {
          const output = join(dir, `${tag}-${agent}.jsonl`);
          const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, `+agent_name=${agent}`, `+input_jsonl_fpath=${inputs[env]}`, `+output_jsonl_fpath=${output}`]);
          if (r.code !== 0) throw new Error(`${tag} ${agent}: ng-collect-rollouts exited ${r.code}\n${r.stdout}\n${r.stderr}\n${stack.output().slice(-3000)}`);
          out.rows.set(agent, readJsonl(output).sort((a, b) => a._ng_task_index - b._ng_task_index));
        }),
      );
    }
  } finally {
    await stack.stop();
  }
  return out;
}

export interface ExampleResults {
  replay: ExampleRun;
  vllm: ExampleRun;
  standin: TrainerVllm;
  close: () => Promise<void>;
}

/** Collects both environments with the example and with simple_agent, on the replay model and on the vLLM stand-in. */
export async function runExample(spec: ExampleSpec): Promise<ExampleResults> {
  const dir = mkdtempSync(join(tmpdir(), 'ng-agent-example-'));
  const rows = { simple_weather: exampleRows('simple_weather'), multineedle: exampleRows('multineedle') };
  const inputs = {} as Record<Env, string>;
  for (const env of ENVS) {
    inputs[env] = join(dir, `${env}.jsonl`);
    writeFileSync(inputs[env], rows[env].map((r) => `${JSON.stringify(r)}\n`).join(''));
  }
  const recorded = join(dir, 'recordings.jsonl');
  writeFileSync(recorded, recordings(rows).map((r) => `${JSON.stringify(r)}\n`).join(''));
  const standin = await startTrainerVllm({ policy: scriptedPolicy(rows), reasoningParser: true });
  const close = async () => {
    await standin.close();
    if (!process.env.NG_KEEP_EXAMPLE_DIR) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const replay = await collectBoth(spec, dir, 'replay', REPLAY, [`++policy_model.responses_api_models.replay_model.recordings_jsonl_fpaths=[${recorded}]`], inputs);
    const vllm = await collectBoth(spec, dir, 'vllm', VLLM, [`+policy_base_url=${standin.url}`, '+policy_api_key=dummy', '+policy_model_name=Qwen/Qwen3-8B'], inputs);
    return { replay, vllm, standin, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The example's tests: collected as above, its rewards equal simple_agent's row for row on both
 * models; on the replay model (no token ids) its rows are scored from its own tool calls and
 * masked with the reason; on the vLLM stand-in each rollout is one chain with token ids that passes
 * NeMo-RL's contiguity walk (the three frameworks keep their history append-only).
 */
export function describeExample(name: string, spec: ExampleSpec): void {
  const agents = spec.agents;
  let results: ExampleResults;

  beforeAll(async () => {
    results = await runExample(spec);
    for (const [model, run] of [['replay', results.replay], ['vllm', results.vllm]] as const) {
      for (const env of ENVS) {
        const line = (r: Json) => `${r._ng_task_index}: reward ${r.reward}, mask ${r.mask_sample ?? false} ${r.failure_reason ?? ''}`.slice(0, 160);
        console.log(`${model} ${agents[env]}:\n  ${run.rows.get(agents[env])!.map(line).join('\n  ')}`);
      }
    }
  }, 120_000);

  afterAll(async () => {
    await results?.close();
  });

  describe(name, () => {
    it('rewards match simple_agent\'s, row for row, on the replay model and on the vLLM stand-in', () => {
      for (const run of [results.replay, results.vllm]) {
        for (const env of ENVS) {
          const mine = run.rows.get(agents[env])!;
          expect(mine).toHaveLength(5);
          expect(mine.map((r) => r.reward)).toEqual(run.rows.get(SIMPLE_AGENTS[env])!.map((r) => r.reward));
        }
      }
      // multineedle's wrong submission scores 0 for both agents: the rewards are the verifier's, not a constant.
      expect(results.vllm.rows.get(agents.multineedle)!.map((r) => r.reward)).toEqual([1, 0, 1, 1, 1]);
    });

    it('replay model (no token ids): scored from the agent\'s own tool calls, masked with the reason', () => {
      const needles = exampleRows('multineedle');
      for (const env of ENVS) {
        for (const r of results.replay.rows.get(agents[env])!) {
          expect(r.mask_sample).toBe(true);
          expect(r.failure_reason).toMatch(/have no token ids/);
          expect(r.response.metadata.trajectory_source).toBe('agent_tool_calls');
          expect(r.agent_run.tool_calls).toBe(env === 'simple_weather' ? 1 : needles[r._ng_task_index]!.expected_synonyms.length + 1);
        }
      }
    });

    it('vLLM stand-in: token ids from the capture, one chain, contiguous for NeMo-RL', () => {
      for (const env of ENVS) {
        for (const r of results.vllm.rows.get(agents[env])!) {
          expect(r.mask_sample, r.failure_reason).toBeUndefined();
          expect(r.response.metadata.trajectory_source).toBe('capture_prefix_merging');
          const turns = (r.response.output as Json[]).filter((i) => Array.isArray(i.generation_token_ids) && i.generation_token_ids.length > 0).length;
          expect(turns).toBe(r.agent_run.tool_calls + 1);
          expect(nemoRlContiguity(r.response.output)).toEqual({ ok: true, turns });
        }
      }
    });
  });
}
