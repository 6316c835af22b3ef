/**
 * Text extraction for the equivalence judge: the question (last user message), the model's answer
 * (last assistant message, optionally narrowed by a Python regex) and the expected answer.
 */
import { pyStr, pyStrip } from '@nemo-gym/core/py';
import { PY_RE, PyRegex, PyRegexError, PyRegexUnsupportedError } from '@nemo-gym/core/py';

const FLAGS = PY_RE.MULTILINE | PY_RE.DOTALL;
const cache = new Map<string, PyRegex | null>();

/** Compiled pattern, or null where Python's `re` would raise (upstream then uses the full text). */
function compile(pattern: string, onUnsupported?: (msg: string) => void): PyRegex | null {
  if (cache.has(pattern)) return cache.get(pattern)!;
  let re: PyRegex | null = null;
  try {
    re = new PyRegex(pattern, FLAGS);
  } catch (err) {
    if (err instanceof PyRegexUnsupportedError) onUnsupported?.(`regex ${JSON.stringify(pattern)} cannot run here (${err.message}); using the full text`);
    else if (!(err instanceof PyRegexError)) throw err;
  }
  if (cache.size > 256) cache.clear();
  cache.set(pattern, re);
  return re;
}

/**
 * `re.finditer(pattern, text, re.M | re.S)`: the last match decides; its first capture group that
 * is non-empty after strip, else the whole match, stripped. No match or a bad pattern: the text.
 */
export function applyExtractRegex(text: string, pattern: string | null | undefined, onUnsupported?: (msg: string) => void): string {
  if (!pattern) return text;
  const re = compile(pattern, onUnsupported);
  if (!re) return text;
  const matches = re.finditer(text);
  if (matches.length === 0) return text;
  const m = matches[matches.length - 1]!;
  for (let i = 1; i < m.groups.length; i++) {
    const g = m.groups[i];
    if (typeof g === 'string' && pyStrip(g) !== '') return pyStrip(g);
  }
  return pyStrip(m.groups[0] ?? '');
}

type Item = Record<string, unknown>;

/** The text of the last assistant message (parts joined with "\n"), regex-narrowed; "" if none. */
export function extractLastAssistantText(output: readonly unknown[], pattern: string | null | undefined, onUnsupported?: (msg: string) => void): string {
  for (let i = output.length - 1; i >= 0; i--) {
    const o = output[i] as Item | null;
    if (!o || typeof o !== 'object' || o.type !== 'message' || o.role !== 'assistant') continue;
    const content = o.content;
    let text: string;
    if (Array.isArray(content)) {
      const texts: string[] = [];
      for (const c of content) {
        const t = c && typeof c === 'object' ? (c as Item).text : undefined;
        if (typeof t === 'string') texts.push(t);
      }
      text = pyStrip(texts.join('\n'));
    } else if (typeof content === 'string') {
      text = pyStrip(content);
    } else {
      return '';
    }
    if (!text) return text;
    return applyExtractRegex(text, pattern, onUnsupported);
  }
  return '';
}

/** The last user message whose content is a plain string, stripped and regex-narrowed; "" if none. */
export function extractQuestionText(input: unknown, pattern: string | null | undefined, onUnsupported?: (msg: string) => void): string {
  let last: string | null = null;
  if (Array.isArray(input)) {
    for (const m of input) {
      if (m && typeof m === 'object' && (m as Item).role === 'user' && typeof (m as Item).content === 'string') last = (m as Item).content as string;
    }
  }
  const text = pyStrip(last ?? '');
  if (!text) return text;
  return applyExtractRegex(text, pattern, onUnsupported);
}

/** `expected_answer` if truthy, else `str(metadata["expected_answer"])` when present and not null, else "". */
export function extractExpectedAnswer(expected: string | null | undefined, metadata: Record<string, unknown> | null | undefined): string {
  if (expected) return expected;
  const md = metadata ?? {};
  const exp = md.expected_answer;
  return exp !== undefined && exp !== null ? pyStr(exp) : '';
}
