import { describe, expect, it } from 'vitest';
import { pyFloatFromStr as pyFloat, pySplit as pySplitWs, pyStrip } from '@nemo-gym/core/py';
import { answersMatch, extractFirstBoxedLegacy, extractLastBoxed, normalizeAnswer, scoreResponse, type OutputItemLike } from '../src/answer.js';

const msg = (text: string, role = 'assistant'): OutputItemLike => ({
  type: 'message',
  role,
  content: [{ type: 'output_text', text, annotations: [] }],
});
const toolOut = (output: unknown): OutputItemLike => ({ type: 'function_call_output', call_id: 'c1', output } as OutputItemLike);

describe('legacy extraction (pinned upstream commit)', () => {
  it('takes the first box of a message and stops at the first closing brace', () => {
    expect(extractFirstBoxedLegacy('so \\boxed{\\dfrac{83}{499}} and \\boxed{7}')).toBe('\\dfrac{83');
    expect(extractFirstBoxedLegacy('\\boxed{ -3 }')).toBe('-3');
    expect(extractFirstBoxedLegacy('\\boxed{}')).toBeNull();
    expect(extractFirstBoxedLegacy('no box')).toBeNull();
  });

  it('reads the last assistant message that has a box and compares exact strings', () => {
    const out = [msg('first \\boxed{1}'), msg('later text without a box'), msg('\\boxed{2}', 'user')];
    expect(scoreResponse(out, '1', 'legacy')).toEqual({ extracted_answer: '1', accuracy: true, reward: 1 });
    expect(scoreResponse(out, '1.0', 'legacy').reward).toBe(0);
    expect(scoreResponse([msg('\\boxed{\\sqrt{2}}')], '\\(\\sqrt{2}\\)', 'legacy')).toEqual({
      extracted_answer: '\\sqrt{2',
      accuracy: false,
      reward: 0,
    });
  });

  it('compares a missing answer as the string "None", as str(None) does', () => {
    expect(scoreResponse([msg('nothing')], 'None', 'legacy')).toEqual({ extracted_answer: null, accuracy: true, reward: 1 });
    expect(scoreResponse([], '3', 'legacy').reward).toBe(0);
  });

  it('ignores tool output in legacy mode', () => {
    expect(scoreResponse([toolOut('{"stdout": "\\\\boxed{5}"}')], '5', 'legacy').reward).toBe(0);
  });
});

describe('normalized extraction (later upstream fix)', () => {
  it('takes the last box with brace matching', () => {
    expect(extractLastBoxed('\\boxed{1} then \\boxed{\\frac{1}{2}}')).toBe('\\frac{1}{2}');
    expect(extractLastBoxed('\\boxed{ x_{2016} = 3 }')).toBe('x_{2016} = 3');
    expect(extractLastBoxed('\\boxed{\\frac{1}{2}')).toBeNull(); // unbalanced
    expect(extractLastBoxed('\\boxed{  }')).toBeNull(); // empty
    expect(extractLastBoxed('\\boxed{1} and \\boxed{')).toBeNull(); // only the last box counts
  });

  it('normalizes delimiters and whitespace', () => {
    expect(normalizeAnswer('  \\( \\frac{333}{1997} \\) ')).toBe('\\frac{333}{1997}');
    expect(normalizeAnswer('$x$')).toBe('x');
    expect(normalizeAnswer('$')).toBe('$');
    expect(normalizeAnswer('\\text{ yes }')).toBe('yes');
    expect(normalizeAnswer('\\(\\text{a  b}\\)')).toBe('a b');
    expect(normalizeAnswer('a \n\t b')).toBe('a b');
  });

  it('matches after normalization or numerically', () => {
    expect(answersMatch('\\sqrt{2}', '\\(\\sqrt{2}\\)')).toBe(true);
    expect(answersMatch('42', '42.0')).toBe(true);
    expect(answersMatch('.5', '0.5')).toBe(true);
    expect(answersMatch('1_000', '1000')).toBe(true);
    expect(answersMatch('1000000.5', '1000000')).toBe(true); // within 1e-6 relative
    expect(answersMatch('1000002', '1000000')).toBe(false);
    expect(answersMatch('0.0000001', '0')).toBe(true); // absolute 1e-6 near zero
    expect(answersMatch('inf', 'inf')).toBe(true); // equal strings
    expect(answersMatch('inf', 'infinity')).toBe(false); // inf - inf is nan
    expect(answersMatch('nan', 'NaN')).toBe(false);
    expect(answersMatch('1,000', '1000')).toBe(false);
    expect(answersMatch(null, 'None')).toBe(false);
  });

  it('falls back to tool stdout (last tool output first) when no message has a box', () => {
    const out = [toolOut('{"stdout": "\\\\boxed{4}\\n"}'), toolOut('{"stdout": "\\\\boxed{7}\\n"}'), msg('done')];
    expect(scoreResponse(out, '7', 'normalized')).toEqual({ extracted_answer: '7', accuracy: true, reward: 1 });
    expect(scoreResponse([toolOut('plain \\boxed{9}')], '9', 'normalized').reward).toBe(1);
    expect(scoreResponse([toolOut('["\\\\boxed{9}"]')], '9', 'normalized').extracted_answer).toBe('9');
    expect(scoreResponse([toolOut('{"stderr": "\\\\boxed{9}"}')], '9', 'normalized').extracted_answer).toBeNull();
    expect(scoreResponse([toolOut('{"stdout": 5}'), toolOut([{ type: 'input_text', text: '\\boxed{1}' }])], '1', 'normalized').reward).toBe(0);
    // A box in any assistant message wins over tool output.
    expect(scoreResponse([toolOut('{"stdout": "\\\\boxed{7}"}'), msg('\\boxed{8}')], '7', 'normalized').reward).toBe(0);
  });

  it('concatenates output_text parts only', () => {
    const item: OutputItemLike = {
      type: 'message',
      role: 'assistant',
      content: [
        { type: 'output_text', text: '\\boxed{1' },
        { type: 'refusal', refusal: 'x}' },
        { type: 'output_text', text: '2}' },
      ],
    };
    expect(scoreResponse([item], '12', 'normalized').extracted_answer).toBe('12');
  });
});

describe('Python string and float semantics', () => {
  it('strips and splits on Python whitespace, not JavaScript whitespace', () => {
    expect(pyStrip('\u001c x \u0085')).toBe('x');
    expect(pyStrip('\ufeffx')).toBe('\ufeffx');
    expect(pySplitWs(' a\u3000b\u001fc ')).toEqual(['a', 'b', 'c']);
  });

  it('parses what float() parses and rejects what it rejects', () => {
    expect(pyFloat(' 1e3 ')).toBe(1000);
    expect(pyFloat('-.5')).toBe(-0.5);
    expect(pyFloat('1.')).toBe(1);
    expect(pyFloat('1_0.2_5')).toBe(10.25);
    expect(pyFloat('+Infinity')).toBe(Infinity);
    expect(pyFloat('-inf')).toBe(-Infinity);
    expect(pyFloat('\u0663\u0662')).toBe(32); // Arabic-Indic digits
    expect(pyFloat('\u{1D7D0}')).toBe(2); // mathematical bold digit two
    for (const bad of ['', '1__0', '_1', '1_', '0x10', '1/2', '1,5', 'e5', '--1', 'infinit']) {
      expect(pyFloat(bad), bad).toBeNull();
    }
  });
});
