/**
 * The length limit of the reference browse tool: a text of more than 10,000 whitespace-separated
 * words keeps its first and last 5,000 characters (code points, as Python slices) joined by "...".
 */
import { PY_WHITESPACE } from '@nemo-gym/core';

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

/** UTF-16 index after the first `count` code points of `s`. */
function headIndex(s: string, count: number): number {
  let i = 0;
  for (let k = 0; k < count && i < s.length; k++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return i;
}

/** UTF-16 index where the last `count` code points of `s` start. */
function tailIndex(s: string, count: number): number {
  let i = s.length;
  for (let k = 0; k < count && i > 0; k++) {
    const c = s.charCodeAt(i - 1);
    i -= (c & 0xfc00) === 0xdc00 && i - 2 >= 0 && (s.charCodeAt(i - 2) & 0xfc00) === 0xd800 ? 2 : 1;
  }
  return i;
}

/** `text[:5000] + "..." + text[-5000:]` when the text has more than 10,000 words, else the text. */
export function cutLongText(text: string): string {
  if (!hasMoreWordsThan(text, MAX_WORDS)) return text;
  return `${text.slice(0, headIndex(text, KEEP_CHARS))}...${text.slice(tailIndex(text, KEEP_CHARS))}`;
}
