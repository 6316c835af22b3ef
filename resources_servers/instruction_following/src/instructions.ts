// The 54 verifiable instructions: for each id, the kwargs its builder accepts, how missing or
// invalid kwargs are handled, and the check applied to the response text. Semantics follow the
// `verifiable_instructions` package (IFEval + IFEvalG); see README.md for the per-id rules.

import { detect, LangDetectException } from './langdetect.js';
import type { PunktSentenceTokenizer } from './punkt.js';
import { PY_RE, PY_WHITESPACE, pyCount, pyFindall, pyIsLower, pyIsUpper, pyLen, pyLower, pyLstrip, pyRstrip, pySearch, pySliceStr, pySplit, pySplitCount, pyStrCompare, pyStrip } from '@nemo-gym/core/py';
import { pyEq, pyError, PyException, pyIndex, pyIntIndex, pyIter, pyJsonLoadable, pyLt, pyNumber, pyStrReceiver, pyTruthy, pyTypeName } from '@nemo-gym/core/py';
import { countWords, PHRASES, Rng, splitIntoSentences } from './util.js';
import { wordTokenize } from './word_tokenize.js';

export interface Tools {
  punkt: PunktSentenceTokenizer;
  /** Folder of Python langdetect profile files; null: the npm package's profiles. */
  langdetectProfilesDir: string | null;
}

/** A built instruction: returns true/false, or null where upstream's check falls through (None). */
export type Check = (value: string, tools: Tools) => boolean | null;

interface Spec {
  kwargs: readonly string[];
  build: (kw: Record<string, unknown>, rng: Rng) => Check;
}

export const LANGUAGE_CODES: Readonly<Record<string, string>> = {
  en: 'English', es: 'Spanish', pt: 'Portuguese', ar: 'Arabic', hi: 'Hindi', fr: 'French', ru: 'Russian',
  de: 'German', ja: 'Japanese', it: 'Italian', bn: 'Bengali', uk: 'Ukrainian', th: 'Thai', ur: 'Urdu',
  ta: 'Tamil', te: 'Telugu', bg: 'Bulgarian', ko: 'Korean', pl: 'Polish', he: 'Hebrew', fa: 'Persian',
  vi: 'Vietnamese', ne: 'Nepali', sw: 'Swahili', kn: 'Kannada', mr: 'Marathi', gu: 'Gujarati', pa: 'Punjabi',
  ml: 'Malayalam', fi: 'Finnish',
};

const RELATIONS = ['less than', 'at least'] as const;
const LESS_THAN = RELATIONS[0];
const AT_LEAST = RELATIONS[1];
const ENDING_OPTIONS = ['Any other questions?', 'Is there anything else I can help with?'];
const POSTSCRIPT_MARKERS = ['P.S.', 'P.P.S'];
const SECTION_SPLITTERS = ['Section', 'SECTION'];
const CONSTRAINED_RESPONSES = ['My answer is yes.', 'My answer is no.', 'My answer is maybe.'];
const ASCII_LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('');
const { IGNORECASE, MULTILINE } = PY_RE;

/** The relation kwarg: None → deterministic draw; anything not in the two relations → ValueError. */
function relationArg(v: unknown, rng: Rng): string {
  if (v === undefined) return rng.choice(RELATIONS);
  if (typeof v === 'string' && (RELATIONS as readonly string[]).includes(v)) return v;
  throw pyError('ValueError', `The supported relation for comparison must be in ${RELATIONS.join(', ')}`);
}

/** `x is None or x < 0` → deterministic randint(lo, hi), else x. */
function countArg(v: unknown, rng: Rng, lo: number, hi: number): unknown {
  if (v === undefined || pyLt(v, 0)) return rng.randint(lo, hi);
  return v;
}

/** `x + 1` on a numeric kwarg (int, float or bool); TypeError as CPython's for other types. */
function plusOne(v: unknown): number {
  const n = pyNumber(v);
  if (n !== null) return n + 1;
  const t = pyTypeName(v);
  if (t === 'str' || t === 'list') throw pyError('TypeError', `can only concatenate ${t} (not "int") to ${t}`);
  throw pyError('TypeError', `unsupported operand type(s) for +: '${t}' and 'int'`);
}

/** `if not x: randint(lo, hi) else x` */
function truthyArg(v: unknown, rng: Rng, lo: number, hi: number): unknown {
  return pyTruthy(v) ? v : rng.randint(lo, hi);
}

/** `if not keyword: generate_keywords(1)[0] else keyword.strip()` */
function keywordArg(v: unknown, rng: Rng): string {
  return pyTruthy(v) ? pyStrip(pyStrReceiver(v, 'strip')) : rng.keywords(1)[0]!;
}

function compare(count: number, relation: string, threshold: unknown): boolean | null {
  if (relation === LESS_THAN) return pyLt(count, threshold);
  if (relation === AT_LEAST) return !pyLt(count, threshold);
  return null;
}

/** Paragraph counting shared by the `***` and blank-line paragraph checks; null = empty middle piece. */
function countPieces(pieces: string[]): number | null {
  let n = pieces.length;
  for (let i = 0; i < pieces.length; i++) {
    if (!pyStrip(pieces[i]!)) {
      if (i === 0 || i === pieces.length - 1) n--;
      else return null;
    }
  }
  return n;
}

/** `re.split(r"\s?\*\*\*\s?", value)` */
const STARS_SPLIT = new RegExp(`[${PY_WHITESPACE}]?\\*\\*\\*[${PY_WHITESPACE}]?`, 'u');
/** `[^\w\s]` (Unicode) */
const NON_WORD_NON_SPACE = new RegExp(`[^\\p{L}\\p{N}_${PY_WHITESPACE}]`, 'gu');

function firstCodePoint(s: string): string {
  const cp = s.codePointAt(0);
  return cp === undefined ? '' : String.fromCodePoint(cp);
}

const NO_KWARGS: readonly string[] = [];

export const INSTRUCTIONS: Readonly<Record<string, Spec>> = {
  'keywords:existence': {
    kwargs: ['keywords'],
    build: (kw, rng) => {
      const words = pyTruthy(kw.keywords) ? pyIter(kw.keywords) : rng.keywords(2);
      return (value) => {
        for (const k of words) {
          if (typeof k !== 'string') throw pyError('TypeError', 'first argument must be string or compiled pattern');
          if (!pySearch(k, value, IGNORECASE)) return false;
        }
        return true;
      };
    },
  },
  'keywords:frequency': {
    kwargs: ['keyword', 'frequency', 'relation'],
    build: (kw, rng) => frequencyCheck(kw, rng),
  },
  'keywords:forbidden_words': {
    kwargs: ['forbidden_words'],
    build: (kw, rng) => {
      const words = pyTruthy(kw.forbidden_words) ? pyIter(kw.forbidden_words) : rng.keywords(2);
      return (value) => {
        for (const w of words) {
          if (typeof w !== 'string') throw pyError('TypeError', 'can only concatenate str to str');
          if (pySearch(`\\b${w}\\b`, value, IGNORECASE)) return false;
        }
        return true;
      };
    },
  },
  'keywords:letter_frequency': {
    kwargs: ['letter', 'let_frequency', 'let_relation'],
    build: (kw, rng) => letterFrequencyCheck(kw, rng),
  },
  'language:response_language': {
    kwargs: ['language'],
    build: (kw, rng) => {
      const lang = kw.language === undefined ? rng.choice(Object.keys(LANGUAGE_CODES)) : kw.language;
      if (typeof lang !== 'string' || !Object.hasOwn(LANGUAGE_CODES, lang)) {
        throw pyError('KeyError', `language ${JSON.stringify(lang)} is not one of the supported codes`);
      }
      return (value, tools) => {
        try {
          return detect(value, tools.langdetectProfilesDir) === lang;
        } catch (e) {
          if (e instanceof LangDetectException) return true;
          throw e;
        }
      };
    },
  },
  'length_constraints:number_sentences': {
    kwargs: ['num_sentences', 'relation'],
    build: (kw, rng) => {
      const n = countArg(kw.num_sentences, rng, 1, 20);
      const relation = relationArg(kw.relation, rng);
      return (value, tools) => compare(tools.punkt.countSentences(value), relation, n);
    },
  },
  'length_constraints:number_paragraphs': {
    kwargs: ['num_paragraphs'],
    build: (kw, rng) => {
      const n = countArg(kw.num_paragraphs, rng, 1, 5);
      return (value) => {
        const count = countPieces(value.split(STARS_SPLIT));
        return count === null ? false : pyEq(count, n);
      };
    },
  },
  'length_constraints:number_words': {
    kwargs: ['num_words', 'relation'],
    build: (kw, rng) => {
      const n = countArg(kw.num_words, rng, 100, 500);
      const relation = relationArg(kw.relation, rng);
      return (value) => compare(countWords(value), relation, n);
    },
  },
  'length_constraints:nth_paragraph_first_word': {
    kwargs: ['num_paragraphs', 'nth_paragraph', 'first_word'],
    build: (kw, rng) => {
      const num = countArg(kw.num_paragraphs, rng, 1, 5);
      let nth = kw.nth_paragraph;
      if (nth === undefined || !pyLt(0, nth) || pyLt(num, nth)) nth = rng.randint(1, plusOne(num));
      const firstWord = pyLower(kw.first_word === undefined ? rng.keywords(1)[0]! : pyStrReceiver(kw.first_word, 'lower'));
      const nthIndex = pyIntIndex(nth);
      return (value) => {
        const paragraphs = value.split('\n\n');
        let count = paragraphs.length;
        for (const p of paragraphs) if (!pyStrip(p)) count--;
        if (!(nthIndex <= count)) return false;
        const paragraph = pyStrip(pyIndex(paragraphs, nthIndex - 1));
        if (!paragraph) return false;
        let word = pyStrip(pySplit(paragraph)[0]!);
        word = pyLstrip(pyLstrip(word, "'"), '"');
        let first = '';
        for (const ch of word) {
          if ('.,?!\'"'.includes(ch)) break;
          first += pyLower(ch);
        }
        return pyEq(count, num) && first === firstWord;
      };
    },
  },
  'detectable_content:number_placeholders': {
    kwargs: ['num_placeholders'],
    build: (kw, rng) => {
      const n = countArg(kw.num_placeholders, rng, 1, 4);
      return (value) => !pyLt(pyCount('\\[.*?\\]', value), n);
    },
  },
  'detectable_content:postscript': {
    kwargs: ['postscript_marker'],
    build: (kw, rng) => {
      let marker = kw.postscript_marker;
      if (typeof marker === 'string') marker = pyStrip(marker);
      if (marker === undefined) marker = rng.choice(POSTSCRIPT_MARKERS);
      return (value) => {
        const lower = pyLower(value);
        let pattern: string;
        if (marker === 'P.P.S') pattern = '\\s*p\\.\\s?p\\.\\s?s.*$';
        else if (marker === 'P.S.') pattern = '\\s*p\\.\\s?s\\..*$';
        else pattern = `\\s*${pyLower(pyStrReceiver(marker, 'lower'))}.*$`;
        return pySearch(pattern, lower, MULTILINE);
      };
    },
  },
  'detectable_format:number_bullet_lists': {
    kwargs: ['num_bullets'],
    build: (kw, rng) => {
      const n = countArg(kw.num_bullets, rng, 1, 5);
      return (value) => {
        const stars = pyCount('^\\s*\\*[^\\*].*$', value, MULTILINE);
        const dashes = pyCount('^\\s*-.*$', value, MULTILINE);
        return pyEq(stars + dashes, n);
      };
    },
  },
  'detectable_format:constrained_response': {
    kwargs: NO_KWARGS,
    build: () => (value) => {
      const v = pyStrip(value);
      return CONSTRAINED_RESPONSES.some((r) => v.includes(r));
    },
  },
  'detectable_format:number_highlighted_sections': {
    kwargs: ['num_highlights'],
    build: (kw, rng) => {
      const n = countArg(kw.num_highlights, rng, 1, 4);
      return (value) => {
        let count = 0;
        for (const h of pyFindall('\\*[^\\n\\*]*\\*', value)) if (pyStrip(pyStrip(h as string, '*'))) count++;
        for (const h of pyFindall('\\*\\*[^\\n\\*]*\\*\\*', value)) {
          const inner = (h as string).slice(2, -2);
          if (pyStrip(inner)) count++;
        }
        return !pyLt(count, n);
      };
    },
  },
  'detectable_format:multiple_sections': {
    kwargs: ['section_spliter', 'num_sections'],
    build: (kw, rng) => {
      let splitter = kw.section_spliter;
      if (typeof splitter === 'string') splitter = pyStrip(splitter);
      if (splitter === undefined) splitter = rng.choice(SECTION_SPLITTERS);
      const n = countArg(kw.num_sections, rng, 1, 5);
      return (value) => {
        if (typeof splitter !== 'string') throw pyError('TypeError', 'can only concatenate str to str');
        const parts = pySplitCount(`\\s?${splitter}\\s?\\d+\\s?`, value);
        return !pyLt(parts - 1, n);
      };
    },
  },
  'detectable_format:json_format': {
    kwargs: NO_KWARGS,
    build: () => (value) => {
      let v = pyStrip(value);
      for (const prefix of ['```json', '```Json', '```JSON', '```']) if (v.startsWith(prefix)) v = v.slice(prefix.length);
      if (v.endsWith('```')) v = v.slice(0, -3);
      return pyJsonLoadable(pyStrip(v));
    },
  },
  'detectable_format:title': {
    kwargs: NO_KWARGS,
    build: () => (value) => {
      for (const t of pyFindall('<<[^\\n]+>>', value)) {
        if (pyStrip(pyRstrip(pyLstrip(t as string, '<'), '>'))) return true;
      }
      return false;
    },
  },
  'combination:two_responses': {
    kwargs: NO_KWARGS,
    build: () => (value) => {
      const parts = value.split('******');
      const valid: string[] = [];
      for (let i = 0; i < parts.length; i++) {
        if (!pyStrip(parts[i]!)) {
          if (i !== 0 && i !== parts.length - 1) return false;
        } else valid.push(parts[i]!);
      }
      return valid.length === 2 && pyStrip(valid[0]!) !== pyStrip(valid[1]!);
    },
  },
  'combination:repeat_prompt': {
    kwargs: ['prompt_to_repeat'],
    build: (kw) => {
      const prompt = requirePrompt(kw);
      return (value) => pyLower(pyStrip(value)).startsWith(pyLower(pyStrip(pyStrReceiver(prompt, 'strip'))));
    },
  },
  'startend:end_checker': {
    kwargs: ['end_phrase'],
    build: (kw, rng) => {
      let phrase = kw.end_phrase;
      if (typeof phrase === 'string') phrase = pyStrip(phrase);
      if (phrase === undefined) phrase = rng.choice(ENDING_OPTIONS);
      return (value) => {
        const v = pyLower(pyStrip(pyStrip(value), '"'));
        return v.endsWith(pyLower(pyStrip(pyStrReceiver(phrase, 'strip'))));
      };
    },
  },
  'change_case:capital_word_frequency': {
    kwargs: ['capital_frequency', 'capital_relation'],
    build: (kw, rng) => {
      const n = kw.capital_frequency === undefined ? rng.randint(1, 20) : kw.capital_frequency;
      const relation = relationArg(kw.capital_relation, rng);
      return (value, tools) => {
        const count = wordTokenize(tools.punkt, value).filter((w) => pyIsUpper(w)).length;
        return relation === LESS_THAN ? pyLt(count, n) : !pyLt(count, n);
      };
    },
  },
  'change_case:english_capital': {
    kwargs: NO_KWARGS,
    build: () => (value, tools) => englishCase(value, pyIsUpper, tools),
  },
  'change_case:english_lowercase': {
    kwargs: NO_KWARGS,
    build: () => (value, tools) => englishCase(value, pyIsLower, tools),
  },
  'punctuation:no_comma': {
    kwargs: NO_KWARGS,
    build: () => (value) => !value.includes(','),
  },
  'startend:quotation': {
    kwargs: NO_KWARGS,
    build: () => (value) => {
      const v = pyStrip(value);
      return pyLen(v) > 1 && v.startsWith('"') && v.endsWith('"');
    },
  },
  'copy:repeat_phrase': {
    kwargs: ['phrase', 'small_n'],
    build: (kw, rng) => {
      const phrase = pyTruthy(kw.phrase) ? pyStrip(pyStrReceiver(kw.phrase, 'strip')) : rng.choice(PHRASES);
      const smallN = truthyArg(kw.small_n, rng, 2, 3);
      return (value) => {
        const ref = pySplit(phrase);
        const firstWord = pyIndex(ref, 0);
        const lastWord = pyIndex(ref, -1);
        const found = pyFindall(`${firstWord} .*? ${lastWord}`, value);
        if (!pyEq(found.length, smallN)) return false;
        let differences = 0;
        for (const f of found) {
          if (typeof f !== 'string') throw pyError('AttributeError', "'tuple' object has no attribute 'split'");
          const words = pySplit(f);
          differences = 0;
          if (words.length !== ref.length) return false;
          for (let i = 0; i < words.length; i++) {
            if (words[i] !== ref[i]) {
              differences++;
              if (differences > 1) return false;
            }
          }
        }
        return differences === 1 ? true : null;
      };
    },
  },
  'copy:copy': {
    kwargs: ['prompt_to_repeat'],
    build: (kw) => copyCheck(requirePrompt(kw)),
  },
  'new:copy_span_idx': {
    kwargs: ['prompt_to_repeat', 'n_start', 'n_end'],
    build: (kw, rng) => {
      const prompt = requirePrompt(kw);
      const promptLen = typeof prompt === 'string' ? pyLen(prompt) : Array.isArray(prompt) ? prompt.length : NaN;
      // An explicit 0 is honoured (upstream treats 0 as missing and draws a random start).
      const nStart = kw.n_start === undefined || !pyTruthy(kw.n_start) && kw.n_start !== 0 ? rng.randint(0, promptLen - 2) : kw.n_start;
      const nEnd = pyTruthy(kw.n_end) ? kw.n_end : rng.randint(plusOne(nStart), promptLen - 1);
      const start = pyIntIndex(nStart);
      const end = pyIntIndex(nEnd);
      return (value) => {
        const span = pySliceStr(pyStrReceiver(prompt, 'strip'), start, end);
        return pyLower(pyStrip(value)) === pyLower(pyStrip(span));
      };
    },
  },
  'detectable_format:sentence_hyphens': {
    kwargs: NO_KWARGS,
    build: () => (value) => {
      const gold = splitIntoSentences(value.replaceAll('-', ' '));
      const parts = value.split('-');
      const n = Math.min(gold.length, parts.length);
      for (let i = 0; i < n; i++) {
        if (pyStrip(parts[i]!) !== parts[i]) return false;
        if (parts[i] !== gold[i]) return false;
      }
      return true;
    },
  },
  'keywords:no_adjacent_consecutive': {
    kwargs: NO_KWARGS,
    build: () => (value) => {
      const words = pySplit(value);
      for (let i = 0; i + 1 < words.length; i++) {
        const a = pyLower(firstCodePoint(words[i]!));
        const b = pyLower(firstCodePoint(words[i + 1]!));
        if (pyLen(a) !== 1 || pyLen(b) !== 1) return false;
        if (b.codePointAt(0)! - a.codePointAt(0)! === 1) return false;
      }
      return true;
    },
  },
  'detectable_format:square_brackets': {
    kwargs: NO_KWARGS,
    build: () => (value) => pySplit(value).every((w) => w.startsWith('[') && w.endsWith(']')),
  },
  'keywords:word_once': {
    kwargs: ['keyword'],
    build: (kw, rng) => {
      const keyword = keywordArg(kw.keyword, rng);
      return (value) => pyCount(keyword, value, IGNORECASE) === 1;
    },
  },
  'keywords:word_count_different_numbers': {
    kwargs: ['keyword', 'frequency', 'relation'],
    build: (kw, rng) => frequencyCheck(kw, rng),
  },
  'keywords:exclude_word_harder': {
    kwargs: ['keyword', 'instruction'],
    build: (kw, rng) => {
      const keyword = pyTruthy(kw.keyword)
        ? pyStrip(pyStrReceiver(kw.keyword, 'strip'))
        : rng.choice(pySplit(pyStrReceiver(kw.instruction, 'split')));
      return (value) => !value.includes(` ${keyword} `);
    },
  },
  'paragraphs:paragraphs': {
    kwargs: NO_KWARGS,
    build: () => (value) => countPieces(value.split(STARS_SPLIT)) === 2,
  },
  'paragraphs:paragraphs2': {
    kwargs: NO_KWARGS,
    build: () => (value) => countPieces(value.split('\n\n')) === 2,
  },
  'first_word:first_word_sent': {
    kwargs: ['first_word'],
    build: (kw, rng) => {
      let first: string;
      if (!pyTruthy(kw.first_word)) first = rng.keywords(1)[0]!;
      else if (typeof kw.first_word !== 'string') {
        // Upstream compares instead of assigning here, then reads the unset attribute.
        throw pyError('AttributeError', "object has no attribute '_first_word'");
      } else first = pyStrip(kw.first_word);
      return (value) => {
        for (const s of splitIntoSentences(value)) {
          if (!pyStrip(s)) return false;
          if (pyLower(pyStrip(pySplit(s)[0]!)) !== pyLower(first)) return false;
        }
        return true;
      };
    },
  },
  'first_word:first_word_answer': {
    kwargs: ['first_word'],
    build: (kw, rng) => {
      const first = keywordArg(kw.first_word, rng);
      return (value) => {
        const words = pySplit(value);
        if (!pyStrip(value) || words.length === 0) return false;
        return pyLower(pyStrip(words[0]!)) === pyLower(first);
      };
    },
  },
  'last_word:last_word_sent': {
    kwargs: ['last_word'],
    build: (kw, rng) => {
      let last: string;
      if (!pyTruthy(kw.last_word)) last = rng.keywords(1)[0]!;
      else if (typeof kw.last_word === 'string') last = pyStrip(kw.last_word);
      else last = pyStrip(pyStrReceiver(firstElement(kw.last_word), 'strip'));
      return (value) => {
        for (const s of splitIntoSentences(value)) {
          if (!pyStrip(s)) return false;
          const words = pySplit(s);
          const word = pyStrip(words[words.length - 1]!).replace(NON_WORD_NON_SPACE, '');
          if (pyLower(word) !== pyLower(last)) return false;
        }
        return true;
      };
    },
  },
  'last_word:last_word_answer': {
    kwargs: ['last_word'],
    build: (kw, rng) => {
      const last = keywordArg(kw.last_word, rng);
      return (value) => {
        const word = pyStrip(pyIndex(pySplit(value), -1)).replace(NON_WORD_NON_SPACE, '');
        return pyLower(word) === pyLower(last);
      };
    },
  },
  'detectable_format:bigram_wrapping': {
    kwargs: NO_KWARGS,
    build: () => (value) => {
      const words = pySplit(value);
      for (let i = 0; i < words.length - 1; i += 2) {
        if (!(words[i]!.startsWith('<<') && words[i + 1]!.endsWith('>>'))) return false;
      }
      return true;
    },
  },
  'copy:copying_simple': {
    kwargs: ['prompt_to_repeat'],
    build: (kw) => copyCheck(requirePrompt(kw)),
  },
  'copy:copying_multiple': {
    kwargs: ['prompt_to_repeat', 'N'],
    build: (kw, rng) => {
      const prompt = requirePrompt(kw);
      const n = truthyArg(kw.N, rng, 2, 3);
      return (value) => {
        const prompts = value.split('******');
        if (!pyEq(prompts.length, n)) return false;
        const want = pyLower(pyStrip(pyStrReceiver(prompt, 'strip')));
        return prompts.every((p) => pyLower(pyStrip(p)) === want);
      };
    },
  },
  'punctuation:punctuation_dot': {
    kwargs: NO_KWARGS,
    build: () => (value) => !value.includes('.'),
  },
  'punctuation:punctuation_exclamation': {
    kwargs: NO_KWARGS,
    build: () => (value) => !value.includes('!'),
  },
  'count:lowercase_counting': {
    kwargs: ['N'],
    build: (kw, rng) => {
      const n = truthyArg(kw.N, rng, 2, 3);
      return (value) => !pyLt(n, pyCount('\\b[a-z]+\\b', value));
    },
  },
  'letters:letter_counting': {
    kwargs: ['N', 'relation'],
    build: (kw, rng) => {
      const n = truthyArg(kw.N, rng, 2, 3);
      const relation = pyTruthy(kw.relation) ? kw.relation : rng.choice(RELATIONS);
      return (value) => {
        const count = pyCount('[a-zA-Z]', value);
        if (relation === AT_LEAST) return !pyLt(count, n);
        if (relation === LESS_THAN) return pyLt(count, n);
        return null;
      };
    },
  },
  'letters:letter_counting2': {
    kwargs: ['letter', 'let_frequency', 'let_relation'],
    build: (kw, rng) => letterFrequencyCheck(kw, rng),
  },
  'count:counting_composition': {
    kwargs: ['n_sent', 'n_words'],
    build: (kw, rng) => {
      const nSent = truthyArg(kw.n_sent, rng, 2, 3);
      const nWords = truthyArg(kw.n_words, rng, 2, 3);
      return (value, tools) => {
        const paragraphs = value.split(STARS_SPLIT);
        let count = paragraphs.length;
        for (let i = 0; i < paragraphs.length; i++) {
          const p = paragraphs[i]!;
          if (!pyStrip(p)) {
            if (i === 0 || i === paragraphs.length - 1) count--;
            else return false;
          }
          const sentences = splitIntoSentences(p);
          if (!pyEq(sentences.length, nSent)) return false;
          for (const s of sentences) {
            if (!pyEq(wordTokenize(tools.punkt, s).length, nWords)) return false;
          }
        }
        return count === 3;
      };
    },
  },
  'count:count_unique': {
    kwargs: NO_KWARGS,
    build: () => (value, tools) => {
      const words = wordTokenize(tools.punkt, value);
      return new Set(words).size === words.length;
    },
  },
  'count:count_increment_word': {
    kwargs: ['keyword1', 'keyword2'],
    build: (kw) => {
      // A missing keyword makes upstream search with a list, which raises TypeError.
      if (!pyTruthy(kw.keyword1) || !pyTruthy(kw.keyword2)) {
        throw pyError('TypeError', 'first argument must be string or compiled pattern');
      }
      const k1 = pyStrip(pyStrReceiver(kw.keyword1, 'strip'));
      const k2 = pyStrip(pyStrReceiver(kw.keyword2, 'strip'));
      return (value) => pyCount(k1, value, IGNORECASE) === 1 && pyCount(k2, value, IGNORECASE) === 2;
    },
  },
  'keywords:palindrome': {
    kwargs: NO_KWARGS,
    build: () => (value) => pySplit(value).some((w) => w === Array.from(w).reverse().join('')),
  },
  'keywords:keyword_specific_position': {
    kwargs: ['keyword', 'n', 'm'],
    build: (kw, rng) => {
      let keyword: string;
      if (!pyTruthy(kw.keyword)) keyword = rng.keywords(1)[0]!;
      else if (typeof kw.keyword === 'string') keyword = pyStrip(kw.keyword);
      else keyword = pyStrip(pyStrReceiver(firstElement(kw.keyword), 'strip'));
      const n = truthyArg(kw.n, rng, 1, 20);
      const m = truthyArg(kw.m, rng, 1, 30);
      return (value, tools) => {
        const sentences = splitIntoSentences(value);
        if (pyLt(sentences.length, n)) return false;
        const words = wordTokenize(tools.punkt, pyIndex(sentences, pyIntIndex(n) - 1));
        if (pyLt(words.length, m)) return false;
        return pyIndex(words, pyIntIndex(m) - 1) === keyword;
      };
    },
  },
  'keywords:start_end': {
    kwargs: NO_KWARGS,
    build: () => (value, tools) => {
      const words = wordTokenize(tools.punkt, value);
      if (words.length < 2) return false;
      return pyLower(words[0]!) === pyLower(words[words.length - 1]!);
    },
  },
};

/** `v[0]` for a non-str kwarg: a list gives its first element; a JSON object has only str keys (KeyError). */
function firstElement(v: unknown): unknown {
  if (Array.isArray(v)) return pyIndex(v, 0);
  if (typeof v === 'object' && v !== null) throw pyError('KeyError', '0');
  throw pyError('TypeError', 'object is not subscriptable');
}

function requirePrompt(kw: Record<string, unknown>): unknown {
  if (!pyTruthy(kw.prompt_to_repeat)) throw pyError('ValueError', 'prompt_to_repeat must be set.');
  return kw.prompt_to_repeat;
}

function copyCheck(prompt: unknown): Check {
  return (value) => pyLower(pyStrip(value)) === pyLower(pyStrip(pyStrReceiver(prompt, 'strip')));
}

function frequencyCheck(kw: Record<string, unknown>, rng: Rng): Check {
  const keyword = keywordArg(kw.keyword, rng);
  const n = countArg(kw.frequency, rng, 1, 3);
  const relation = relationArg(kw.relation, rng);
  return (value) => compare(pyCount(keyword, value, IGNORECASE), relation, n);
}

function letterFrequencyCheck(kw: Record<string, unknown>, rng: Rng): Check {
  const raw = kw.letter;
  let letter: string;
  const invalid = (): boolean => {
    if (!pyTruthy(raw)) return true;
    if (typeof raw === 'string') {
      if (pyLen(raw) > 1) return true;
      const lower = pyLower(raw);
      if (pyLen(lower) !== 1) throw pyError('TypeError', 'ord() expected a character');
      const c = lower.codePointAt(0)!;
      return c < 97 || c > 122;
    }
    if (Array.isArray(raw)) {
      if (raw.length > 1) return true;
      throw pyError('AttributeError', "'list' object has no attribute 'lower'");
    }
    if (typeof raw === 'object' && raw !== null) {
      if (Object.keys(raw).length > 1) return true;
      throw pyError('AttributeError', "'dict' object has no attribute 'lower'");
    }
    throw pyError('TypeError', 'object has no len()');
  };
  if (invalid()) letter = rng.choice(ASCII_LETTERS);
  else letter = pyStrip(raw as string);
  letter = pyLower(letter);
  const n = countArg(kw.let_frequency, rng, 1, 10);
  const relation = relationArg(kw.let_relation, rng);
  return (value) => {
    let count = 0;
    for (const ch of pyLower(value)) if (ch === letter) count++;
    return relation === LESS_THAN ? pyLt(count, n) : !pyLt(count, n);
  };
}

function englishCase(value: string, caseTest: (s: string) => boolean, tools: Tools): boolean {
  try {
    return caseTest(value) && detect(value, tools.langdetectProfilesDir) === 'en';
  } catch (e) {
    if (e instanceof LangDetectException) return true;
    throw e;
  }
}

export const INSTRUCTION_IDS: readonly string[] = Object.keys(INSTRUCTIONS).sort(pyStrCompare);

/**
 * One instruction as the server evaluates it: unknown id, a kwargs entry that is not a mapping,
 * an unexpected kwarg, an invalid value or any error inside the check count as not followed.
 */
export function checkInstruction(
  instructionId: unknown,
  kwargs: unknown,
  value: string,
  tools: Tools,
): { ok: boolean; error?: string } {
  try {
    if (typeof instructionId !== 'string' || !Object.hasOwn(INSTRUCTIONS, instructionId)) {
      throw pyError('KeyError', JSON.stringify(instructionId));
    }
    const spec = INSTRUCTIONS[instructionId]!;
    const raw = kwargs === null || kwargs === undefined ? {} : kwargs;
    if (typeof raw !== 'object' || Array.isArray(raw)) {
      throw pyError('AttributeError', 'kwargs entry has no attribute \'items\'');
    }
    const kw: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
      if (v === null || v === undefined) continue;
      if (!spec.kwargs.includes(k)) {
        throw pyError('TypeError', `build_description() got an unexpected keyword argument '${k}'`);
      }
      kw[k] = v;
    }
    const check = spec.build(kw, new Rng(instructionId));
    return { ok: check(value, tools) === true };
  } catch (e) {
    // reported as `Type: message`, whether raised here or by core's Python helpers
    const error = e instanceof PyException ? `${e.pyType}: ${e.pyMessage}` : e instanceof Error ? e.message : String(e);
    return { ok: false, error };
  }
}
