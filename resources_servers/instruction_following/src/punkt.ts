// Punkt sentence tokenizer (Kiss & Strunk 2006), tokenization phase, with NLTK's decision rules.
//
// Behaves like `nltk.sent_tokenize(text)` (PunktSentenceTokenizer.tokenize with
// realign_boundaries=True) given NLTK's English parameters in the `punkt_tab` layout:
// abbrev_types.txt, collocations.tab, sent_starters.txt and ortho_context.tab.

import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { NgError } from '@nemo-gym/core/errors';
import { INSTRUCTION_FOLLOWING_ERRORS } from './errors.js';
import { PY_WHITESPACE, pyIsLower, pyIsUpper, pyRstrip, pyStrip } from '@nemo-gym/core/py';

export interface PunktParams {
  abbrevTypes: Set<string>;
  collocations: Set<string>; // "a\tb"
  sentStarters: Set<string>;
  orthoContext: Map<string, number>;
}

const ORTHO_BEG_UC = 1 << 1;
const ORTHO_MID_UC = 1 << 2;
const ORTHO_UNK_UC = 1 << 3;
const ORTHO_BEG_LC = 1 << 4;
const ORTHO_MID_LC = 1 << 5;
const ORTHO_UNK_LC = 1 << 6;
const ORTHO_UC = ORTHO_BEG_UC | ORTHO_MID_UC | ORTHO_UNK_UC;
const ORTHO_LC = ORTHO_BEG_LC | ORTHO_MID_LC | ORTHO_UNK_LC;

const PUNKT_FILES = ['abbrev_types.txt', 'collocations.tab', 'sent_starters.txt', 'ortho_context.tab'];
const PUNKT_SUBDIR = join('tokenizers', 'punkt_tab', 'english');

/** NLTK's data search path: $NLTK_DATA entries, then the usual per-user and system folders. */
export function nltkSearchPath(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs: string[] = [];
  if (env.NLTK_DATA) dirs.push(...env.NLTK_DATA.split(':').filter((d) => d.length > 0));
  dirs.push(join(homedir(), 'nltk_data'));
  dirs.push('/usr/share/nltk_data', '/usr/local/share/nltk_data', '/usr/lib/nltk_data', '/usr/local/lib/nltk_data');
  return dirs;
}

export class PunktDataNotFoundError extends NgError {
  constructor(readonly searched: string[]) {
    super(
      INSTRUCTION_FOLLOWING_ERRORS.NG_ERR_PUNKT_DATA_NOT_FOUND,
      `NLTK Punkt parameters for English were not found. Looked for ${PUNKT_SUBDIR}/{${PUNKT_FILES.join(',')}} under:\n` +
        searched.map((d) => `  - ${d}`).join('\n') +
        `\nInstall NLTK's published 'punkt_tab' data package into one of these folders (for example unpack ` +
        `punkt_tab.zip into ~/nltk_data/tokenizers/, or run \`python -m nltk.downloader punkt_tab\` on a machine ` +
        `with NLTK), or set NLTK_DATA or the server config key 'nltk_data_dir' to a folder that contains ${PUNKT_SUBDIR}.`,
    );
    this.name = 'PunktDataNotFoundError';
  }
}

/** Find the folder holding the English punkt_tab files; `extraDir` (config) is searched first. */
export function findPunktDir(extraDir?: string | null, env: NodeJS.ProcessEnv = process.env): string {
  const roots = [...(extraDir ? [extraDir] : []), ...nltkSearchPath(env)];
  for (const root of roots) {
    const dir = join(root, PUNKT_SUBDIR);
    if (PUNKT_FILES.every((f) => existsSync(join(dir, f)))) return dir;
  }
  throw new PunktDataNotFoundError(roots);
}

function lines(text: string): string[] {
  return text.split(/\r?\n/).filter((l) => l.length > 0);
}

export function loadPunktParams(dir: string): PunktParams {
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  const abbrevTypes = new Set(lines(read('abbrev_types.txt')).map((l) => pyStrip(l)));
  const sentStarters = new Set(lines(read('sent_starters.txt')).map((l) => pyStrip(l)));
  const collocations = new Set<string>();
  for (const l of lines(read('collocations.tab'))) {
    const [a, b] = l.split('\t');
    if (a !== undefined && b !== undefined) collocations.add(`${a}\t${b}`);
  }
  const orthoContext = new Map<string, number>();
  for (const l of lines(read('ortho_context.tab'))) {
    const tab = l.lastIndexOf('\t');
    if (tab < 0) continue;
    orthoContext.set(l.slice(0, tab), parseInt(l.slice(tab + 1), 10) | 0);
  }
  return { abbrevTypes, collocations, sentStarters, orthoContext };
}

// ---------------------------------------------------------------------------------------------
// Regular expressions of PunktLanguageVars (English defaults), with Python's Unicode classes.

const WS = `[${PY_WHITESPACE}]`;
const NWS = `[^${PY_WHITESPACE}]`;
const NON_WORD = `(?:[)";}\\]*:@'({\\[?!])`;
const MULTI_CHAR = `(?:-{2,}|\\.{2,}|(?:\\.${WS}){2,}\\.)`;
const WORD_START = `[^("\`{\\[:;&#*@)}\\]\\-,]`;
const END = '(?![\\s\\S])';
const WORD_TOKENIZER = new RegExp(
  `${MULTI_CHAR}|(?=${WORD_START})${NWS}+?(?=${WS}|${END}|${NON_WORD}|${MULTI_CHAR}|,(?=${END}|${WS}|${NON_WORD}|${MULTI_CHAR}))|${NWS}`,
  'gu',
);
const PERIOD_CONTEXT = new RegExp(`[.?!](?=(${NON_WORD}|${WS}+(${NWS}+)))`, 'gu');
// re_boundary_realignment, MULTILINE: `$` is before "\n" or at the end.
const BOUNDARY_REALIGNMENT = new RegExp(`^["')\\]}]+?(?:${WS}+|(?=--)|(?=\\n|${END}))`, 'u');

const RE_NUMERIC = /^-?[.,]?\p{Nd}[\p{Nd},.\-]*\.?$/u;
const RE_ELLIPSIS = /^\.\.+$/u;
const RE_INITIAL = /^[\p{L}\p{Nl}\p{No}_]\.$/u; // [^\W\d]\.  (word characters other than decimal digits)
const ASCII_WS = new Set([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
const PUNCTUATION = new Set([';', ':', ',', '.', '!', '?']);

interface Token {
  tok: string;
  type: string;
  periodFinal: boolean;
  sentbreak: boolean;
  abbr: boolean;
  ellipsis: boolean;
}

function makeToken(tok: string): Token {
  const lower = tok.toLowerCase();
  // Python `$` also matches before a trailing "\n"; tokens never contain one.
  const type = RE_NUMERIC.test(lower) ? '##number##' : lower;
  return { tok, type, periodFinal: tok.endsWith('.'), sentbreak: false, abbr: false, ellipsis: false };
}

function typeNoPeriod(t: Token): string {
  // len(type) > 1 in code points; a one-code-point type never ends in '.' plus something else.
  return t.type.length > 1 && t.type.endsWith('.') ? t.type.slice(0, -1) : t.type;
}

function typeNoSentperiod(t: Token): string {
  return t.sentbreak ? typeNoPeriod(t) : t.type;
}

function firstChar(s: string): string {
  const cp = s.codePointAt(0);
  return cp === undefined ? '' : String.fromCodePoint(cp);
}

export class PunktSentenceTokenizer {
  constructor(private readonly params: PunktParams) {}

  /** `nltk.sent_tokenize(text)` */
  tokenize(text: string): string[] {
    return this.spans(text).map(([s, e]) => text.slice(s, e));
  }

  countSentences(text: string): number {
    return this.spans(text).length;
  }

  private lastText: string | null = null;
  private lastSpans: [number, number][] = [];

  spans(text: string): [number, number][] {
    // Several checks of one response tokenize the same text: keep the last result.
    if (text === this.lastText) return this.lastSpans;
    const spans = this.realignBoundaries(text, this.slicesFromText(text));
    this.lastText = text;
    this.lastSpans = spans;
    return spans;
  }

  /** PunktLanguageVars.word_tokenize */
  wordTokenize(s: string): string[] {
    return s.match(WORD_TOKENIZER) ?? [];
  }

  private tokenizeWords(plaintext: string): Token[] {
    const out: Token[] = [];
    for (const line of plaintext.split('\n')) {
      if (pyStrip(line).length === 0) continue;
      for (const tok of this.wordTokenize(line)) out.push(makeToken(tok));
    }
    return out;
  }

  private firstPass(t: Token): void {
    const tok = t.tok;
    if (tok === '.' || tok === '?' || tok === '!') {
      t.sentbreak = true;
    } else if (RE_ELLIPSIS.test(tok)) {
      t.ellipsis = true;
    } else if (t.periodFinal && !tok.endsWith('..')) {
      const base = tok.slice(0, -1).toLowerCase();
      const dash = base.split('-');
      if (this.params.abbrevTypes.has(base) || this.params.abbrevTypes.has(dash[dash.length - 1]!)) {
        t.abbr = true;
      } else {
        t.sentbreak = true;
      }
    }
  }

  private orthoHeuristic(t: Token): boolean | 'unknown' {
    if (PUNCTUATION.has(t.tok)) return false;
    const ctx = this.params.orthoContext.get(typeNoSentperiod(t)) ?? 0;
    const first = firstChar(t.tok);
    const upper = pyIsUpper(first);
    const lower = pyIsLower(first);
    if (upper && ctx & ORTHO_LC && !(ctx & ORTHO_MID_UC)) return true;
    if (lower && (ctx & ORTHO_UC || !(ctx & ORTHO_BEG_LC))) return false;
    return 'unknown';
  }

  private secondPass(t1: Token, t2: Token): void {
    if (!t1.periodFinal) return;
    const typ = typeNoPeriod(t1);
    const nextTyp = typeNoSentperiod(t2);
    const isInitial = RE_INITIAL.test(t1.tok);
    if (this.params.collocations.has(`${typ}\t${nextTyp}`)) {
      t1.sentbreak = false;
      t1.abbr = true;
      return;
    }
    if ((t1.abbr || t1.ellipsis) && !isInitial) {
      const s = this.orthoHeuristic(t2);
      if (s === true) {
        t1.sentbreak = true;
        return;
      }
      if (pyIsUpper(firstChar(t2.tok)) && this.params.sentStarters.has(nextTyp)) {
        t1.sentbreak = true;
        return;
      }
    }
    if (isInitial || typ === '##number##') {
      const s = this.orthoHeuristic(t2);
      if (s === false) {
        t1.sentbreak = false;
        t1.abbr = true;
        return;
      }
      if (
        s === 'unknown' &&
        isInitial &&
        pyIsUpper(firstChar(t2.tok)) &&
        !((this.params.orthoContext.get(nextTyp) ?? 0) & ORTHO_LC)
      ) {
        t1.sentbreak = false;
        t1.abbr = true;
      }
    }
  }

  /** True when some token other than the last one ends a sentence. */
  private textContainsSentbreak(text: string): boolean {
    const toks = this.tokenizeWords(text);
    for (const t of toks) this.firstPass(t);
    for (let i = 0; i < toks.length; i++) {
      if (i + 1 < toks.length) this.secondPass(toks[i]!, toks[i + 1]!);
      if (toks[i]!.sentbreak && i + 1 < toks.length) return true;
    }
    return false;
  }

  private lastWhitespaceIndex(text: string, from: number, to: number): number {
    // Index within text[from:to] of its last ASCII whitespace character, 0 when none.
    for (let i = to - 1; i >= from; i--) if (ASCII_WS.has(text[i]!)) return i - from;
    return 0;
  }

  private slicesFromText(text: string): [number, number][] {
    const out: [number, number][] = [];
    let lastBreak = 0;
    let prevStart = 0;
    let prevStop = 0;
    let prev: RegExpExecArray | null = null;
    const decide = (m: RegExpExecArray, sliceStart: number, sliceStop: number) => {
      const context = text.slice(sliceStart, sliceStop) + m[0] + m[1];
      if (this.textContainsSentbreak(context)) {
        const end = m.index + m[0].length;
        out.push([lastBreak, end]);
        if (m[2]) lastBreak = end + m[1]!.length - m[2].length;
        else lastBreak = end;
      }
    };
    PERIOD_CONTEXT.lastIndex = 0;
    for (const m of text.matchAll(PERIOD_CONTEXT)) {
      const match = m as RegExpExecArray;
      let idx = this.lastWhitespaceIndex(text, prevStop, match.index);
      if (idx) idx += prevStop + 1;
      else idx = prevStart;
      const wordStart = idx;
      const wordStop = match.index;
      if (prev && prevStop <= wordStart) decide(prev, prevStart, prevStop);
      prev = match;
      prevStart = wordStart;
      prevStop = wordStop;
    }
    if (prev) decide(prev, prevStart, prevStop);
    out.push([lastBreak, pyRstrip(text).length]);
    return out;
  }

  private realignBoundaries(text: string, slices: [number, number][]): [number, number][] {
    const out: [number, number][] = [];
    let realign = 0;
    for (let i = 0; i < slices.length; i++) {
      const s1: [number, number] = [slices[i]![0] + realign, slices[i]![1]];
      const s2 = slices[i + 1];
      if (!s2) {
        if (s1[1] > s1[0]) out.push(s1);
        continue;
      }
      const m = BOUNDARY_REALIGNMENT.exec(text.slice(s2[0], s2[1]));
      if (m) {
        out.push([s1[0], s2[0] + pyRstrip(m[0]).length]);
        realign = m[0].length;
      } else {
        realign = 0;
        if (s1[1] > s1[0]) out.push(s1);
      }
    }
    return out;
  }
}
