/**
 * The length limit of the reference browse tool: a text of more than 10,000 whitespace-separated
 * words keeps its first and last 5,000 characters (code points, as Python slices) joined by "...".
 */
import { PY_WHITESPACE, pySliceStr } from '@nemo-gym/core/py';

export const MAX_WORDS = 10_000;
export const KEEP_CHARS = 5_000;

const WORD = new RegExp(`[^${PY_WHITESPACE}]+`, 'gu');

/** True when Python's `len(text.split()) > limit`, counting no further than needed. */
export function hasMoreWordsThan(text: string, limit: number): boolean {
  WORD.lastIndex = 0;
  let n = 0;
  while (WORD.exec(text) !== null) if (++n > limit) return true;
  return false;
}

/** `text[:5000] + "..." + text[-5000:]` when the text has more than 10,000 words, else the text. */
export function cutLongText(text: string): string {
  if (!hasMoreWordsThan(text, MAX_WORDS)) return text;
  // 2 * KEEP_CHARS UTF-16 units always hold KEEP_CHARS whole code points, even where the window
  // splits a surrogate pair, so only a bounded window is turned into code points.
  const window = 2 * KEEP_CHARS;
  return `${pySliceStr(text.slice(0, window), 0, KEEP_CHARS)}...${pySliceStr(text.slice(-window), -KEEP_CHARS, window)}`;
}
