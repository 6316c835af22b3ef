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

const CONTRACTIONS2: RegExp[] = [
  r(`${B}(can)(not)${B}`, 'i'),
  r(`${B}(d)('ye)${B}`, 'i'),
  r(`${B}(gim)(me)${B}`, 'i'),
  r(`${B}(gon)(na)${B}`, 'i'),
  r(`${B}(got)(ta)${B}`, 'i'),
  r(`${B}(lem)(me)${B}`, 'i'),
  r(`${B}(more)('n)${B}`, 'i'),
  r(`${B}(wan)(na)(?=${WS})`, 'i'),
];
const CONTRACTIONS3: RegExp[] = [r(` ('t)(is)${B}`, 'i'), r(` ('t)(was)${B}`, 'i')];

/** NLTKWordTokenizer.tokenize on one sentence. */
export function treebankTokenize(text: string): string[] {
  for (const [re, sub] of STARTING_QUOTES) text = text.replace(re, sub);
  for (const [re, sub] of PUNCTUATION) text = text.replace(re, sub);
  text = text.replace(PARENS_BRACKETS[0], PARENS_BRACKETS[1]);
  text = text.replace(DOUBLE_DASHES[0], DOUBLE_DASHES[1]);
  text = ` ${text} `;
  for (const [re, sub] of ENDING_QUOTES) text = text.replace(re, sub);
  for (const re of CONTRACTIONS2) text = text.replace(re, ' $1 $2 ');
  for (const re of CONTRACTIONS3) text = text.replace(re, ' $1 $2 ');
  return pySplit(text);
}

/** `nltk.word_tokenize(text)` */
export function wordTokenize(punkt: PunktSentenceTokenizer, text: string): string[] {
  const out: string[] = [];
  for (const sent of punkt.tokenize(text)) out.push(...treebankTokenize(sent));
  return out;
}
