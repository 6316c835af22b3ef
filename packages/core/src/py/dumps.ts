/**
 * Python `json` for data files: the dump of lossless values and word counts of dumps. The lossless
 * loader itself (`pyJsonLoads`, int -> bigint, float -> number, object -> Map) is Python's
 * `json.loads` in ./json.ts.
 */
import { pyJsonDumps, type PyValue } from './json.js';

export interface PyDumpsOptions {
  /** Python's `indent`; omitted = one line with `", "` / `": "` separators. */
  indent?: number;
}

/**
 * Python `json.dumps(value)` (ensure_ascii, default separators; with `indent`, Python's `","`
 * item separator and newlines) of a lossless value. Plain objects are accepted as dicts and plain
 * numbers as floats, so validated (plain) objects can be dumped too.
 */
export function pyDumps(value: unknown, options: PyDumpsOptions = {}): string {
  return pyJsonDumps(value, { indent: options.indent, numbers: 'float' });
}

/**
 * Number of whitespace-separated words in Python's `json.dumps(value)` (default separators,
 * ASCII escaping), counted without building the text. In that output the only whitespace is the
 * space: separators are `", "` and `": "`, and every other whitespace character inside strings is
 * escaped. So a string contributes a space wherever it holds a literal space, and nothing else.
 */
export function countDumpWords(value: unknown): number {
  let words = 0;
  let inWord = false;
  const solid = () => {
    if (!inWord) {
      words++;
      inWord = true;
    }
  };
  const str = (s: string) => {
    solid(); // opening quote
    let from = 0;
    for (;;) {
      const sp = s.indexOf(' ', from);
      if (sp === -1) break;
      if (sp > from) solid();
      inWord = false;
      from = sp + 1;
    }
    solid(); // rest of the text and the closing quote
  };
  const walk = (v: unknown): void => {
    if (v === null || v === undefined || typeof v !== 'object') {
      if (typeof v === 'string') str(v);
      else solid();
      return;
    }
    solid(); // "[" or "{"
    if (Array.isArray(v)) {
      v.forEach((item, k) => {
        if (k > 0) inWord = false; // ", "
        walk(item);
        solid(); // "," or "]"
      });
      if (v.length === 0) solid();
      return;
    }
    const entries: [string, unknown][] =
      v instanceof Map ? [...(v as Map<string, unknown>).entries()] : Object.entries(v as Record<string, unknown>);
    let k = 0;
    for (const [key, val] of entries) {
      if (val === undefined) continue;
      if (k++ > 0) inWord = false; // ", "
      str(key);
      solid(); // ":"
      inWord = false; // " "
      walk(val);
      solid(); // "," or "}"
    }
    if (k === 0) solid();
  };
  walk(value);
  return words;
}
