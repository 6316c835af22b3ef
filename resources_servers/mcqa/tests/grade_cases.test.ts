import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractAssistantText, grade, OutputRegexError, type GradingMode, type OptionEntry } from '../src/grade.js';

// Upstream's verify (reference commit) run on every combination below by fixtures/gen_grade_cases.py.
const fx = JSON.parse(readFileSync(new URL('./fixtures/grade_cases.json', import.meta.url), 'utf8')) as {
  options: (OptionEntry[] | null)[];
  texts: string[];
  modes: GradingMode[];
  regexes: (string | null)[];
  expected: (string | null)[];
  rows: [number, number, number, number, number, number | 'error', string | null, string | null][];
};

describe('grading matches upstream on synthetic answers', () => {
  it(`${fx.rows.length} combinations of options, text, mode, regex and expected answer`, () => {
    const mismatches: string[] = [];
    for (const [oi, ti, mi, ri, ei, reward, second, third] of fx.rows) {
      const text = extractAssistantText([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: fx.texts[ti]! }] }]);
      const regex = fx.regexes[ri];
      const input = {
        text,
        options: fx.options[oi],
        expected_answer: fx.expected[ei],
        grading_mode: fx.modes[mi]!,
        template_metadata: regex === null ? null : { output_regex: regex },
      };
      const label = JSON.stringify({ options: oi, text: fx.texts[ti], mode: fx.modes[mi], regex, expected: fx.expected[ei] });
      if (reward === 'error') {
        // upstream fails with HTTP 500 (AttributeError on a findall tuple); here a clear OutputRegexError
        let threw: unknown = null;
        try {
          grade(input);
        } catch (e) {
          threw = e;
        }
        if (!(threw instanceof OutputRegexError)) mismatches.push(`${label}: expected an OutputRegexError (upstream ${second})`);
        continue;
      }
      const got = grade(input);
      if (got.reward !== reward || got.expected_answer !== second || got.extracted_answer !== third) {
        mismatches.push(`${label}: upstream ${JSON.stringify([reward, second, third])}, here ${JSON.stringify([got.reward, got.expected_answer, got.extracted_answer])}`);
      }
    }
    expect(mismatches.slice(0, 20)).toEqual([]);
  });
});
