/**
 * The AI SDK agent end to end (ng-run + ng-collect-rollouts): simple_weather and
 * multineedle on the replay model and on vllm_model in front of the trainer's vLLM stand-in, next
 * to simple_agent on the same scripted model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nemoRlContiguity } from '@nemo-gym/trainer-vllm';
import { ENVS, runExample, type ExampleResults, type Json } from '../../../tests/helpers/agent-examples.js';

const AGENTS = { simple_weather: 'simple_weather_ai_sdk_agent', multineedle: 'multineedle_ai_sdk_agent' } as const;
const SIMPLE = { simple_weather: 'simple_weather_simple_agent', multineedle: 'multineedle_simple_agent' } as const;

let results: ExampleResults;

beforeAll(async () => {
  results = await runExample({ config: 'responses_api_agents/ai_sdk_agent/configs/ai_sdk_agent.yaml', agents: AGENTS });
  for (const run of [results.replay, results.vllm]) for (const env of ENVS) {
    const line = (r: Json) => `${r._ng_task_index}: reward ${r.reward}, mask ${r.mask_sample ?? false} ${r.failure_reason ?? ''}`.slice(0, 300);
    console.log(`${env} ${AGENTS[env]}:\n  ${run.rows.get(AGENTS[env])!.map(line).join('\n  ')}`);
  }
}, 120_000);

afterAll(async () => {
  await results?.close();
});

describe('ai_sdk_agent', () => {
  it('rewards match simple_agent\'s, row for row, on the replay model and on the vLLM stand-in', () => {
    for (const run of [results.replay, results.vllm]) {
      for (const env of ENVS) {
        const mine = run.rows.get(AGENTS[env])!;
        expect(mine).toHaveLength(5);
        expect(mine.map((r) => r.reward)).toEqual(run.rows.get(SIMPLE[env])!.map((r) => r.reward));
      }
    }
    // multineedle's wrong submission scores 0 for both agents: the rewards are the verifier's, not a constant.
    expect(results.vllm.rows.get(AGENTS.multineedle)!.map((r) => r.reward)).toEqual([1, 0, 1, 1, 1]);
  });

  it('replay model (no token ids): scored from the agent\'s own tool calls, masked with the reason', () => {
    for (const env of ENVS) {
      for (const r of results.replay.rows.get(AGENTS[env])!) {
        expect(r.mask_sample).toBe(true);
        expect(r.failure_reason).toMatch(/have no token ids/);
        expect(r.response.metadata.trajectory_source).toBe('agent_tool_calls');
        expect(r.agent_run.tool_calls).toBe(env === 'simple_weather' ? 1 : 3);
      }
    }
  });

  it('vLLM stand-in: token ids from the capture, one chain, contiguous for NeMo-RL', () => {
    for (const env of ENVS) {
      for (const r of results.vllm.rows.get(AGENTS[env])!) {
        expect(r.mask_sample, r.failure_reason).toBeUndefined();
        expect(r.response.metadata.trajectory_source).toBe('capture_prefix_merging');
        const turns = (r.response.output as Json[]).filter((i) => Array.isArray(i.generation_token_ids) && i.generation_token_ids.length > 0).length;
        expect(nemoRlContiguity(r.response.output)).toEqual({ ok: true, turns });
      }
    }
  });
});
