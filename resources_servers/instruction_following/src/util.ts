// Helpers shared by the checks: the IFEval regex sentence splitter, word counting, and the
// deterministic stand-in for the random defaults upstream draws when a kwarg is missing.

import { PY_WHITESPACE, pyStrip } from '@nemo-gym/core/py';
import { pyError } from '@nemo-gym/core/py';

const WS = `[${PY_WHITESPACE}]`;
const STARTERS = `(Mr|Mrs|Ms|Dr|Prof|Capt|Cpt|Lt|He${WS}|She${WS}|It${WS}|They${WS}|Their${WS}|Our${WS}|We${WS}|But${WS}|However${WS}|That${WS}|This${WS}|Wherever)`;
const ACRONYMS = '([A-Z][.][A-Z][.](?:[A-Z][.])?)';

const RE_PREFIXES = /(Mr|St|Mrs|Ms|Dr)[.]/g;
const RE_WEBSITES = /[.](com|net|org|io|gov|edu|me)/g;
const RE_DIGITS = /([0-9])[.]([0-9])/g;
const RE_MULTIPLE_DOTS = /\.{2,}/g;
const RE_SINGLE_LETTER = new RegExp(`${WS}([A-Za-z])[.] `, 'gu');
const RE_ACRONYM_STARTER = new RegExp(`${ACRONYMS} ${STARTERS}`, 'gu');
const RE_THREE_LETTERS = /([A-Za-z])[.]([A-Za-z])[.]([A-Za-z])[.]/g;
const RE_TWO_LETTERS = /([A-Za-z])[.]([A-Za-z])[.]/g;
const RE_SUFFIX_STARTER = new RegExp(` (Inc|Ltd|Jr|Sr|Co)[.] ${STARTERS}`, 'gu');
const RE_SUFFIX = / (Inc|Ltd|Jr|Sr|Co)[.]/g;
const RE_SPACE_LETTER = / ([A-Za-z])[.]/g;

/** instructions_util.split_into_sentences (the IFEval regex splitter). */
export function splitIntoSentences(input: string): string[] {
  let text = ` ${input}  `;
  text = text.replaceAll('\n', ' ');
  text = text.replace(RE_PREFIXES, '$1<prd>');
  text = text.replace(RE_WEBSITES, '<prd>$1');
  text = text.replace(RE_DIGITS, '$1<prd>$2');
  text = text.replace(RE_MULTIPLE_DOTS, (m) => '<prd>'.repeat(m.length) + '<stop>');
  if (text.includes('Ph.D')) text = text.replaceAll('Ph.D.', 'Ph<prd>D<prd>');
  text = text.replace(RE_SINGLE_LETTER, ' $1<prd> ');
  text = text.replace(RE_ACRONYM_STARTER, '$1<stop> $2');
  text = text.replace(RE_THREE_LETTERS, '$1<prd>$2<prd>$3<prd>');
  text = text.replace(RE_TWO_LETTERS, '$1<prd>$2<prd>');
  text = text.replace(RE_SUFFIX_STARTER, ' $1<stop> $2');
  text = text.replace(RE_SUFFIX, ' $1<prd>');
  text = text.replace(RE_SPACE_LETTER, ' $1<prd>');
  if (text.includes('”')) text = text.replaceAll('.”', '”.');
  if (text.includes('"')) text = text.replaceAll('."', '".');
  if (text.includes('!')) text = text.replaceAll('!"', '"!');
  if (text.includes('?')) text = text.replaceAll('?"', '"?');
  text = text.replaceAll('.', '.<stop>');
  text = text.replaceAll('?', '?<stop>');
  text = text.replaceAll('!', '!<stop>');
  text = text.replaceAll('<prd>', '.');
  let sentences = text.split('<stop>').map((s) => pyStrip(s));
  if (sentences.length > 0 && sentences[sentences.length - 1] === '') sentences = sentences.slice(0, -1);
  return sentences;
}

const WORD_RE = /[\p{L}\p{N}_]+/gu;

/** instructions_util.count_words: number of `\w+` runs (Unicode `\w`). */
export function countWords(text: string): number {
  let n = 0;
  for (const _ of text.matchAll(WORD_RE)) n++;
  return n;
}

// Our own list of common English words, used where upstream samples its keyword list.
const WORD_LIST = [
  'apple', 'river', 'garden', 'window', 'market', 'season', 'letter', 'forest', 'bridge', 'silver',
  'island', 'engine', 'danger', 'travel', 'number', 'friend', 'planet', 'rocket', 'winter', 'summer',
  'mountain', 'village', 'kitchen', 'picture', 'science', 'history', 'journey', 'weather', 'library', 'ocean',
];

// Our own list of short proverbs, used when copy:repeat_phrase has no phrase.
export const PHRASES = [
  'Actions speak louder than words',
  'Every cloud has a silver lining',
  'The early bird catches the worm',
  'All that glitters is not gold',
  'Time flies when having fun',
  'Laughter is the best medicine',
];

/**
 * Deterministic replacement for the `random` draws upstream makes when a kwarg is missing or
 * invalid: a small PRNG (mulberry32) seeded from the instruction id, so a given request always
 * gets the same default.
 */
export class Rng {
  private state: number;
  constructor(seedText: string) {
    let h = 2166136261;
    for (let i = 0; i < seedText.length; i++) {
      h ^= seedText.charCodeAt(i);
      h = Math.imul(h, 16777619);
    }
    this.state = h >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** random.randint(a, b), both ends included; ValueError when the range is empty. */
  randint(a: number, b: number): number {
    if (!Number.isFinite(a) || !Number.isFinite(b) || b < a) {
      throw pyError('ValueError', `empty range for randrange(${a}, ${b + 1})`);
    }
    return a + Math.floor(this.next() * (Math.floor(b) - Math.ceil(a) + 1));
  }

  choice<T>(items: readonly T[]): T {
    if (items.length === 0) throw pyError('IndexError', 'Cannot choose from an empty sequence');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** instructions_util.generate_keywords(n) */
  keywords(n: number): string[] {
    const pool = WORD_LIST.slice();
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(pool.splice(Math.floor(this.next() * pool.length), 1)[0]!);
    return out;
  }
}
