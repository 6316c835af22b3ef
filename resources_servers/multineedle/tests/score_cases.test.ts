import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { score } from '../src/score.js';

// Upstream's verify (reference commit) on synthetic calls, recorded by fixtures/gen_score_cases.py.
const fx = JSON.parse(readFileSync(new URL('./fixtures/score_cases.json', import.meta.url), 'utf8')) as {
  arguments: (string | null)[];
  expected: number[][];
  minefields: [string, number][];
  rows: [number, number, number, number | 'error', unknown, unknown?, unknown?, unknown?, unknown?][];
};

// Where upstream fails with HTTP 500, the submission is scored as a miss (see README).
const UNREADABLE = [0, [], false, 0, false, false];

describe('scoring matches upstream on synthetic extraction calls', () => {
  it(`${fx.rows.length} combinations of call arguments, expected values and minefield`, () => {
    const mismatches: string[] = [];
    for (const [ai, xi, mi, ...upstream] of fx.rows) {
      const args = fx.arguments[ai]!;
      const output: unknown[] = [{ type: 'message', role: 'assistant', content: [] }];
      if (args !== null) {
        output.unshift(
          { type: 'function_call', name: 'extract_synonym_values', arguments: '{"synonym_values": [0]}' },
          { type: 'function_call', name: 'get_synonym_value', arguments: '{}' },
          { type: 'function_call', name: 'extract_synonym_values', arguments: args },
        );
      }
      const [label, value] = fx.minefields[mi]!;
      const r = score(output, fx.expected[xi]!, label, value);
      const got = [r.reward, r.parsed_synonym_values, r.accuracy, r.set_overlap, r.original_term_minefield_hit, r.order_instruction_following_failure];
      const want = upstream[0] === 'error' ? UNREADABLE : upstream;
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        mismatches.push(`${JSON.stringify({ args, expected: fx.expected[xi], minefield: fx.minefields[mi] })}: upstream ${JSON.stringify(upstream)}, here ${JSON.stringify(got)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });
});
