/**
 * Reading a judge's verdict written as JSON inside free text (a fenced block, a sentence around
 * it, reasoning before it): the balanced `{…}` spans of the text, string-aware, tried from the last
 * one back; the first that parses to an object the caller accepts is the verdict.
 */

/** Start and end (exclusive) of each top-level balanced `{…}` span of `text`. */
function objectSpans(text: string): [number, number][] {
  const spans: [number, number][] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"' && depth > 0) inString = true;
    else if (ch === '{') {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === '}' && depth > 0) {
      depth--;
      if (depth === 0) spans.push([start, i + 1]);
    }
  }
  return spans;
}

/** The last JSON object in `text` that `accept` takes (null when there is none). */
export function lastJsonObject<T>(text: string, accept: (value: Record<string, unknown>) => T | null): T | null {
  const spans = objectSpans(text);
  for (let k = spans.length - 1; k >= 0; k--) {
    const [a, b] = spans[k]!;
    let value: unknown;
    try {
      value = JSON.parse(text.slice(a, b));
    } catch {
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
    const got = accept(value as Record<string, unknown>);
    if (got !== null) return got;
  }
  return null;
}
