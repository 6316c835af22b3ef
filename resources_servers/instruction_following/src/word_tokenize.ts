// NLTK's `word_tokenize` (English): Punkt sentence split, then the improved Treebank rules of
// NLTKWordTokenizer applied to each sentence. Character classes keep Python's Unicode meaning.

import { PY_WS_CLASS, pySplit } from './py.js';
import type { PunktSentenceTokenizer } from './punkt.js';

const W = '[\\p{L}\\p{N}_]';
const B = `(?:(?<=${W})(?!${W})|(?<!${W})(?=${W}))`;
const WS = `[${PY_WS_CLASS}]`;
// Python `$` without MULTILINE: at the end, or before a final "\n".
const END_PY = '(?=\\n?(?![\\s\\S]))';

type Rule = [RegExp, string];
const r = (src: string, flags = '') => new RegExp(src, `gu${flags}`);

const STARTING_QUOTES: Rule[] = [
  [r('([«“‘„]|[`]+)'), ' $1 '],
  [r('^"'), '``'],
  [r('(``)'), ' $1 '],
  [r(`([ ([{<])("|'{2})`), '$1 `` '],
  [r(`(')(?!re|ve|ll|m|t|s|d|n)(${W})${B}`, 'i'), '$1 $2'],
];

const PUNCTUATION: Rule[] = [
  [r(`([^.])(\\.)([\\])}>"'»”’ ]*)${WS}*$`), '$1 $2 $3 '],
  [r('([:,])([^\\p{Nd}])'), ' $1 $2'],
  [r(`([:,])${END_PY}`), ' $1 '],
  [r('\\.{2,}'), ' $& '],
  [r('[;@#$%&]'), ' $& '],
  [r(`([^.])(\\.)([\\])}>"']*)${WS}*$`), '$1 $2$3 '],
  [r('[?!]'), ' $& '],
  [r("([^'])' "), "$1 ' "],
  [r('[*]'), ' $& '],
];

const PARENS_BRACKETS: Rule = [r('[\\][(){}<>]'), ' $& '];
const DOUBLE_DASHES: Rule = [r('--'), ' -- '];

const ENDING_QUOTES: Rule[] = [
  [r('([»”’])'), ' $1 '],
  [r("''"), " '' "],
  [r('"'), " '' "],
  [r("([^' ])('[sS]|'[mM]|'[dD]|') "), '$1 $2 '],
  [r("([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), '$1 $2 '],
];

// Each contraction rule with a literal its match must contain (checked on the lowercased text
// first, which skips the costly Unicode word-boundary scan on most sentences).
const CONTRACTIONS2: [string, RegExp][] = [
  ['cannot', r(`${B}(can)(not)${B}`, 'i')],
  ["d'ye", r(`${B}(d)('ye)${B}`, 'i')],
  ['gimme', r(`${B}(gim)(me)${B}`, 'i')],
  ['gonna', r(`${B}(gon)(na)${B}`, 'i')],
  ['gotta', r(`${B}(got)(ta)${B}`, 'i')],
  ['lemme', r(`${B}(lem)(me)${B}`, 'i')],
  ["more'n", r(`${B}(more)('n)${B}`, 'i')],
  ['wanna', r(`${B}(wan)(na)(?=${WS})`, 'i')],
];
const CONTRACTIONS3: [string, RegExp][] = [
  ["'tis", r(` ('t)(is)${B}`, 'i')],
  ["'twas", r(` ('t)(was)${B}`, 'i')],
];

/** NLTKWordTokenizer.tokenize on one sentence. */
export function treebankTokenize(text: string): string[] {
  for (let i = 0; i < STARTING_QUOTES.length; i++) {
    // The last rule needs an apostrophe.
    if (i === STARTING_QUOTES.length - 1 && !text.includes("'")) continue;
    text = text.replace(STARTING_QUOTES[i]![0], STARTING_QUOTES[i]![1]);
  }
  for (const [re, sub] of PUNCTUATION) text = text.replace(re, sub);
  text = text.replace(PARENS_BRACKETS[0], PARENS_BRACKETS[1]);
  text = text.replace(DOUBLE_DASHES[0], DOUBLE_DASHES[1]);
  text = ` ${text} `;
  for (const [re, sub] of ENDING_QUOTES) text = text.replace(re, sub);
  // Case-insensitive literal pre-check: lowercasing keeps ASCII letters and apostrophes in place.
  const lower = text.toLowerCase();
  for (const [lit, re] of CONTRACTIONS2) if (lower.includes(lit)) text = text.replace(re, ' $1 $2 ');
  for (const [lit, re] of CONTRACTIONS3) if (lower.includes(lit)) text = text.replace(re, ' $1 $2 ');
  return pySplit(text);
}

let memo: { punkt: PunktSentenceTokenizer; text: string; tokens: readonly string[] } | null = null;

/** `nltk.word_tokenize(text)` (the last result is kept: checks of one response share the text). */
export function wordTokenize(punkt: PunktSentenceTokenizer, text: string): readonly string[] {
  if (memo && memo.punkt === punkt && memo.text === text) return memo.tokens;
  const out: string[] = [];
  for (const sent of punkt.tokenize(text)) for (const t of treebankTokenize(sent)) out.push(t);
  memo = { punkt, text, tokens: out };
  return out;
}
