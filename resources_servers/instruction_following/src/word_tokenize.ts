// NLTK's `word_tokenize` (English): Punkt sentence split, then the improved Treebank rules of
// NLTKWordTokenizer applied to each sentence. Character classes keep Python's Unicode meaning.

import { PY_WHITESPACE, pySplit } from '@nemo-gym/core/py';
import type { PunktSentenceTokenizer } from './punkt.js';

const W = '[\\p{L}\\p{N}_]';
const B = `(?:(?<=${W})(?!${W})|(?<!${W})(?=${W}))`;
const WS = `[${PY_WHITESPACE}]`;
// Python `$` without MULTILINE: at the end, or before a final "\n".
const END_PY = '(?=\\n?(?![\\s\\S]))';

/** [regex, replacement, guard]: the rule only runs when the guard says the text could match. */
type Rule = [RegExp, string, (t: string) => boolean];
const r = (src: string, flags = '') => new RegExp(src, `gu${flags}`);
const has = (...subs: string[]) => (t: string) => subs.some((s) => t.includes(s));

const STARTING_QUOTES: Rule[] = [
  [r('([«“‘„]|[`]+)'), ' $1 ', has('«', '“', '‘', '„', '`')],
  [r('^"'), '``', (t) => t.startsWith('"')],
  [r('(``)'), ' $1 ', has('``')],
  [r(`([ ([{<])("|'{2})`), '$1 `` ', has('"', "''")],
  [r(`(')(?!re|ve|ll|m|t|s|d|n)(${W})${B}`, 'i'), '$1 $2', has("'")],
];

const PUNCTUATION: Rule[] = [
  [r(`([^.])(\\.)([\\])}>"'»”’ ]*)${WS}*$`), '$1 $2 $3 ', has('.')],
  [r('([:,])([^\\p{Nd}])'), ' $1 $2', has(':', ',')],
  [r(`([:,])${END_PY}`), ' $1 ', has(':', ',')],
  [r('\\.{2,}'), ' $& ', has('..')],
  [r('[;@#$%&]'), ' $& ', has(';', '@', '#', '$', '%', '&')],
  [r(`([^.])(\\.)([\\])}>"']*)${WS}*$`), '$1 $2$3 ', has('.')],
  [r('[?!]'), ' $& ', has('?', '!')],
  [r("([^'])' "), "$1 ' ", has("' ")],
  [r('[*]'), ' $& ', has('*')],
];

const PARENS_BRACKETS: Rule = [r('[\\][(){}<>]'), ' $& ', has('[', ']', '(', ')', '{', '}', '<', '>')];
const DOUBLE_DASHES: Rule = [r('--'), ' -- ', has('--')];

const ENDING_QUOTES: Rule[] = [
  [r('([»”’])'), ' $1 ', has('»', '”', '’')],
  [r("''"), " '' ", has("''")],
  [r('"'), " '' ", has('"')],
  [r("([^' ])('[sS]|'[mM]|'[dD]|') "), '$1 $2 ', has("' ", "'s ", "'S ", "'m ", "'M ", "'d ", "'D ")],
  [r("([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), '$1 $2 ', has("'", 'N')],
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

function apply(text: string, rule: Rule): string {
  return rule[2](text) ? text.replace(rule[0], rule[1]) : text;
}

/** NLTKWordTokenizer.tokenize on one sentence. */
export function treebankTokenize(text: string): string[] {
  for (const rule of STARTING_QUOTES) text = apply(text, rule);
  for (const rule of PUNCTUATION) text = apply(text, rule);
  text = apply(text, PARENS_BRACKETS);
  text = apply(text, DOUBLE_DASHES);
  text = ` ${text} `;
  for (const rule of ENDING_QUOTES) text = apply(text, rule);
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
