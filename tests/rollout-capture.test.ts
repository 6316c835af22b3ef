/**
 * Token capture for agents we do not control: a harness-like client drives multi-call rollouts
 * through vllm_model's `/ng-rollout/<id>/v1/chat/completions` against the trainer's vLLM stand-in
 * (real Qwen3 tokenizer and chat template). The client never sends token bundles back — as a
 * harness CLI does not — so the stand-in's repair has nothing to repair from: each prompt is the
 * chat template's rendering of the history the harness kept. Capture records the prompt ids the
 * engine actually used; the trajectory builder chains calls by token prefix. Where the re-rendered
 * history equals what the model generated, the rollout is one chain; where it drifted (reasoning
 * dropped, tool arguments re-serialised, history compacted), a new chain starts and the sample is
 * masked. Every single-chain trajectory must pass NeMo-RL's contiguity walk. (The stand-in does
 * not stream; streamed capture is tested in responses_api_models/vllm_model/tests/capture.test.ts.)
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaptureEntry, Trajectory } from '@nemo-gym/core/capture';
import { ChatChunkAccumulator, parseSseStream } from '@nemo-gym/core/openai';
import { nemoRlContiguity, startTrainerVllm, type Json as StandinJson, type PolicyContext, type ScriptedTurn, type TrainerVllm } from '@nemo-gym/trainer-vllm';
import { server } from '../responses_api_models/vllm_model/app.js';

type Json = Record<string, any>;

/** How the harness keeps its history. */
const VARIANTS = {
  /**
   * Keeps the assistant message as received (vllm_model with a reasoning parser gives reasoning as
   * `<think>` text in content); the model writes arguments as the parser re-serialises them.
   */
  faithful: { keepReasoning: true, compactArgs: false, compactAt: -1, stream: false },
  /** Drops the `<think>` reasoning from the history it sends back (many harnesses show and keep only the visible text). */
  drops_reasoning: { keepReasoning: false, compactAt: -1, compactArgs: false, stream: false },
  /** The model writes compact JSON arguments; the tool parser re-serialises them with spaces. */
  compact_args: { keepReasoning: true, compactArgs: true, compactAt: -1, stream: false },
  /** Compacts its history after the second call (a summary replaces the earlier turns). */
  compacting: { keepReasoning: true, compactArgs: false, compactAt: 2, stream: false },
} as const;
type Variant = keyof typeof VARIANTS;
const CALLS = 4;
const ROLLOUTS_PER_VARIANT = 3;

const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];

function policy(ctx: PolicyContext): ScriptedTurn {
  const messages = ctx.messages as Json[];
  const done = messages.filter((m) => m.role === 'tool').length;
  const user = String(messages.find((m) => m.role === 'user')?.content ?? '');
  const compact = user.includes('[compact-args]');
  if (done >= CALLS - 1 && !user.includes('[compacted]')) return { reasoning: 'I have them all.', content: 'It is cold everywhere.' };
  if (user.includes('[compacted]') && done >= 1) return { reasoning: 'Done after the summary.', content: 'Cold.' };
  const args = { city: `City ${done}` };
  return { reasoning: `Step ${done + 1}: call the tool.`, toolCalls: [{ name: 'get_weather', arguments: args, argumentsText: compact ? JSON.stringify(args) : `{"city": "City ${done}"}` }] };
}

let standin: TrainerVllm;
let modelUrl = '';
let closeModel: () => Promise<void>;
const results = new Map<string, { variant: Variant; trajectory: Trajectory; capture: CaptureEntry[]; standinPrompts: number[][] }>();

async function chat(rolloutId: string, messages: Json[], stream: boolean): Promise<Json> {
  const r = await fetch(`${modelUrl}/ng-rollout/${rolloutId}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer dummy-per-rollout-key' },
    body: JSON.stringify({ model: 'Qwen/Qwen3-8B', messages, tools, temperature: 1, stream }),
  });
  expect(r.status, await r.clone().text()).toBe(200);
  if (!stream) return (await r.json()) as Json;
  const acc = new ChatChunkAccumulator();
  for await (const e of parseSseStream(r.body!)) if (e.data !== '[DONE]') acc.add(JSON.parse(e.data) as Json);
  return acc.completion() as Json;
}

/** One harness rollout: call, append the assistant message (without any token fields) and a tool result, repeat. */
async function harnessRollout(rolloutId: string, variant: Variant): Promise<void> {
  const v = VARIANTS[variant];
  const marker = v.compactArgs ? ' [compact-args]' : '';
  let messages: Json[] = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: `What is the weather in three cities?${marker} (${rolloutId})` }];
  for (let call = 0; call < CALLS + 1; call++) {
    if (call === v.compactAt) {
      messages = [messages[0]!, { role: 'user', content: `[compacted] Summary: two cities were cold. Continue.${marker} (${rolloutId})` }];
    }
    const completion = await chat(rolloutId, messages, v.stream);
    const m = completion.choices[0].message as Json;
    const content = typeof m.content === 'string' && !v.keepReasoning ? m.content.replace(/<think>[\s\S]*?<\/think>\s*/g, '') : m.content;
    const kept: Json = { role: 'assistant', content: content ?? null };
    if (m.tool_calls?.length) kept.tool_calls = m.tool_calls;
    messages.push(kept);
    if (!m.tool_calls?.length) return;
    for (const tc of m.tool_calls as Json[]) messages.push({ role: 'tool', tool_call_id: tc.id, content: `{"temperature": ${call}}` });
  }
}

beforeAll(async () => {
  standin = await startTrainerVllm({ policy, reasoningParser: true });
  const app = await server.build({
    config: {
      name: 'policy_model', base_url: standin.url, api_key: 'dummy', model: 'Qwen/Qwen3-8B', return_token_id_information: true,
      uses_reasoning_parser: true, request_prompt_and_generation_token_ids: false, health_check_interval_s: 0,
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  modelUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  closeModel = () => app.close();
  for (const variant of Object.keys(VARIANTS) as Variant[]) {
    for (let k = 0; k < ROLLOUTS_PER_VARIANT; k++) {
      const id = `${variant.replaceAll('_', '')}-${k}`;
      const before = standin.calls.length;
      await harnessRollout(id, variant);
      const standinPrompts = standin.calls.slice(before).filter((c) => c.path === '/v1/chat/completions').map((c) => c.promptIds);
      const capture = ((await (await fetch(`${modelUrl}/ng-rollout/${id}/capture`)).json()) as { calls: CaptureEntry[] }).calls;
      const trajectory = (await (await fetch(`${modelUrl}/ng-rollout/${id}/trajectory`)).json()) as Trajectory;
      results.set(id, { variant, trajectory, capture, standinPrompts });
    }
  }
  const table = (Object.keys(VARIANTS) as Variant[]).map((variant) => {
    const rs = [...results.values()].filter((r) => r.variant === variant);
    const single = rs.filter((r) => r.trajectory.metrics.chains === 1 && !r.trajectory.mask_sample);
    return `${variant}: ${rs.length} rollouts, ${rs.reduce((s, r) => s + r.capture.length, 0)} calls, single-chain ${single.length}, contiguous ${single.filter((r) => nemoRlContiguity(r.trajectory.output as StandinJson[]).ok).length}, masked ${rs.filter((r) => r.trajectory.mask_sample).length}, chains ${rs.map((r) => r.trajectory.metrics.chains).join('/')}, delivered ${rs.map((r) => r.trajectory.metrics.delivered_fraction).join('/')}`;
  });
  console.log(`rollout capture through the stand-in:\n  ${table.join('\n  ')}`);
}, 120_000);

afterAll(async () => {
  await closeModel?.();
  await standin?.close();
});

describe('capture + trajectory builder through vllm_model and the real-tokenizer stand-in', () => {
  it('capture records, per call, exactly the prompt ids the engine used and the ids it generated', () => {
    for (const [id, r] of results) {
      expect(r.capture.length, id).toBe(r.standinPrompts.length);
      const byPrompt = (a: number[], b: number[]) => a.length - b.length;
      expect(r.capture.map((e) => e.prompt_token_ids!).sort(byPrompt), id).toEqual(r.standinPrompts.slice().sort(byPrompt));
      for (const e of r.capture) {
        expect(e).toMatchObject({ rollout_id: id, route: '/v1/chat/completions', has_token_ids: true });
        expect(e.generation_log_probs!.length).toBe(e.generation_token_ids!.length);
      }
    }
  });

  it('100 % of single-chain trajectories pass NeMo-RL\'s contiguity walk, and carry every generated token', () => {
    const single = [...results.values()].filter((r) => !r.trajectory.mask_sample);
    expect(single.length).toBeGreaterThan(0);
    for (const r of single) {
      expect(r.trajectory.metrics.chains).toBe(1);
      expect(nemoRlContiguity(r.trajectory.output as StandinJson[])).toEqual({ ok: true, turns: r.capture.length });
      expect(r.trajectory.metrics.delivered_fraction).toBe(1);
    }
  });

  it('a harness that keeps its history as the model wrote it gives one chain per rollout', () => {
    for (const r of [...results.values()].filter((x) => x.variant.startsWith('faithful'))) {
      expect(r.trajectory.mask_sample, r.trajectory.failure_reason ?? '').toBe(false);
      expect(r.trajectory.chains).toHaveLength(1);
    }
  });

  it('drifted or compacted histories start new chains and are masked with a reason, never trained silently', () => {
    for (const r of [...results.values()].filter((x) => !x.variant.startsWith('faithful'))) {
      expect(r.trajectory.mask_sample).toBe(true);
      expect(r.trajectory.metrics.chains).toBeGreaterThan(1);
      expect(r.trajectory.failure_reason).toMatch(/new chain/);
      // The main chain that is delivered (for inspection) is still contiguous.
      expect(nemoRlContiguity(r.trajectory.output as StandinJson[]).ok).toBe(true);
    }
  });

  it('the trajectory route released the capture', async () => {
    const [id] = results.keys();
    expect((await fetch(`${modelUrl}/ng-rollout/${id}/capture`)).status).toBe(404);
  });
});
