// Answer extraction and comparison for math_with_code.
//
// Two behaviours exist upstream:
//   * `legacy` (the python_math_exec server at the pinned commit): the first `\boxed{...}` of the
//     last assistant message that has one, content up to the first `}` (nested braces truncate),
//     compared to `expected_result` as exact strings (a missing answer is the string "None").
//   * `normalized` (the later math_with_code fix): the last `\boxed{` of the message with brace
//     matching, delimiters such as `\( \)` or `$ $` stripped on both sides, whitespace collapsed,
//     a numeric fallback, and tool stdout searched when no message holds a box.

import { pyFloatFromStr, pySplit, pyStrip } from '@nemo-gym/core/py';

/** The legacy extraction: `re.search(r"\\boxed\{([^}]+)\}", text)`, group stripped. */
export function extractFirstBoxedLegacy(text: string): string | null {
  const m = /\\boxed\{([^}]+)\}/.exec(text);
  return m ? pyStrip(m[1]!) : null;
}

/** Content of the last `\boxed{...}` with brace matching; null when absent, unbalanced or empty. */
export function extractLastBoxed(text: string): string | null {
  const marker = '\\boxed{';
  const idx = text.lastIndexOf(marker);
  if (idx === -1) return null;
  const start = idx + marker.length;
  let depth = 1;
  let i = start;
  while (i < text.length && depth > 0) {
    const c = text[i];
    if (c === '{') depth += 1;
    else if (c === '}') depth -= 1;
    i += 1;
  }
  if (depth !== 0) return null;
  const inner = pyStrip(text.slice(start, i - 1));
  return inner.length > 0 ? inner : null;
}

/** Strips `\( \)`, `$ $` and `\text{ }` wrappers (in that order, once each) and collapses
 * whitespace. */
export function normalizeAnswer(answer: string): string {
  let s = pyStrip(answer);
  if (s.startsWith('\\(') && s.endsWith('\\)')) s = pyStrip(s.slice(2, -2));
  if (s.startsWith('$') && s.endsWith('$') && s.length > 1) s = pyStrip(s.slice(1, -1));
  if (s.startsWith('\\text{') && s.endsWith('}')) s = pyStrip(s.slice(6, -1));
  return pySplit(s).join(' ');
}

/** Exact match after normalization, else numeric closeness (relative 1e-6, absolute near 0). */
export function answersMatch(actual: string | null, expected: string): boolean {
  if (actual === null) return false;
  const a = normalizeAnswer(actual);
  const e = normalizeAnswer(expected);
  if (a === e) return true;
  const fa = pyFloatFromStr(a);
  const fe = pyFloatFromStr(e);
  if (fa === null || fe === null) return false;
  return Math.abs(fa - fe) < 1e-6 * Math.max(1.0, Math.abs(fe));
}

// ---------------------------------------------------------------------------------------------
// Walking a Responses API output list

export interface OutputItemLike {
  type?: unknown;
  role?: unknown;
  content?: unknown;
  output?: unknown;
}

/** Concatenated `output_text` parts of an assistant message item, or null for other items. */
function assistantText(item: OutputItemLike): string | null {
  if (item.type !== 'message' || item.role !== 'assistant') return null;
  let text = '';
  if (Array.isArray(item.content)) {
    for (const part of item.content as Array<{ type?: unknown; text?: unknown }>) {
      if (part && part.type === 'output_text' && typeof part.text === 'string') text += part.text;
    }
  }
  return text;
}

/** The text searched in a `function_call_output` item: its JSON `stdout` when the output is a JSON
 * object, else the raw output string. Non-string outputs and non-string `stdout` values give null
 * (upstream would fail with a server error on those). */
function toolOutputText(item: OutputItemLike): string | null {
  if (item.type !== 'function_call_output' || typeof item.output !== 'string') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(item.output);
  } catch {
    return item.output;
  }
  if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const stdout = (parsed as Record<string, unknown>).stdout;
    if (stdout === undefined) return '';
    return typeof stdout === 'string' ? stdout : null;
  }
  // A JSON value without `.get` (list, string, number...) falls back to the raw text upstream.
  return item.output;
}

export type MatchMode = 'normalized' | 'legacy';

export interface ScoreResult {
  extracted_answer: string | null;
  accuracy: boolean;
  reward: number;
}

export function scoreResponse(output: readonly OutputItemLike[], expected: string, mode: MatchMode): ScoreResult {
  let actual: string | null = null;
  if (mode === 'legacy') {
    for (let i = output.length - 1; i >= 0; i--) {
      const text = assistantText(output[i]!);
      if (text === null) continue;
      actual = extractFirstBoxedLegacy(text);
      if (actual !== null) break;
    }
    // Python compares str(None) == str(expected): a missing answer equals the string "None".
    const accuracy = (actual ?? 'None') === expected;
    return { extracted_answer: actual, accuracy, reward: accuracy ? 1.0 : 0.0 };
  }
  for (let i = output.length - 1; i >= 0 && actual === null; i--) {
    const text = assistantText(output[i]!);
    if (text !== null) actual = extractLastBoxed(text);
  }
  if (actual === null) {
    for (let i = output.length - 1; i >= 0 && actual === null; i--) {
      const text = toolOutputText(output[i]!);
      if (text !== null) actual = extractLastBoxed(text);
    }
  }
  const accuracy = answersMatch(actual, expected);
  return { extracted_answer: actual, accuracy, reward: accuracy ? 1.0 : 0.0 };
}
