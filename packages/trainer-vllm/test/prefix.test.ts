import { AssertionError } from 'node:assert';
import { describe, expect, it } from 'vitest';
import { nemoRlContiguity, replacePrefixTokens } from '@nemo-gym/trainer-vllm';

const plain = (ids: number[]) => ids.join(' ');

describe('replacePrefixTokens (NeMo-RL replace_prefix_tokens)', () => {
  it('gives the documented output of the docstring example', () => {
    const prefillT1 = [11, 12, 13, 40, 41];
    const modelOutput = [220, 17, 2]; // " 4" + EOS
    const out = replacePrefixTokens(2, [...prefillT1, ...modelOutput], [11, 12, 13, 40, 41, 1001, 2], [11, 12, 13, 40, 41, 1001, 2, 21, 22, 40, 41], plain);
    expect(out).toEqual([11, 12, 13, 40, 41, 220, 17, 2, 21, 22, 40, 41]);
  });

  it('cuts by EOS count when the template drops the earlier reasoning', () => {
    // Turn 1 generated a think block [50 51 52] before its answer [60]; the re-rendered history has no think block,
    // so positions shift but the count of EOS tokens up to the last assistant message does not.
    const model = [1, 5, 2, 7, 50, 51, 52, 60, 2];
    const templatePrefix = [1, 5, 2, 7, 60, 2];
    const template = [1, 5, 2, 7, 60, 2, 9, 30, 31, 2, 7];
    expect(replacePrefixTokens(2, model, templatePrefix, template, plain)).toEqual([1, 5, 2, 7, 50, 51, 52, 60, 2, 9, 30, 31, 2, 7]);
  });

  it('keeps a generation that stopped without EOS whole and resumes at the template EOS', () => {
    expect(replacePrefixTokens(2, [1, 5, 2, 7, 60, 61], [1, 5, 2, 7, 60, 2], [1, 5, 2, 7, 60, 2, 9, 7], plain)).toEqual([1, 5, 2, 7, 60, 61, 2, 9, 7]);
  });

  it('returns the template when there is no prefix', () => {
    expect(replacePrefixTokens(2, [], [1, 2], [1, 2, 3], plain)).toEqual([1, 2, 3]);
  });

  it('throws an AssertionError naming the EOS it could not find, with the ids and their text', () => {
    let caught: unknown;
    try {
      replacePrefixTokens(2, [1, 5, 2, 7, 60, 2], [1, 5, 2, 7, 60, 2], [1, 5, 2, 7, 60], plain);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AssertionError);
    const message = (caught as Error).message;
    expect(message).toContain('EOS token #2 not found in template_token_ids (only found 1 EOS tokens total)!');
    expect(message).toContain('Template prefix token IDs (everything before the final assistant message): [1, 5, 2, 7, 60, 2]');
    expect(message).toContain('Template token IDs (everything that was sent to the model endpoint): [1, 5, 2, 7, 60]');
    expect(message).toContain("Template repr (detokenized): '1 5 2 7 60'");
  });

  it('decodes with the Qwen3 tokenizer by default in the assertion message', () => {
    expect(() => replacePrefixTokens(151645, [9707, 151645], [9707, 151645], [9707])).toThrow("Template prefix repr (detokenized): 'Hello<|im_end|>'");
  });
});

describe('nemoRlContiguity (NeMo-RL nemo_gym.py walk)', () => {
  const msg = (p: number[], g: number[], extra: Record<string, unknown> = {}) => ({ type: 'message', role: 'assistant', prompt_token_ids: p, generation_token_ids: g, generation_log_probs: g.map(() => -0.5), ...extra });

  it('accepts prompts that extend everything seen, skipping items without generation tokens', () => {
    const items = [
      { type: 'reasoning', summary: [] },
      msg([1, 2, 3], [4, 5]),
      { type: 'function_call_output', call_id: 'c', output: 'x' },
      msg([1, 2, 3, 4, 5, 6, 7], [8]),
      msg([1, 2, 3, 4, 5, 6, 7], []), // empty generation: not trainable, not checked
      msg([1, 2, 3, 4, 5, 6, 7, 8, 9], [10, 11]),
    ];
    expect(nemoRlContiguity(items)).toEqual({ ok: true, turns: 3 });
    expect(nemoRlContiguity([])).toEqual({ ok: true, turns: 0 });
  });

  it('rejects a prompt that differs from what was seen, naming the turn and the first differing index', () => {
    const r = nemoRlContiguity([msg([1, 2, 3], [4, 5]), msg([1, 2, 3, 4, 99, 6], [7])]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.turn).toBe(1);
    expect(r.firstDifference).toBe(4);
    expect(r.message).toMatch(/^Non-contiguous messages found!/);
    expect(r.message).toContain('Seen token IDs: [1, 2, 3, 4, 5]');
  });

  it('rejects a prompt shorter than what was seen (truncated history)', () => {
    const r = nemoRlContiguity([msg([1, 2, 3], [4, 5]), msg([1, 2, 3], [6])]);
    expect(r).toMatchObject({ ok: false, turn: 1, firstDifference: 3 });
  });
});
