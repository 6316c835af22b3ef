// Answer extraction and comparison for math_with_code.
//
// Two behaviours exist upstream:
//   * `legacy` (the python_math_exec server at the pinned commit): the first `\boxed{...}` of the
//     last assistant message that has one, content up to the first `}` (nested braces truncate),
//     compared to `expected_result` as exact strings (a missing answer is the string "None").
//   * `normalized` (the later math_with_code fix): the last `\boxed{` of the message with brace
//     matching, delimiters such as `\( \)` or `$ $` stripped on both sides, whitespace collapsed,
//     a numeric fallback, and tool stdout searched when no message holds a box.

/** Characters Python's str.isspace() accepts (JS `\s` differs: it includes U+FEFF and lacks
 * U+001C..U+001F and U+0085). */
const PY_WS = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const LEADING_WS = new RegExp(`^[${PY_WS}]+`);
const TRAILING_WS = new RegExp(`[${PY_WS}]+$`);
const WS_RUN = new RegExp(`[${PY_WS}]+`);

/** Python `str.strip()` with no arguments. */
export function pyStrip(s: string): string {
  return s.replace(LEADING_WS, '').replace(TRAILING_WS, '');
}

/** Python `str.split()` with no arguments. */
export function pySplitWs(s: string): string[] {
  return s.split(WS_RUN).filter((part) => part.length > 0);
}

const DECIMAL_DIGIT = /\p{Nd}/u;

/** Maps any Unicode decimal digit to its ASCII form (Python's float() accepts them). Unicode
 * encodes decimal digits in contiguous runs of ten starting at zero, so a digit's value is its
 * distance from the start of its run, modulo 10. */
function asciiDigits(s: string): string {
  let out = '';
  for (const ch of s) {
    if (ch >= '0' && ch <= '9') {
      out += ch;
    } else if (DECIMAL_DIGIT.test(ch)) {
      let cp = ch.codePointAt(0)!;
      let offset = 0;
      while (DECIMAL_DIGIT.test(String.fromCodePoint(cp - 1))) {
        cp -= 1;
        offset += 1;
      }
      out += String(offset % 10);
    } else {
      out += ch;
    }
  }
  return out;
}

const DIGITS = '[0-9](?:_?[0-9])*';
const PY_FLOAT = new RegExp(
  `^[+-]?(?:(?:${DIGITS}(?:\\.(?:${DIGITS})?)?|\\.${DIGITS})(?:[eE][+-]?${DIGITS})?|inf|infinity|nan)$`,
  'i',
);

/** Python `float(s)` for a str: returns null where Python raises ValueError. */
export function pyFloat(s: string): number | null {
  const text = asciiDigits(pyStrip(s));
  if (!PY_FLOAT.test(text)) return null;
  const lower = text.toLowerCase().replace(/^[+]/, '');
  if (lower === 'inf' || lower === 'infinity') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  if (lower === 'nan' || lower === '-nan') return NaN;
  return Number(text.replace(/_/g, ''));
}

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
  return pySplitWs(s).join(' ');
}

/** Exact match after normalization, else numeric closeness (relative 1e-6, absolute near 0). */
export function answersMatch(actual: string | null, expected: string): boolean {
  if (actual === null) return false;
  const a = normalizeAnswer(actual);
  const e = normalizeAnswer(expected);
  if (a === e) return true;
  const fa = pyFloat(a);
  const fe = pyFloat(e);
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
