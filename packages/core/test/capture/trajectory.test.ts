import { describe, expect, it } from 'vitest';
import { tokenSequence } from '../../../bridge/src/tokens.js';
import { type CaptureEntry } from '@nemo-gym/core/capture';
import { applyTrajectory, buildTrajectory, expandPromptDeltas, outputItemsJson, trajectoryJson } from '../../src/capture/trajectory.js';

let clock = 1000;
/** One captured call: prompt ids, generated ids (log-prob -0.k for each). */
function call(id: string, prompt: number[], gen: number[], extra: Partial<CaptureEntry> = {}): CaptureEntry {
  clock += 10;
  return {
    rollout_id: 'r-0',
    call_id: id,
    seq: 0,
    route: '/v1/chat/completions',
    model: 'm',
    stream: false,
    started_at: clock,
    ended_at: clock + 5,
    has_token_ids: true,
    missing_ids_reason: null,
    prompt_token_ids: prompt,
    generation_token_ids: gen,
    generation_log_probs: gen.map((_, k) => -(k + 1) / 10),
    finish_reason: 'stop',
    request: {},
    output_items: null,
    chat_message: { role: 'assistant', content: `answer of ${id}` },
    bytes: 0,
    ...extra,
  };
}

function shuffled<T>(xs: T[], seed: number): T[] {
  const out = xs.slice();
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** An append-only three-call rollout: system+user, then tool results appended after each generation. */
const a = call('a', [1, 2, 3], [10, 11]);
const b = call('b', [1, 2, 3, 10, 11, 20, 21], [12, 13, 14]);
const c = call('c', [1, 2, 3, 10, 11, 20, 21, 12, 13, 14, 30], [15]);

describe('buildTrajectory (prefix merging)', () => {
  it('an append-only rollout is one chain: prompts extend what came before, generated tokens get loss mask 1 and tool tokens 0', () => {
    const t = buildTrajectory({ rollout_id: 'r-0', calls: [a, b, c] });
    expect(t.mask_sample).toBe(false);
    expect(t.failure_reason).toBeNull();
    expect(t.chains).toEqual([{ chain_id: 'main', call_ids: ['a', 'b', 'c'] }]);
    expect(t.metrics).toMatchObject({ calls: 3, roots: 1, chains: 1, generated_tokens_captured: 6, generated_tokens_delivered: 6, delivered_fraction: 1 });
    const gens = t.output.filter((i) => Array.isArray(i.generation_token_ids));
    expect(gens.map((i) => i.prompt_token_ids)).toEqual([a.prompt_token_ids, b.prompt_token_ids, c.prompt_token_ids]);
    // The content of each call is kept beside its tokens.
    expect(JSON.stringify(t.output)).toContain('answer of b');
    // What ng-export reads: one sequence, mask 1 exactly on the generated tokens.
    const seq = tokenSequence({ response: { output: t.output } });
    expect(seq.input_ids).toEqual([1, 2, 3, 10, 11, 20, 21, 12, 13, 14, 30, 15]);
    expect(seq.loss_mask).toEqual([0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1]);
    expect(seq.logprobs).toEqual([0, 0, 0, -0.1, -0.2, 0, 0, -0.1, -0.2, -0.3, 0, -0.1]);
  });

  it('the capture order does not matter', () => {
    const first = buildTrajectory({ rollout_id: 'r-0', calls: [a, b, c] });
    for (const seed of [1, 2, 3, 4, 5]) expect(buildTrajectory({ rollout_id: 'r-0', calls: shuffled([c, a, b], seed) })).toEqual(first);
    // A branch from the same root (a sub-agent, a second sample): the chain with more generated tokens is main.
    const withBranch = [a, b, c, call('x', [1, 2, 3, 10, 11, 99], [7]), call('y', [1, 2, 3, 10, 11, 98], [6, 6])];
    const branched = buildTrajectory({ rollout_id: 'r-0', calls: withBranch });
    expect(branched.chains.map((ch) => ch.call_ids)).toEqual([['a', 'b', 'c'], ['a', 'y'], ['a', 'x']]);
    const ref = buildTrajectory({ rollout_id: 'r-0', calls: withBranch });
    for (const seed of [6, 7, 8]) expect(buildTrajectory({ rollout_id: 'r-0', calls: shuffled(withBranch, seed) })).toEqual(ref);
  });

  it('a compacted history (a prompt that does not extend the earlier calls) starts a new chain, and the sample is masked', () => {
    const compacted = call('d', [1, 2, 3, 77, 78], [16, 17]);
    const after = call('e', [1, 2, 3, 77, 78, 16, 17, 31], [18]);
    const t = buildTrajectory({ rollout_id: 'r-0', calls: [a, b, c, compacted, after] });
    expect(t.metrics.roots).toBe(2);
    expect(t.chains.map((ch) => ch.call_ids)).toEqual([['a', 'b', 'c'], ['d', 'e']]);
    expect(t.output.filter((i) => i.generation_token_ids).length).toBe(3);
    const fresh = call('f', [5, 6, 7], [19]);
    const t2 = buildTrajectory({ rollout_id: 'r-0', calls: [a, b, fresh] });
    expect(t2.metrics).toMatchObject({ roots: 2, chains: 2, delivered_fraction: 0.8333 });
    expect(t2.chains[0]).toEqual({ chain_id: 'main', call_ids: ['a', 'b'] });
    expect(t2.chains[1]).toEqual({ chain_id: 'branch-0', call_ids: ['f'] });
    expect(t2.mask_sample).toBe(true);
    expect(t2.failure_reason).toMatch(/2 chains from 2 root\(s\).*new chain/);
    // The main chain is still delivered (contiguous), for inspection.
    expect(() => tokenSequence({ response: { output: t2.output } })).not.toThrow();
    expect(t.mask_sample).toBe(true);
  });

  it('identical candidate parents are ambiguous: the child is quarantined and the sample masked', () => {
    const p1 = call('p1', [1, 2], [3, 4]);
    const p2 = call('p2', [1, 2, 3], [4]);
    const child = call('ch', [1, 2, 3, 4, 5], [6]);
    const t = buildTrajectory({ rollout_id: 'r-0', calls: [child, p2, p1] });
    expect(t.quarantined).toContain('ch');
    expect(t.mask_sample).toBe(true);
    expect(t.failure_reason).toMatch(/quarantined/);
    expect(t.chains.flatMap((ch) => ch.call_ids)).not.toContain('ch');
  });

  it('a retry (same prompt twice) keeps the sibling a later call extended', () => {
    const lost = call('lost', [1, 2, 3], [40, 41]);
    const t = buildTrajectory({ rollout_id: 'r-0', calls: [lost, a, b] });
    expect(t.chains).toEqual([{ chain_id: 'main', call_ids: ['a', 'b'] }]);
    expect(t.quarantined).toEqual(['lost']);
    // A retry of the last call cannot be resolved.
    const t2 = buildTrajectory({ rollout_id: 'r-0', calls: [a, b, call('b2', b.prompt_token_ids!, [50])] });
    expect(t2.metrics.unresolved_retries).toBe(2);
    expect(t2.mask_sample).toBe(true);
  });

  it('a call without token ids masks the sample with a reason naming it', () => {
    const noIds = call('n', [], [], { has_token_ids: false, prompt_token_ids: null, generation_token_ids: null, generation_log_probs: null, missing_ids_reason: 'model server `policy` (OpenAIModel) gave no token ids' });
    const t = buildTrajectory({ rollout_id: 'r-0', calls: [a, noIds, b] });
    expect(t.mask_sample).toBe(true);
    expect(t.failure_reason).toMatch(/1 of 3 call\(s\) have no token ids — n \(\/v1\/chat\/completions\): model server `policy` \(OpenAIModel\)/);
    expect(t.metrics.calls_without_token_ids).toBe(1);
    const incomplete = buildTrajectory({ rollout_id: 'r-0', calls: [a, b], complete: false, problems: ['it was evicted'] });
    expect(incomplete.mask_sample).toBe(true);
    expect(incomplete.failure_reason).toMatch(/incomplete: it was evicted/);
    expect(buildTrajectory({ rollout_id: 'r-0', calls: [] })).toMatchObject({ mask_sample: true, failure_reason: 'the capture has no model calls', output: [] });
  });

  it('calls that generated nothing are left out of the chain; per_call gives each call alone', () => {
    const t = buildTrajectory({ rollout_id: 'r-0', calls: [a, b, call('empty', [1, 2, 3, 10, 11, 20, 21, 12, 13, 14, 30], [])] });
    expect(t.mask_sample).toBe(false);
    expect(t.metrics.empty_generation_calls).toBe(1);
    const pc = buildTrajectory({ rollout_id: 'r-0', calls: [c, a, b] }, 'per_call');
    expect(pc.per_call!.map((p) => p.call_id)).toEqual(['a', 'b', 'c']);
    expect(pc.mask_sample).toBe(true);
    expect(pc.failure_reason).toMatch(/per_call gives 3 trajectories/);
    expect(buildTrajectory({ rollout_id: 'r-0', calls: [a] }, 'per_call')).toMatchObject({ mask_sample: false });
  });

  it('a response whose agent already returned token ids is left as it is', () => {
    const t = buildTrajectory({ rollout_id: 'r-0', calls: [a, b] });
    const own = { output: [{ type: 'message', prompt_token_ids: [9], generation_token_ids: [8], generation_log_probs: [-1] }] };
    expect(applyTrajectory(own, t)).toEqual({ response: own, mask_sample: false, failure_reason: null, replaced: false });
    const plain = { id: 'x', output: [{ type: 'message', content: [] }] };
    const applied = applyTrajectory(plain, t);
    expect(applied.replaced).toBe(true);
    expect(applied.response.output).toBe(t.output);
  });

  it('the trajectory JSON (prompt text reused between items) is the same value JSON.stringify gives', () => {
    const t = buildTrajectory({ rollout_id: 'r-0', calls: [a, b, c, call('f', [5, 6, 7], [19])] });
    expect(JSON.parse(trajectoryJson(t))).toEqual(JSON.parse(JSON.stringify(t)));
    const odd = [
      { type: 'message', prompt_token_ids: [], generation_token_ids: [], generation_log_probs: [] },
      { type: 'function_call', name: 'x' },
      { type: 'message', prompt_token_ids: [1], generation_token_ids: [2], generation_log_probs: [Number.NaN] },
      { type: 'message', prompt_token_ids: [9, 9], generation_token_ids: [3], generation_log_probs: [-0.5] },
      { prompt_token_ids: [9, 9, 3], generation_token_ids: [4], generation_log_probs: [-1e-7] },
    ];
    expect(JSON.parse(outputItemsJson(odd))).toEqual(JSON.parse(JSON.stringify(odd)));
  });

  it('prompts written as deltas carry only their new tokens and expand to the full form', () => {
    const t = buildTrajectory({ rollout_id: 'r-0', calls: [a, b, c, call('f', [5, 6, 7], [19])] });
    const full = JSON.parse(trajectoryJson(t)) as { output: Record<string, unknown>[] };
    const delta = JSON.parse(trajectoryJson(t, 'delta')) as { output: Record<string, unknown>[] };
    const generated = delta.output.filter((i) => Array.isArray(i.generation_token_ids));
    // The first generation item is whole; each later one that continues the chain holds its new tokens only.
    expect(generated[0]!.prompt_continues_previous).toBeUndefined();
    expect(generated.slice(1).every((i) => i.prompt_continues_previous === true)).toBe(true);
    const fullGenerated = full.output.filter((i) => Array.isArray(i.generation_token_ids));
    expect((generated[1]!.prompt_token_ids as number[]).length).toBeLessThan((fullGenerated[1]!.prompt_token_ids as number[]).length);
    expect(expandPromptDeltas(delta.output)).toBeNull();
    expect(delta).toEqual(full);
    // The odd items: a prompt that does not continue the previous one stays whole.
    const odd = [
      { type: 'message', prompt_token_ids: [1], generation_token_ids: [2], generation_log_probs: [-1] },
      { type: 'message', prompt_token_ids: [7, 7], generation_token_ids: [3], generation_log_probs: [-0.5] },
      { type: 'function_call', name: 'x' },
      { type: 'message', prompt_token_ids: [7, 7, 3, 4], generation_token_ids: [5], generation_log_probs: [-2] },
    ];
    const oddDelta = JSON.parse(outputItemsJson(odd, 'delta')) as Record<string, unknown>[];
    expect(oddDelta[1]).not.toHaveProperty('prompt_continues_previous');
    expect(oddDelta[3]).toMatchObject({ prompt_continues_previous: true, prompt_token_ids: [4] });
    expect(expandPromptDeltas(oddDelta)).toBeNull();
    expect(oddDelta).toEqual(odd);
    expect(expandPromptDeltas([{ prompt_continues_previous: true, prompt_token_ids: [1], generation_token_ids: [2] }])).toMatch(/no generation item comes before it/);
  });
});
