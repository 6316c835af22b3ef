/**
 * NeMo-RL's check on a rollout (nemo_rl/environments/nemo_gym.py): walking the output items whose
 * `generation_token_ids` is non-empty, each item's `prompt_token_ids` must start with every token
 * seen so far; then its prompt and generation become what was seen.
 */
import type { Json } from './tokenizer.js';

export type ContiguityResult =
  | { ok: true; turns: number }
  | { ok: false; turn: number; firstDifference: number; message: string };

function ids(v: Json | undefined): number[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === 'number') ? (v as number[]) : undefined;
}

function shown(list: number[]): string {
  return `[${list.join(', ')}]`;
}

export function nemoRlContiguity(outputItems: Json[]): ContiguityResult {
  let seen: number[] = [];
  let turn = 0;
  for (const item of outputItems) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    const generation = ids(item.generation_token_ids);
    if (!generation || generation.length === 0) continue;
    const prompt = ids(item.prompt_token_ids);
    if (!prompt) {
      return { ok: false, turn, firstDifference: 0, message: `Non-contiguous messages found! Output item of turn ${turn} has generation_token_ids but no prompt_token_ids list.` };
    }
    let firstDifference = -1;
    for (let i = 0; i < seen.length; i++) {
      if (i >= prompt.length || prompt[i] !== seen[i]) {
        firstDifference = i;
        break;
      }
    }
    if (firstDifference >= 0) {
      return {
        ok: false,
        turn,
        firstDifference,
        message:
          `Non-contiguous messages found! Turn ${turn}: the prompt does not start with the ${seen.length} tokens seen so far; ` +
          `first difference at index ${firstDifference} (seen ${seen[firstDifference]}, prompt ${prompt[firstDifference] ?? 'ends'}). ` +
          'A tokenization issue where tokens are combined when messages are concatenated, or truncated history (long history cut, reasoning stripped).\n' +
          `Seen token IDs: ${shown(seen)}\nOutput prompt token IDs: ${shown(prompt)}\n` +
          `output prompt token ids till seen: ${shown(prompt.slice(0, seen.length))}`,
      };
    }
    seen = prompt.concat(generation);
    turn += 1;
  }
  return { ok: true, turns: turn };
}
