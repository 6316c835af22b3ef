/**
 * The boxed-option verifier. The reference implementation takes the content of the last output
 * item when it is an assistant message, turns it into a string with Python's `str()` (the repr of
 * the list of content parts, not the joined text), and takes the first `\boxed{...}` group. The
 * recorded rewards depend on that repr: `\boxed{\text{B}}` parses as `\\text{B` (doubled backslashes).
 */
import { contentListRepr } from './pyrepr.js';

/** Python `re.search(r"\\boxed\{(.*?)\}", s)`: `.` is anything but "\n". */
const BOXED = /\\boxed\{([^\n]*?)\}/;

/** The first `\boxed{...}` group of `s`, or null when there is none. */
export function boxParser(s: string): string | null {
  const m = BOXED.exec(s);
  return m ? m[1]! : null;
}

/**
 * The string the reference verifier searches: `str(last.content)` when the last output item is an
 * assistant message, otherwise `str(None)`. An empty output (an IndexError there) is treated like
 * a non-message last item.
 */
export function lastAssistantRepr(output: readonly unknown[]): string {
  const last = output.at(-1) as Record<string, unknown> | undefined;
  if (!last || typeof last !== 'object') return 'None';
  const type = last.type ?? (last.role !== undefined ? 'message' : undefined);
  if (type !== 'message' || last.role !== 'assistant') return 'None';
  const content = last.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return contentListRepr(content);
  return 'None';
}

export interface Verdict {
  reward: number;
  parsed_option: string | null;
}

export function grade(output: readonly unknown[], expectedAnswer: string): Verdict {
  const parsed = boxParser(lastAssistantRepr(output));
  return { reward: parsed !== null && parsed === expectedAnswer ? 1.0 : 0.0, parsed_option: parsed };
}
