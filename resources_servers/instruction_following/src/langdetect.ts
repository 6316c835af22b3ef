// Language detection with the algorithm of Python's `langdetect` 1.0.9 (a port of Shuyo's
// language-detection): character n-grams (1-3) scored against per-language profiles in 7 random
// trials, result = language with the highest averaged probability (above 0.1).
//
// The language profiles and the CJK normalisation classes are read from the npm `langdetect`
// package (the same profile data as the Python package, 53 of its 55 languages: Catalan and Welsh
// are absent), or the profiles from a folder of the Python package's files. Randomness uses
// CPython's Mersenne Twister seeded with 0, which is what `DetectorFactory.seed = 0` gives in
// Python, so results are deterministic.

import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { NgError } from '@nemo-gym/core/errors';
import { INSTRUCTION_FOLLOWING_ERRORS } from './errors.js';
import { pyIsUpper } from '@nemo-gym/core/py';

export class LangDetectException extends NgError {
  constructor(message: string) {
    super(INSTRUCTION_FOLLOWING_ERRORS.NG_ERR_LANGDETECT, message);
    this.name = 'LangDetectException';
  }
}

// ------------------------------------------------------------------ CPython's random.Random

export class PyRandom {
  private mt = new Uint32Array(624);
  private mti = 625;
  private gaussNext: number | null = null;

  seed(n: number): void {
    this.initByArray([n >>> 0]);
    this.gaussNext = null;
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < 624; i++) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.mti = 624;
  }

  private initByArray(key: number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(624, key.length); k > 0; k--) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = ((mt[i]! ^ Math.imul(prev, 1664525)) + key[j]! + j) >>> 0;
      i++;
      j++;
      if (i >= 624) {
        mt[0] = mt[623]!;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = 623; k > 0; k--) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = ((mt[i]! ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= 624) {
        mt[0] = mt[623]!;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  private genrand(): number {
    const mt = this.mt;
    if (this.mti >= 624) {
      let kk = 0;
      const mag = (y: number) => (y & 1 ? 0x9908b0df : 0);
      for (; kk < 624 - 397; kk++) {
        const y = (mt[kk]! & 0x80000000) | (mt[kk + 1]! & 0x7fffffff);
        mt[kk] = (mt[kk + 397]! ^ (y >>> 1) ^ mag(y)) >>> 0;
      }
      for (; kk < 623; kk++) {
        const y = (mt[kk]! & 0x80000000) | (mt[kk + 1]! & 0x7fffffff);
        mt[kk] = (mt[kk + (397 - 624)]! ^ (y >>> 1) ^ mag(y)) >>> 0;
      }
      const y = (mt[623]! & 0x80000000) | (mt[0]! & 0x7fffffff);
      mt[623] = (mt[396]! ^ (y >>> 1) ^ mag(y)) >>> 0;
      this.mti = 0;
    }
    let y = mt[this.mti++]!;
    y ^= y >>> 11;
    y = (y ^ ((y << 7) & 0x9d2c5680)) >>> 0;
    y = (y ^ ((y << 15) & 0xefc60000)) >>> 0;
    y ^= y >>> 18;
    return y >>> 0;
  }

  random(): number {
    const a = this.genrand() >>> 5;
    const b = this.genrand() >>> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
  }

  private getrandbits(k: number): number {
    return k === 0 ? 0 : this.genrand() >>> (32 - k);
  }

  randbelow(n: number): number {
    const k = 32 - Math.clz32(n);
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  gauss(mu: number, sigma: number): number {
    let z = this.gaussNext;
    this.gaussNext = null;
    if (z === null) {
      const x2pi = this.random() * 2 * Math.PI;
      const g2rad = Math.sqrt(-2.0 * Math.log(1.0 - this.random()));
      z = Math.cos(x2pi) * g2rad;
      this.gaussNext = Math.sin(x2pi) * g2rad;
    }
    return mu + z * sigma;
  }
}

// ------------------------------------------------------------------ profiles

interface Profiles {
  langs: string[];
  wordLangProb: Map<string, Float64Array>;
  cjkMap: Map<string, string>;
}

const profileCache = new Map<string, Profiles>();

function cpLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function npmPackageRoot(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve('langdetect/package.json'));
}

/** Cheap start-up check of a profile folder (without parsing the profiles): a problem, or null. */
export function profilesDirProblem(dir: string): string | null {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => !f.startsWith('.'));
  } catch (e) {
    return (e as Error).message;
  }
  if (!files.includes('en')) return `no profile named "en" among ${files.length} files`;
  return null;
}

/**
 * Language profiles: by default the 53 shipped with the npm `langdetect` package; `dir` may name a
 * folder with the Python package's profile files (55 languages, files named by language code,
 * e.g. Debian's /usr/lib/python3/dist-packages/langdetect/profiles).
 */
export function loadProfiles(dir?: string | null): Profiles {
  const key = dir ?? '';
  const hit = profileCache.get(key);
  if (hit) return hit;
  const root = npmPackageRoot();
  const profileDir = dir ?? join(root, 'profiles');
  const files = readdirSync(profileDir)
    .filter((f) => !f.startsWith('.') && (dir ? true : f.endsWith('.json')))
    .sort();
  if (files.length < 2) throw new LangDetectException(`need at least 2 language profiles in ${profileDir}`);
  const langs = files.map((f) => f.replace(/\.json$/, ''));
  const wordLangProb = new Map<string, Float64Array>();
  files.forEach((f, index) => {
    const prof = JSON.parse(readFileSync(join(profileDir, f), 'utf8')) as { freq: Record<string, number>; n_words: number[] };
    for (const [word, count] of Object.entries(prof.freq)) {
      let arr = wordLangProb.get(word);
      if (!arr) {
        arr = new Float64Array(files.length);
        wordLangProb.set(word, arr);
      }
      const len = cpLength(word);
      if (len >= 1 && len <= 3) arr[index] = count / prof.n_words[len - 1]!;
    }
  });
  const cjk = JSON.parse(readFileSync(join(root, 'res', 'cjk.json'), 'utf8')) as Record<string, string>;
  const cjkMap = new Map<string, string>();
  for (const cls of Object.values(cjk)) {
    const chars = Array.from(cls);
    const rep = chars[0]!;
    for (const ch of chars) cjkMap.set(ch, rep);
  }
  const profiles = { langs, wordLangProb, cjkMap };
  profileCache.set(key, profiles);
  return profiles;
}

// ------------------------------------------------------------------ text normalisation

const URL_RE = /https?:\/\/[-_.?&~;+=/#0-9A-Za-z]{1,2076}/g;
const MAIL_RE = /[-_.0-9A-Za-z]{1,64}@[-_0-9A-Za-z]{1,255}[-_.0-9A-Za-z]{1,255}/g;
const VI_RE = /([AEIOUYaeiouy\u00c2\u00ca\u00d4\u00e2\u00ea\u00f4\u0102\u0103\u01a0\u01a1\u01af\u01b0])([\u0300\u0301\u0303\u0309\u0323])/g;
const LATIN1_EXCLUDED = new Set(['\u00a0', '\u00ab', '\u00b0', '\u00bb']);
const MAX_TEXT_LENGTH = 10000;

function inRange(cp: number, lo: number, hi: number): boolean {
  return cp >= lo && cp <= hi;
}

function normalizeChar(ch: string, cjkMap: Map<string, string>): string {
  const cp = ch.codePointAt(0)!;
  if (cp <= 0x7f) {
    return ch < 'A' || (ch > 'Z' && ch < 'a') || ch > 'z' ? ' ' : ch;
  }
  if (cp <= 0xff) return LATIN1_EXCLUDED.has(ch) ? ' ' : ch;
  if (inRange(cp, 0x180, 0x24f)) {
    if (cp === 0x219) return '\u015f';
    if (cp === 0x21b) return '\u0163';
    return ch;
  }
  if (inRange(cp, 0x2000, 0x206f)) return ' ';
  if (inRange(cp, 0x600, 0x6ff)) return cp === 0x6cc ? '\u064a' : ch;
  if (inRange(cp, 0x1e00, 0x1eff)) return cp >= 0x1ea0 ? '\u1ec3' : ch;
  if (inRange(cp, 0x3040, 0x309f)) return '\u3042';
  if (inRange(cp, 0x30a0, 0x30ff)) return '\u30a2';
  if (inRange(cp, 0x3100, 0x312f) || inRange(cp, 0x31a0, 0x31bf)) return '\u3105';
  if (inRange(cp, 0x4e00, 0x9fff)) return cjkMap.get(ch) ?? ch;
  if (inRange(cp, 0xac00, 0xd7af)) return '\uac00';
  return ch;
}

export function prepareText(input: string): string[] {
  let text = input.replace(URL_RE, ' ').replace(MAIL_RE, ' ');
  text = text.replace(VI_RE, (m) => m.normalize('NFC'));
  const out: string[] = [];
  let pre = '';
  let i = 0;
  for (const ch of text) {
    if (i++ >= MAX_TEXT_LENGTH) break;
    if (ch !== ' ' || pre !== ' ') out.push(ch);
    pre = ch;
  }
  // Drop Latin letters when the text is mostly in another script.
  let latin = 0;
  let nonLatin = 0;
  for (const ch of out) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0x41 && cp <= 0x7a) latin++;
    else if (cp >= 0x300 && !inRange(cp, 0x1e00, 0x1eff)) nonLatin++;
  }
  if (latin * 2 < nonLatin) {
    return out.filter((ch) => {
      const cp = ch.codePointAt(0)!;
      return cp < 0x41 || cp > 0x7a;
    });
  }
  return out;
}

function isUpperChar(ch: string): boolean {
  const c = ch.charCodeAt(0);
  if (c < 0x80) return c >= 0x41 && c <= 0x5a;
  return pyIsUpper(ch);
}

export function extractNgrams(chars: string[], p: Profiles): string[] {
  const result: string[] = [];
  // The last (up to) three characters, oldest first; g.length is the gram length.
  let g: string[] = [' '];
  let capitalword = false;
  const map = p.wordLangProb;
  for (const raw of chars) {
    const ch = normalizeChar(raw, p.cjkMap);
    const last = g[g.length - 1]!;
    let skipAdd = false;
    if (last === ' ') {
      g = [' '];
      capitalword = false;
      if (ch === ' ') skipAdd = true;
    } else if (g.length >= 3) {
      g = [g[1]!, g[2]!];
    }
    if (!skipAdd) {
      g.push(ch);
      if (isUpperChar(ch)) {
        if (isUpperChar(last)) capitalword = true;
      } else {
        capitalword = false;
      }
    }
    if (capitalword) continue;
    const n = g.length;
    const w1 = g[n - 1]!;
    if (w1 !== ' ' && map.has(w1)) result.push(w1);
    if (n >= 2) {
      const w2 = g[n - 2]! + w1;
      if (map.has(w2)) result.push(w2);
      if (n >= 3) {
        const w3 = g[n - 3]! + w2;
        if (map.has(w3)) result.push(w3);
      }
    }
  }
  return result;
}

// ------------------------------------------------------------------ detection

const N_TRIAL = 7;
const ALPHA_DEFAULT = 0.5;
const ALPHA_WIDTH = 0.05;
const ITERATION_LIMIT = 1000;
const PROB_THRESHOLD = 0.1;
const CONV_THRESHOLD = 0.99999;
const BASE_FREQ = 10000;

export interface LangProb {
  lang: string;
  prob: number;
}

export function detectLangs(text: string, seed = 0, profilesDir?: string | null): LangProb[] {
  const p = loadProfiles(profilesDir);
  const ngrams = extractNgrams(prepareText(text), p);
  if (ngrams.length === 0) throw new LangDetectException('No features in text.');
  const nLang = p.langs.length;
  const langprob = new Float64Array(nLang);
  const rnd = new PyRandom();
  rnd.seed(seed);
  for (let t = 0; t < N_TRIAL; t++) {
    const prob = new Float64Array(nLang).fill(1.0 / nLang);
    const alpha = ALPHA_DEFAULT + rnd.gauss(0.0, 1.0) * ALPHA_WIDTH;
    const weight = alpha / BASE_FREQ;
    for (let i = 0; ; i++) {
      const word = ngrams[rnd.randbelow(ngrams.length)]!;
      const lp = p.wordLangProb.get(word)!;
      for (let k = 0; k < nLang; k++) prob[k]! *= weight + lp[k]!;
      if (i % 5 === 0) {
        let sum = 0;
        for (let k = 0; k < nLang; k++) sum += prob[k]!;
        let maxp = 0;
        for (let k = 0; k < nLang; k++) {
          const v = prob[k]! / sum;
          if (maxp < v) maxp = v;
          prob[k] = v;
        }
        if (maxp > CONV_THRESHOLD || i >= ITERATION_LIMIT) break;
      }
    }
    for (let k = 0; k < nLang; k++) langprob[k]! += prob[k]! / N_TRIAL;
  }
  const out: LangProb[] = [];
  for (let k = 0; k < nLang; k++) if (langprob[k]! > PROB_THRESHOLD) out.push({ lang: p.langs[k]!, prob: langprob[k]! });
  out.sort((a, b) => b.prob - a.prob);
  return out;
}

let lastDetect: { text: string; dir: string | null; result: string | LangDetectException } | null = null;

/**
 * `langdetect.detect(text)`; throws LangDetectException when the text has no usable features.
 * The last answer is kept: several checks of one response ask about the same text.
 */
export function detect(text: string, profilesDir?: string | null): string {
  const dir = profilesDir ?? null;
  if (!lastDetect || lastDetect.text !== text || lastDetect.dir !== dir) {
    let result: string | LangDetectException;
    try {
      const langs = detectLangs(text, 0, dir);
      result = langs.length > 0 ? langs[0]!.lang : 'unknown';
    } catch (e) {
      if (!(e instanceof LangDetectException)) throw e;
      result = e;
    }
    lastDetect = { text, dir, result };
  }
  if (lastDetect.result instanceof LangDetectException) throw lastDetect.result;
  return lastDetect.result;
}
