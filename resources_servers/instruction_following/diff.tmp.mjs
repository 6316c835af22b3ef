// ../../tmp/ifs/diff.ts
import { readFileSync as readFileSync3 } from "node:fs";

// resources_servers/instruction_following/src/langdetect.ts
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

// resources_servers/instruction_following/src/py.ts
var PyError = class extends Error {
  constructor(pyType, message) {
    super(`${pyType}: ${message}`);
    this.pyType = pyType;
    this.name = "PyError";
  }
};
var PY_WS_CLASS = "\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
var WS_RUN = new RegExp(`[${PY_WS_CLASS}]+`, "u");
var WS_RUN_G = new RegExp(`[${PY_WS_CLASS}]+`, "gu");
var LEADING_WS = new RegExp(`^[${PY_WS_CLASS}]+`, "u");
var TRAILING_WS = new RegExp(`[${PY_WS_CLASS}]+$`, "u");
function pySplit(s) {
  if (!WS_RUN.test(s)) return s.length ? [s] : [];
  return s.split(WS_RUN_G).filter((p) => p.length > 0);
}
function pyStrip(s, chars) {
  return pyRstrip(pyLstrip(s, chars), chars);
}
function pyLstrip(s, chars) {
  if (chars === void 0) return s.replace(LEADING_WS, "");
  const set = new Set(Array.from(chars));
  const cps = Array.from(s);
  let i = 0;
  while (i < cps.length && set.has(cps[i])) i++;
  return cps.slice(i).join("");
}
function pyRstrip(s, chars) {
  if (chars === void 0) return s.replace(TRAILING_WS, "");
  const set = new Set(Array.from(chars));
  const cps = Array.from(s);
  let j = cps.length;
  while (j > 0 && set.has(cps[j - 1])) j--;
  return cps.slice(0, j).join("");
}
function pyLower(s) {
  return s.toLowerCase();
}
var CASED_UPPER = /[\p{Uppercase}]/u;
var CASED_LOWER = /[\p{Lowercase}]/u;
var TITLE = /\p{Lt}/u;
function pyIsUpper(s) {
  let cased = false;
  for (const ch of s) {
    if (CASED_LOWER.test(ch) || TITLE.test(ch)) return false;
    if (!cased && CASED_UPPER.test(ch)) cased = true;
  }
  return cased;
}
function pyIsLower(s) {
  let cased = false;
  for (const ch of s) {
    if (CASED_UPPER.test(ch) || TITLE.test(ch)) return false;
    if (!cased && CASED_LOWER.test(ch)) cased = true;
  }
  return cased;
}
function pyLen(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 55296 && c <= 56319 && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 56320 && d <= 57343) i++;
    }
    n++;
  }
  return n;
}
function pyTruthy(v) {
  if (v === null || v === void 0 || v === false) return false;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "string") return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "object") return Object.keys(v).length > 0;
  return true;
}
function pyTypeName(v) {
  if (v === null || v === void 0) return "NoneType";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  if (typeof v === "string") return "str";
  if (Array.isArray(v)) return "list";
  return "dict";
}
function pyNum(v, what = "value") {
  if (typeof v === "number") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  throw new PyError("TypeError", `'<' not supported between '${pyTypeName(v)}' (${what}) and 'int'`);
}
function pyLt(a, b) {
  return pyNum(a) < pyNum(b);
}
function pyEq(a, b) {
  const numLike = (x) => typeof x === "number" || typeof x === "boolean";
  if (numLike(a) && numLike(b)) return pyNum(a) === pyNum(b);
  if (typeof a === "string" || typeof b === "string") return a === b;
  if (a === null || a === void 0 || b === null || b === void 0) return (a ?? null) === (b ?? null);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => pyEq(x, b[i]));
  }
  if (typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => k in b && pyEq(a[k], b[k]));
  }
  return false;
}
function pyIndexValue(v) {
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number" && Number.isInteger(v)) return v;
  throw new PyError("TypeError", `indices must be integers, not ${pyTypeName(v)}`);
}
function pyIndex(seq, i) {
  const j = i < 0 ? seq.length + i : i;
  if (j < 0 || j >= seq.length) throw new PyError("IndexError", "list index out of range");
  return seq[j];
}
function pySliceStr(s, start, end) {
  const cps = Array.from(s);
  const n = cps.length;
  const norm = (x) => x < 0 ? Math.max(0, n + x) : Math.min(n, x);
  const a = norm(start);
  const b = norm(end);
  return a < b ? cps.slice(a, b).join("") : "";
}
function pyStr(v, what) {
  if (typeof v === "string") return v;
  throw new PyError("AttributeError", `'${pyTypeName(v)}' object (${what}) has no attribute 'strip'`);
}
function pyStrCompare(a, b) {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (; ; ) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0);
    const cy = y.value.codePointAt(0);
    if (cx !== cy) return cx - cy;
  }
}
function pyJsonLoads(text) {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      depth++;
      if (depth > 990) return false;
    } else if (c === 93 || c === 125) depth--;
  }
  try {
    JSON.parse(text);
    return true;
  } catch {
    if (!/NaN|Infinity/.test(text)) return false;
    try {
      JSON.parse(replaceNonFiniteOutsideStrings(text));
      return true;
    } catch {
      return false;
    }
  }
}
function replaceNonFiniteOutsideStrings(text) {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (text.startsWith("-Infinity", i)) {
      out += "0";
      i += 9;
    } else if (text.startsWith("Infinity", i)) {
      out += "0";
      i += 8;
    } else if (text.startsWith("NaN", i)) {
      out += "0";
      i += 3;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

// resources_servers/instruction_following/src/langdetect.ts
var LangDetectException = class extends Error {
  constructor(message) {
    super(message);
    this.name = "LangDetectException";
  }
};
var PyRandom = class {
  mt = new Uint32Array(624);
  mti = 625;
  gaussNext = null;
  seed(n) {
    this.initByArray([n >>> 0]);
    this.gaussNext = null;
  }
  initGenrand(s) {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < 624; i++) {
      const prev = mt[i - 1] ^ mt[i - 1] >>> 30;
      mt[i] = Math.imul(1812433253, prev) + i >>> 0;
    }
    this.mti = 624;
  }
  initByArray(key) {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(624, key.length); k > 0; k--) {
      const prev = mt[i - 1] ^ mt[i - 1] >>> 30;
      mt[i] = (mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j >>> 0;
      i++;
      j++;
      if (i >= 624) {
        mt[0] = mt[623];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = 623; k > 0; k--) {
      const prev = mt[i - 1] ^ mt[i - 1] >>> 30;
      mt[i] = (mt[i] ^ Math.imul(prev, 1566083941)) - i >>> 0;
      i++;
      if (i >= 624) {
        mt[0] = mt[623];
        i = 1;
      }
    }
    mt[0] = 2147483648;
  }
  genrand() {
    const mt = this.mt;
    if (this.mti >= 624) {
      let kk = 0;
      const mag = (y3) => y3 & 1 ? 2567483615 : 0;
      for (; kk < 624 - 397; kk++) {
        const y3 = mt[kk] & 2147483648 | mt[kk + 1] & 2147483647;
        mt[kk] = (mt[kk + 397] ^ y3 >>> 1 ^ mag(y3)) >>> 0;
      }
      for (; kk < 623; kk++) {
        const y3 = mt[kk] & 2147483648 | mt[kk + 1] & 2147483647;
        mt[kk] = (mt[kk + (397 - 624)] ^ y3 >>> 1 ^ mag(y3)) >>> 0;
      }
      const y2 = mt[623] & 2147483648 | mt[0] & 2147483647;
      mt[623] = (mt[396] ^ y2 >>> 1 ^ mag(y2)) >>> 0;
      this.mti = 0;
    }
    let y = mt[this.mti++];
    y ^= y >>> 11;
    y = (y ^ y << 7 & 2636928640) >>> 0;
    y = (y ^ y << 15 & 4022730752) >>> 0;
    y ^= y >>> 18;
    return y >>> 0;
  }
  random() {
    const a = this.genrand() >>> 5;
    const b = this.genrand() >>> 6;
    return (a * 67108864 + b) * (1 / 9007199254740992);
  }
  getrandbits(k) {
    return k === 0 ? 0 : this.genrand() >>> 32 - k;
  }
  randbelow(n) {
    const k = 32 - Math.clz32(n);
    let r2 = this.getrandbits(k);
    while (r2 >= n) r2 = this.getrandbits(k);
    return r2;
  }
  gauss(mu, sigma) {
    let z = this.gaussNext;
    this.gaussNext = null;
    if (z === null) {
      const x2pi = this.random() * 2 * Math.PI;
      const g2rad = Math.sqrt(-2 * Math.log(1 - this.random()));
      z = Math.cos(x2pi) * g2rad;
      this.gaussNext = Math.sin(x2pi) * g2rad;
    }
    return mu + z * sigma;
  }
};
var profileCache = /* @__PURE__ */ new Map();
function cpLength(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}
function npmPackageRoot() {
  const require2 = createRequire(import.meta.url);
  return dirname(require2.resolve("langdetect/package.json"));
}
function loadProfiles(dir) {
  const key = dir ?? "";
  const hit = profileCache.get(key);
  if (hit) return hit;
  const root = npmPackageRoot();
  const profileDir = dir ?? join(root, "profiles");
  const files = readdirSync(profileDir).filter((f) => !f.startsWith(".") && (dir ? true : f.endsWith(".json"))).sort();
  if (files.length < 2) throw new LangDetectException(`need at least 2 language profiles in ${profileDir}`);
  const langs = files.map((f) => f.replace(/\.json$/, ""));
  const wordLangProb = /* @__PURE__ */ new Map();
  files.forEach((f, index) => {
    const prof = JSON.parse(readFileSync(join(profileDir, f), "utf8"));
    for (const [word, count] of Object.entries(prof.freq)) {
      let arr = wordLangProb.get(word);
      if (!arr) {
        arr = new Float64Array(files.length);
        wordLangProb.set(word, arr);
      }
      const len = cpLength(word);
      if (len >= 1 && len <= 3) arr[index] = count / prof.n_words[len - 1];
    }
  });
  const cjk = JSON.parse(readFileSync(join(root, "res", "cjk.json"), "utf8"));
  const cjkMap = /* @__PURE__ */ new Map();
  for (const cls of Object.values(cjk)) {
    const chars = Array.from(cls);
    const rep = chars[0];
    for (const ch of chars) cjkMap.set(ch, rep);
  }
  const profiles = { langs, wordLangProb, cjkMap };
  profileCache.set(key, profiles);
  return profiles;
}
var URL_RE = /https?:\/\/[-_.?&~;+=/#0-9A-Za-z]{1,2076}/g;
var MAIL_RE = /[-_.0-9A-Za-z]{1,64}@[-_0-9A-Za-z]{1,255}[-_.0-9A-Za-z]{1,255}/g;
var VI_RE = /([AEIOUYaeiouy\u00c2\u00ca\u00d4\u00e2\u00ea\u00f4\u0102\u0103\u01a0\u01a1\u01af\u01b0])([\u0300\u0301\u0303\u0309\u0323])/g;
var LATIN1_EXCLUDED = /* @__PURE__ */ new Set(["\xA0", "\xAB", "\xB0", "\xBB"]);
var MAX_TEXT_LENGTH = 1e4;
function inRange(cp, lo, hi) {
  return cp >= lo && cp <= hi;
}
function normalizeChar(ch, cjkMap) {
  const cp = ch.codePointAt(0);
  if (cp <= 127) {
    return ch < "A" || ch > "Z" && ch < "a" || ch > "z" ? " " : ch;
  }
  if (cp <= 255) return LATIN1_EXCLUDED.has(ch) ? " " : ch;
  if (inRange(cp, 384, 591)) {
    if (cp === 537) return "\u015F";
    if (cp === 539) return "\u0163";
    return ch;
  }
  if (inRange(cp, 8192, 8303)) return " ";
  if (inRange(cp, 1536, 1791)) return cp === 1740 ? "\u064A" : ch;
  if (inRange(cp, 7680, 7935)) return cp >= 7840 ? "\u1EC3" : ch;
  if (inRange(cp, 12352, 12447)) return "\u3042";
  if (inRange(cp, 12448, 12543)) return "\u30A2";
  if (inRange(cp, 12544, 12591) || inRange(cp, 12704, 12735)) return "\u3105";
  if (inRange(cp, 19968, 40959)) return cjkMap.get(ch) ?? ch;
  if (inRange(cp, 44032, 55215)) return "\uAC00";
  return ch;
}
function prepareText(input) {
  let text = input.replace(URL_RE, " ").replace(MAIL_RE, " ");
  text = text.replace(VI_RE, (m) => m.normalize("NFC"));
  const out = [];
  let pre = "";
  let i = 0;
  for (const ch of text) {
    if (i++ >= MAX_TEXT_LENGTH) break;
    if (ch !== " " || pre !== " ") out.push(ch);
    pre = ch;
  }
  let latin = 0;
  let nonLatin = 0;
  for (const ch of out) {
    const cp = ch.codePointAt(0);
    if (cp >= 65 && cp <= 122) latin++;
    else if (cp >= 768 && !inRange(cp, 7680, 7935)) nonLatin++;
  }
  if (latin * 2 < nonLatin) {
    return out.filter((ch) => {
      const cp = ch.codePointAt(0);
      return cp < 65 || cp > 122;
    });
  }
  return out;
}
function isUpperChar(ch) {
  const c = ch.charCodeAt(0);
  if (c < 128) return c >= 65 && c <= 90;
  return pyIsUpper(ch);
}
function extractNgrams(chars, p) {
  const result = [];
  let g = [" "];
  let capitalword = false;
  const map = p.wordLangProb;
  for (const raw of chars) {
    const ch = normalizeChar(raw, p.cjkMap);
    const last = g[g.length - 1];
    let skipAdd = false;
    if (last === " ") {
      g = [" "];
      capitalword = false;
      if (ch === " ") skipAdd = true;
    } else if (g.length >= 3) {
      g = [g[1], g[2]];
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
    const w1 = g[n - 1];
    if (w1 !== " " && map.has(w1)) result.push(w1);
    if (n >= 2) {
      const w2 = g[n - 2] + w1;
      if (map.has(w2)) result.push(w2);
      if (n >= 3) {
        const w3 = g[n - 3] + w2;
        if (map.has(w3)) result.push(w3);
      }
    }
  }
  return result;
}
var N_TRIAL = 7;
var ALPHA_DEFAULT = 0.5;
var ALPHA_WIDTH = 0.05;
var ITERATION_LIMIT = 1e3;
var PROB_THRESHOLD = 0.1;
var CONV_THRESHOLD = 0.99999;
var BASE_FREQ = 1e4;
function detectLangs(text, seed = 0, profilesDir) {
  const p = loadProfiles(profilesDir);
  const ngrams = extractNgrams(prepareText(text), p);
  if (ngrams.length === 0) throw new LangDetectException("No features in text.");
  const nLang = p.langs.length;
  const langprob = new Float64Array(nLang);
  const rnd = new PyRandom();
  rnd.seed(seed);
  for (let t = 0; t < N_TRIAL; t++) {
    const prob = new Float64Array(nLang).fill(1 / nLang);
    const alpha = ALPHA_DEFAULT + rnd.gauss(0, 1) * ALPHA_WIDTH;
    const weight = alpha / BASE_FREQ;
    for (let i = 0; ; i++) {
      const word = ngrams[rnd.randbelow(ngrams.length)];
      const lp = p.wordLangProb.get(word);
      for (let k = 0; k < nLang; k++) prob[k] *= weight + lp[k];
      if (i % 5 === 0) {
        let sum = 0;
        for (let k = 0; k < nLang; k++) sum += prob[k];
        let maxp = 0;
        for (let k = 0; k < nLang; k++) {
          const v = prob[k] / sum;
          if (maxp < v) maxp = v;
          prob[k] = v;
        }
        if (maxp > CONV_THRESHOLD || i >= ITERATION_LIMIT) break;
      }
    }
    for (let k = 0; k < nLang; k++) langprob[k] += prob[k] / N_TRIAL;
  }
  const out = [];
  for (let k = 0; k < nLang; k++) if (langprob[k] > PROB_THRESHOLD) out.push({ lang: p.langs[k], prob: langprob[k] });
  out.sort((a, b) => b.prob - a.prob);
  return out;
}
function detect(text, profilesDir) {
  const langs = detectLangs(text, 0, profilesDir);
  return langs.length > 0 ? langs[0].lang : "unknown";
}

// resources_servers/instruction_following/src/pyre.ts
var W_ITEMS = "\\p{L}\\p{N}_";
var W_ITEMS_ASCII = "A-Za-z0-9_";
var cache = /* @__PURE__ */ new Map();
var CACHE_MAX = 2e3;
function translatePy(pattern, flags = {}) {
  const key = `${flags.ignoreCase ? "i" : ""}${flags.multiline ? "m" : ""}${flags.dotAll ? "s" : ""}${flags.verbose ? "x" : ""}\0${pattern}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const compiled = new Translator(pattern, flags).run();
  try {
    new RegExp(compiled.source, compiled.flags);
  } catch (e) {
    throw new PyError("re.error", e.message);
  }
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(key, compiled);
  return compiled;
}
function pyRegExp(pattern, flags = {}, global = false) {
  const c = translatePy(pattern, flags);
  return new RegExp(c.source, c.flags + (global ? "g" : ""));
}
function pySearch(pattern, s, flags = {}) {
  return pyRegExp(pattern, flags).test(s);
}
function pyFindall(pattern, s, flags = {}) {
  const c = translatePy(pattern, flags);
  const re = new RegExp(c.source, c.flags + "g");
  const out = [];
  for (const m of s.matchAll(re)) {
    if (c.groups === 0) out.push(m[0]);
    else if (c.groups === 1) out.push(m[1] ?? "");
    else out.push(m.slice(1, c.groups + 1).map((g) => g ?? ""));
  }
  return out;
}
function pyCount(pattern, s, flags = {}) {
  const c = translatePy(pattern, flags);
  const re = new RegExp(c.source, c.flags + "g");
  let n = 0;
  for (const _ of s.matchAll(re)) n++;
  return n;
}
function pySplitCount(pattern, s, flags = {}) {
  const c = translatePy(pattern, flags);
  const n = pyCount(pattern, s, flags);
  return 1 + n * (1 + c.groups);
}
var Translator = class {
  constructor(p, flags) {
    this.p = p;
    this.ignoreCase = !!flags.ignoreCase;
    this.multiline = !!flags.multiline;
    this.dotAll = !!flags.dotAll;
    this.verbose = !!flags.verbose;
  }
  i = 0;
  out = "";
  groups = 0;
  ignoreCase;
  multiline;
  dotAll;
  verbose;
  ascii = false;
  fail(msg) {
    throw new PyError("re.error", `${msg} at position ${this.i}`);
  }
  get w() {
    return this.ascii ? W_ITEMS_ASCII : W_ITEMS;
  }
  run() {
    this.readGlobalFlags();
    const p = this.p;
    while (this.i < p.length) {
      const c = p[this.i];
      if (this.verbose && /\s/.test(c)) {
        this.i++;
        continue;
      }
      if (this.verbose && c === "#") {
        while (this.i < p.length && p[this.i] !== "\n") this.i++;
        continue;
      }
      switch (c) {
        case "\\":
          this.out += this.escapeOutside();
          break;
        case "[":
          this.out += this.charClass();
          break;
        case "(":
          this.group();
          break;
        case ".":
          this.out += this.dotAll ? "[\\s\\S]" : "[^\\n]";
          this.i++;
          break;
        case "^":
          this.out += this.multiline ? "(?<![^\\n])" : "(?<![\\s\\S])";
          this.i++;
          break;
        case "$":
          this.out += this.multiline ? "(?=\\n|(?![\\s\\S]))" : "(?=\\n?(?![\\s\\S]))";
          this.i++;
          break;
        case "{":
          this.brace();
          break;
        case "}":
          this.out += "\\}";
          this.i++;
          break;
        case "]":
          this.out += "\\]";
          this.i++;
          break;
        case "*":
        case "+":
        case "?":
          this.out += c;
          this.i++;
          this.afterQuantifier();
          break;
        default: {
          const cp = p.codePointAt(this.i);
          const ch = String.fromCodePoint(cp);
          this.out += ch === "/" ? "\\/" : ch;
          this.i += ch.length;
        }
      }
    }
    let flags = "u";
    if (this.ignoreCase) flags += "i";
    return { source: this.out, flags, groups: this.groups };
  }
  readGlobalFlags() {
    const re = /^\(\?([aiLmsux]+)\)/;
    for (; ; ) {
      const m = re.exec(this.p.slice(this.i));
      if (!m) return;
      for (const f of m[1]) {
        if (f === "i") this.ignoreCase = true;
        else if (f === "m") this.multiline = true;
        else if (f === "s") this.dotAll = true;
        else if (f === "x") this.verbose = true;
        else if (f === "a") this.ascii = true;
        else if (f === "L") this.fail("bad inline flags: cannot use 'L' flag with a str pattern");
      }
      this.i += m[0].length;
    }
  }
  afterQuantifier() {
    const n = this.p[this.i];
    if (n === "?") {
      this.out += "?";
      this.i++;
    } else if (n === "+") {
      this.fail("possessive quantifiers are not supported");
    }
  }
  brace() {
    const m = /^\{(\d*)(,?)(\d*)\}/.exec(this.p.slice(this.i));
    if (m && (m[1] !== "" || m[2] === "," && m[3] !== "")) {
      const lo = m[1] === "" ? "0" : m[1];
      this.out += m[2] ? `{${lo},${m[3]}}` : `{${lo}}`;
      this.i += m[0].length;
      this.afterQuantifier();
      return;
    }
    this.out += "\\{";
    this.i++;
  }
  group() {
    const rest = this.p.slice(this.i);
    if (rest.startsWith("(?P<")) {
      const m = /^\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
      if (!m) this.fail("bad character in group name");
      this.groups++;
      this.out += `(?<${m[1]}>`;
      this.i += m[0].length;
      return;
    }
    if (rest.startsWith("(?P=")) {
      const m = /^\(\?P=([A-Za-z_][A-Za-z0-9_]*)\)/.exec(rest);
      if (!m) this.fail("bad character in group name");
      this.out += `\\k<${m[1]}>`;
      this.i += m[0].length;
      return;
    }
    if (rest.startsWith("(?#")) {
      const end = this.p.indexOf(")", this.i);
      if (end < 0) this.fail("missing ), unterminated comment");
      this.i = end + 1;
      return;
    }
    for (const pre of ["(?:", "(?=", "(?!", "(?<=", "(?<!"]) {
      if (rest.startsWith(pre)) {
        this.out += pre;
        this.i += pre.length;
        return;
      }
    }
    if (rest.startsWith("(?")) {
      if (/^\(\?[aiLmsux]+\)/.test(rest)) this.fail("global flags not at the start of the expression");
      this.fail("unsupported group construct");
    }
    this.groups++;
    this.out += "(";
    this.i++;
  }
  /** Escape outside a character class. */
  escapeOutside() {
    const p = this.p;
    const c = p[this.i + 1];
    if (c === void 0) this.fail("bad escape (end of pattern)");
    const w = this.w;
    const simple = {
      d: this.ascii ? "[0-9]" : "\\p{Nd}",
      D: this.ascii ? "[^0-9]" : "\\P{Nd}",
      w: `[${w}]`,
      W: `[^${w}]`,
      s: this.ascii ? "[\\t-\\r ]" : `[${PY_WS_CLASS}]`,
      S: this.ascii ? "[^\\t-\\r ]" : `[^${PY_WS_CLASS}]`,
      b: `(?:(?<=[${w}])(?![${w}])|(?<![${w}])(?=[${w}]))`,
      B: `(?:(?<=[${w}])(?=[${w}])|(?<![${w}])(?![${w}]))`,
      A: "(?<![\\s\\S])",
      Z: "(?![\\s\\S])"
    };
    if (c in simple) {
      this.i += 2;
      return simple[c];
    }
    if (/[1-9]/.test(c)) {
      const m = /^\\([0-7]{3})/.exec(p.slice(this.i));
      if (m && parseInt(m[1], 8) <= 255) {
        this.i += 4;
        return literal(String.fromCodePoint(parseInt(m[1], 8)));
      }
      const r2 = /^\\(\d\d?)/.exec(p.slice(this.i));
      const n = parseInt(r2[1], 10);
      if (n > this.groups) this.fail("invalid group reference");
      this.i += r2[0].length;
      return `(?:\\${n})`;
    }
    const ch = this.commonEscape();
    return literal(ch);
  }
  /** Escapes with the same meaning in and out of classes; returns the literal character. */
  commonEscape() {
    const p = this.p;
    const c = p[this.i + 1];
    const map = { a: "\x07", f: "\f", n: "\n", r: "\r", t: "	", v: "\v" };
    if (c in map) {
      this.i += 2;
      return map[c];
    }
    if (c === "0") {
      const m = /^\\(0[0-7]{0,2})/.exec(p.slice(this.i));
      this.i += m[0].length;
      return String.fromCodePoint(parseInt(m[1], 8));
    }
    if (c === "x" || c === "u" || c === "U") {
      const len = c === "x" ? 2 : c === "u" ? 4 : 8;
      const hex = p.slice(this.i + 2, this.i + 2 + len);
      if (hex.length !== len || !/^[0-9a-fA-F]+$/.test(hex)) this.fail(`incomplete escape \\${c}`);
      const cp2 = parseInt(hex, 16);
      if (cp2 > 1114111) this.fail(`bad escape \\${c}`);
      this.i += 2 + len;
      return String.fromCodePoint(cp2);
    }
    if (c === "N") this.fail("named Unicode escapes are not supported");
    if (/[A-Za-z0-9]/.test(c)) this.fail(`bad escape \\${c}`);
    const cp = p.codePointAt(this.i + 1);
    const ch = String.fromCodePoint(cp);
    this.i += 1 + ch.length;
    return ch;
  }
  charClass() {
    const p = this.p;
    this.i++;
    let negate = false;
    if (p[this.i] === "^") {
      negate = true;
      this.i++;
    }
    const parts = { items: "", negated: [] };
    let first = true;
    let prev = null;
    const w = this.w;
    for (; ; ) {
      if (this.i >= p.length) this.fail("unterminated character set");
      const c = p[this.i];
      if (c === "]" && !first) {
        this.i++;
        break;
      }
      first = false;
      if (c === "-" && prev && prev.kind === "char" && this.i + 1 < p.length && p[this.i + 1] !== "]") {
        this.i++;
        const before = parts.items.length;
        const hi = this.classAtom(parts, w);
        if (hi.kind !== "char") this.fail("bad character range");
        const lo = prev.ch;
        if (lo.codePointAt(0) > hi.ch.codePointAt(0)) this.fail("bad character range");
        parts.items = `${parts.items.slice(0, before)}-${classLiteral(hi.ch)}`;
        prev = null;
        continue;
      }
      prev = this.classAtom(parts, w);
    }
    if (parts.negated.length === 0) {
      if (parts.items === "") return negate ? "[\\s\\S]" : "[]";
      return `[${negate ? "^" : ""}${parts.items}]`;
    }
    if (!negate) {
      const alts = parts.negated.slice();
      if (parts.items) alts.unshift(`[${parts.items}]`);
      return `(?:${alts.join("|")})`;
    }
    const looks = parts.negated.map((n) => `(?!${n})`).join("");
    return `(?:${parts.items ? `(?![${parts.items}])` : ""}${looks}[\\s\\S])`;
  }
  classAtom(parts, w) {
    const p = this.p;
    const c = p[this.i];
    if (c === "\\") {
      const e = p[this.i + 1];
      if (e === void 0) this.fail("bad escape (end of pattern)");
      const ws = this.ascii ? "\\t-\\r " : PY_WS_CLASS;
      const sets = {
        d: () => parts.items += this.ascii ? "0-9" : "\\p{Nd}",
        w: () => parts.items += w,
        s: () => parts.items += ws,
        D: () => parts.negated.push(this.ascii ? "[^0-9]" : "\\P{Nd}"),
        W: () => parts.negated.push(`[^${w}]`),
        S: () => parts.negated.push(`[^${ws}]`)
      };
      if (e in sets) {
        sets[e]();
        this.i += 2;
        return { kind: "set" };
      }
      if (e === "b") {
        this.i += 2;
        parts.items += "\\x08";
        return { kind: "char", ch: "\b" };
      }
      if (/[1-9]/.test(e)) {
        const m = /^\\([0-7]{1,3})/.exec(p.slice(this.i));
        if (!m) this.fail(`bad escape \\${e}`);
        this.i += m[0].length;
        const ch3 = String.fromCodePoint(parseInt(m[1], 8));
        parts.items += classLiteral(ch3);
        return { kind: "char", ch: ch3 };
      }
      const ch2 = this.commonEscape();
      parts.items += classLiteral(ch2);
      return { kind: "char", ch: ch2 };
    }
    const cp = p.codePointAt(this.i);
    const ch = String.fromCodePoint(cp);
    this.i += ch.length;
    parts.items += classLiteral(ch);
    return { kind: "char", ch };
  }
};
function hexEsc(ch) {
  return `\\u{${ch.codePointAt(0).toString(16)}}`;
}
function literal(ch) {
  if ("^$\\.*+?()[]{}|/".includes(ch)) return `\\${ch}`;
  const cp = ch.codePointAt(0);
  if (cp < 32 || cp === 127 || cp >= 55296 && cp <= 57343) return hexEsc(ch);
  return ch;
}
function classLiteral(ch) {
  if ("^$\\.*+?()[]{}|/-".includes(ch)) return `\\${ch}`;
  const cp = ch.codePointAt(0);
  if (cp < 32 || cp === 127 || cp >= 55296 && cp <= 57343) return hexEsc(ch);
  return ch;
}

// resources_servers/instruction_following/src/util.ts
var WS = `[${PY_WS_CLASS}]`;
var STARTERS = `(Mr|Mrs|Ms|Dr|Prof|Capt|Cpt|Lt|He${WS}|She${WS}|It${WS}|They${WS}|Their${WS}|Our${WS}|We${WS}|But${WS}|However${WS}|That${WS}|This${WS}|Wherever)`;
var ACRONYMS = "([A-Z][.][A-Z][.](?:[A-Z][.])?)";
var RE_PREFIXES = /(Mr|St|Mrs|Ms|Dr)[.]/g;
var RE_WEBSITES = /[.](com|net|org|io|gov|edu|me)/g;
var RE_DIGITS = /([0-9])[.]([0-9])/g;
var RE_MULTIPLE_DOTS = /\.{2,}/g;
var RE_SINGLE_LETTER = new RegExp(`${WS}([A-Za-z])[.] `, "gu");
var RE_ACRONYM_STARTER = new RegExp(`${ACRONYMS} ${STARTERS}`, "gu");
var RE_THREE_LETTERS = /([A-Za-z])[.]([A-Za-z])[.]([A-Za-z])[.]/g;
var RE_TWO_LETTERS = /([A-Za-z])[.]([A-Za-z])[.]/g;
var RE_SUFFIX_STARTER = new RegExp(` (Inc|Ltd|Jr|Sr|Co)[.] ${STARTERS}`, "gu");
var RE_SUFFIX = / (Inc|Ltd|Jr|Sr|Co)[.]/g;
var RE_SPACE_LETTER = / ([A-Za-z])[.]/g;
function splitIntoSentences(input) {
  let text = ` ${input}  `;
  text = text.replaceAll("\n", " ");
  text = text.replace(RE_PREFIXES, "$1<prd>");
  text = text.replace(RE_WEBSITES, "<prd>$1");
  text = text.replace(RE_DIGITS, "$1<prd>$2");
  text = text.replace(RE_MULTIPLE_DOTS, (m) => "<prd>".repeat(m.length) + "<stop>");
  if (text.includes("Ph.D")) text = text.replaceAll("Ph.D.", "Ph<prd>D<prd>");
  text = text.replace(RE_SINGLE_LETTER, " $1<prd> ");
  text = text.replace(RE_ACRONYM_STARTER, "$1<stop> $2");
  text = text.replace(RE_THREE_LETTERS, "$1<prd>$2<prd>$3<prd>");
  text = text.replace(RE_TWO_LETTERS, "$1<prd>$2<prd>");
  text = text.replace(RE_SUFFIX_STARTER, " $1<stop> $2");
  text = text.replace(RE_SUFFIX, " $1<prd>");
  text = text.replace(RE_SPACE_LETTER, " $1<prd>");
  if (text.includes("\u201D")) text = text.replaceAll(".\u201D", "\u201D.");
  if (text.includes('"')) text = text.replaceAll('."', '".');
  if (text.includes("!")) text = text.replaceAll('!"', '"!');
  if (text.includes("?")) text = text.replaceAll('?"', '"?');
  text = text.replaceAll(".", ".<stop>");
  text = text.replaceAll("?", "?<stop>");
  text = text.replaceAll("!", "!<stop>");
  text = text.replaceAll("<prd>", ".");
  let sentences = text.split("<stop>").map((s) => pyStrip(s));
  if (sentences.length > 0 && sentences[sentences.length - 1] === "") sentences = sentences.slice(0, -1);
  return sentences;
}
var WORD_RE = /[\p{L}\p{N}_]+/gu;
function countWords(text) {
  let n = 0;
  for (const _ of text.matchAll(WORD_RE)) n++;
  return n;
}
var WORD_LIST = [
  "apple",
  "river",
  "garden",
  "window",
  "market",
  "season",
  "letter",
  "forest",
  "bridge",
  "silver",
  "island",
  "engine",
  "danger",
  "travel",
  "number",
  "friend",
  "planet",
  "rocket",
  "winter",
  "summer",
  "mountain",
  "village",
  "kitchen",
  "picture",
  "science",
  "history",
  "journey",
  "weather",
  "library",
  "ocean"
];
var PHRASES = [
  "Actions speak louder than words",
  "Every cloud has a silver lining",
  "The early bird catches the worm",
  "All that glitters is not gold",
  "Time flies when having fun",
  "Laughter is the best medicine"
];
var Rng = class {
  state;
  constructor(seedText) {
    let h = 2166136261;
    for (let i = 0; i < seedText.length; i++) {
      h ^= seedText.charCodeAt(i);
      h = Math.imul(h, 16777619);
    }
    this.state = h >>> 0;
  }
  next() {
    this.state = this.state + 1831565813 >>> 0;
    let t = this.state;
    t = Math.imul(t ^ t >>> 15, t | 1);
    t ^= t + Math.imul(t ^ t >>> 7, t | 61);
    return ((t ^ t >>> 14) >>> 0) / 4294967296;
  }
  /** random.randint(a, b), both ends included; ValueError when the range is empty. */
  randint(a, b) {
    if (!Number.isFinite(a) || !Number.isFinite(b) || b < a) {
      throw new PyError("ValueError", `empty range for randrange(${a}, ${b + 1})`);
    }
    return a + Math.floor(this.next() * (Math.floor(b) - Math.ceil(a) + 1));
  }
  choice(items) {
    if (items.length === 0) throw new PyError("IndexError", "Cannot choose from an empty sequence");
    return items[Math.floor(this.next() * items.length)];
  }
  /** instructions_util.generate_keywords(n) */
  keywords(n) {
    const pool = WORD_LIST.slice();
    const out = [];
    for (let i = 0; i < n; i++) out.push(pool.splice(Math.floor(this.next() * pool.length), 1)[0]);
    return out;
  }
};

// resources_servers/instruction_following/src/word_tokenize.ts
var W = "[\\p{L}\\p{N}_]";
var B = `(?:(?<=${W})(?!${W})|(?<!${W})(?=${W}))`;
var WS2 = `[${PY_WS_CLASS}]`;
var END_PY = "(?=\\n?(?![\\s\\S]))";
var r = (src, flags = "") => new RegExp(src, `gu${flags}`);
var has = (...subs) => (t) => subs.some((s) => t.includes(s));
var STARTING_QUOTES = [
  [r("([\xAB\u201C\u2018\u201E]|[`]+)"), " $1 ", has("\xAB", "\u201C", "\u2018", "\u201E", "`")],
  [r('^"'), "``", (t) => t.startsWith('"')],
  [r("(``)"), " $1 ", has("``")],
  [r(`([ ([{<])("|'{2})`), "$1 `` ", has('"', "''")],
  [r(`(')(?!re|ve|ll|m|t|s|d|n)(${W})${B}`, "i"), "$1 $2", has("'")]
];
var PUNCTUATION = [
  [r(`([^.])(\\.)([\\])}>"'\xBB\u201D\u2019 ]*)${WS2}*$`), "$1 $2 $3 ", has(".")],
  [r("([:,])([^\\p{Nd}])"), " $1 $2", has(":", ",")],
  [r(`([:,])${END_PY}`), " $1 ", has(":", ",")],
  [r("\\.{2,}"), " $& ", has("..")],
  [r("[;@#$%&]"), " $& ", has(";", "@", "#", "$", "%", "&")],
  [r(`([^.])(\\.)([\\])}>"']*)${WS2}*$`), "$1 $2$3 ", has(".")],
  [r("[?!]"), " $& ", has("?", "!")],
  [r("([^'])' "), "$1 ' ", has("' ")],
  [r("[*]"), " $& ", has("*")]
];
var PARENS_BRACKETS = [r("[\\][(){}<>]"), " $& ", has("[", "]", "(", ")", "{", "}", "<", ">")];
var DOUBLE_DASHES = [r("--"), " -- ", has("--")];
var ENDING_QUOTES = [
  [r("([\xBB\u201D\u2019])"), " $1 ", has("\xBB", "\u201D", "\u2019")],
  [r("''"), " '' ", has("''")],
  [r('"'), " '' ", has('"')],
  [r("([^' ])('[sS]|'[mM]|'[dD]|') "), "$1 $2 ", has("' ", "'s ", "'S ", "'m ", "'M ", "'d ", "'D ")],
  [r("([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), "$1 $2 ", has("'", "N")]
];
var CONTRACTIONS2 = [
  ["cannot", r(`${B}(can)(not)${B}`, "i")],
  ["d'ye", r(`${B}(d)('ye)${B}`, "i")],
  ["gimme", r(`${B}(gim)(me)${B}`, "i")],
  ["gonna", r(`${B}(gon)(na)${B}`, "i")],
  ["gotta", r(`${B}(got)(ta)${B}`, "i")],
  ["lemme", r(`${B}(lem)(me)${B}`, "i")],
  ["more'n", r(`${B}(more)('n)${B}`, "i")],
  ["wanna", r(`${B}(wan)(na)(?=${WS2})`, "i")]
];
var CONTRACTIONS3 = [
  ["'tis", r(` ('t)(is)${B}`, "i")],
  ["'twas", r(` ('t)(was)${B}`, "i")]
];
function apply(text, rule) {
  return rule[2](text) ? text.replace(rule[0], rule[1]) : text;
}
function treebankTokenize(text) {
  for (const rule of STARTING_QUOTES) text = apply(text, rule);
  for (const rule of PUNCTUATION) text = apply(text, rule);
  text = apply(text, PARENS_BRACKETS);
  text = apply(text, DOUBLE_DASHES);
  text = ` ${text} `;
  for (const rule of ENDING_QUOTES) text = apply(text, rule);
  const lower = text.toLowerCase();
  for (const [lit, re] of CONTRACTIONS2) if (lower.includes(lit)) text = text.replace(re, " $1 $2 ");
  for (const [lit, re] of CONTRACTIONS3) if (lower.includes(lit)) text = text.replace(re, " $1 $2 ");
  return pySplit(text);
}
var memo = null;
function wordTokenize(punkt, text) {
  if (memo && memo.punkt === punkt && memo.text === text) return memo.tokens;
  const out = [];
  for (const sent of punkt.tokenize(text)) for (const t of treebankTokenize(sent)) out.push(t);
  memo = { punkt, text, tokens: out };
  return out;
}

// resources_servers/instruction_following/src/instructions.ts
var LANGUAGE_CODES = {
  en: "English",
  es: "Spanish",
  pt: "Portuguese",
  ar: "Arabic",
  hi: "Hindi",
  fr: "French",
  ru: "Russian",
  de: "German",
  ja: "Japanese",
  it: "Italian",
  bn: "Bengali",
  uk: "Ukrainian",
  th: "Thai",
  ur: "Urdu",
  ta: "Tamil",
  te: "Telugu",
  bg: "Bulgarian",
  ko: "Korean",
  pl: "Polish",
  he: "Hebrew",
  fa: "Persian",
  vi: "Vietnamese",
  ne: "Nepali",
  sw: "Swahili",
  kn: "Kannada",
  mr: "Marathi",
  gu: "Gujarati",
  pa: "Punjabi",
  ml: "Malayalam",
  fi: "Finnish"
};
var RELATIONS = ["less than", "at least"];
var LESS_THAN = RELATIONS[0];
var AT_LEAST = RELATIONS[1];
var ENDING_OPTIONS = ["Any other questions?", "Is there anything else I can help with?"];
var POSTSCRIPT_MARKERS = ["P.S.", "P.P.S"];
var SECTION_SPLITTERS = ["Section", "SECTION"];
var CONSTRAINED_RESPONSES = ["My answer is yes.", "My answer is no.", "My answer is maybe."];
var ASCII_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".split("");
var I = { ignoreCase: true };
function relationArg(v, rng) {
  if (v === void 0) return rng.choice(RELATIONS);
  if (typeof v === "string" && RELATIONS.includes(v)) return v;
  throw new PyError("ValueError", `The supported relation for comparison must be in ${RELATIONS.join(", ")}`);
}
function countArg(v, rng, lo, hi) {
  if (v === void 0 || pyLt(v, 0)) return rng.randint(lo, hi);
  return v;
}
function truthyArg(v, rng, lo, hi) {
  return pyTruthy(v) ? v : rng.randint(lo, hi);
}
function keywordArg(v, rng, name) {
  return pyTruthy(v) ? pyStrip(pyStr(v, name)) : rng.keywords(1)[0];
}
function pyIterable(v) {
  if (typeof v === "string") return Array.from(v);
  if (Array.isArray(v)) return v;
  if (v !== null && typeof v === "object") return Object.keys(v);
  throw new PyError("TypeError", "object is not iterable");
}
function compare(count, relation, threshold) {
  if (relation === LESS_THAN) return pyLt(count, threshold);
  if (relation === AT_LEAST) return !pyLt(count, threshold);
  return null;
}
function countPieces(pieces) {
  let n = pieces.length;
  for (let i = 0; i < pieces.length; i++) {
    if (!pyStrip(pieces[i])) {
      if (i === 0 || i === pieces.length - 1) n--;
      else return null;
    }
  }
  return n;
}
var STARS_SPLIT = /[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]?\*\*\*[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]?/u;
var NON_WORD_NON_SPACE = /[^\p{L}\p{N}_\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/gu;
function firstCodePoint(s) {
  const cp = s.codePointAt(0);
  return cp === void 0 ? "" : String.fromCodePoint(cp);
}
var none = [];
var INSTRUCTIONS = {
  "keywords:existence": {
    kwargs: ["keywords"],
    build: (kw, rng) => {
      const words = pyTruthy(kw.keywords) ? pyIterable(kw.keywords) : rng.keywords(2);
      return (value) => {
        for (const k of words) {
          if (typeof k !== "string") throw new PyError("TypeError", "first argument must be string or compiled pattern");
          if (!pySearch(k, value, I)) return false;
        }
        return true;
      };
    }
  },
  "keywords:frequency": {
    kwargs: ["keyword", "frequency", "relation"],
    build: (kw, rng) => frequencyCheck(kw, rng)
  },
  "keywords:forbidden_words": {
    kwargs: ["forbidden_words"],
    build: (kw, rng) => {
      const words = pyTruthy(kw.forbidden_words) ? pyIterable(kw.forbidden_words) : rng.keywords(2);
      return (value) => {
        for (const w of words) {
          if (typeof w !== "string") throw new PyError("TypeError", "can only concatenate str to str");
          if (pySearch(`\\b${w}\\b`, value, I)) return false;
        }
        return true;
      };
    }
  },
  "keywords:letter_frequency": {
    kwargs: ["letter", "let_frequency", "let_relation"],
    build: (kw, rng) => letterFrequencyCheck(kw, rng)
  },
  "language:response_language": {
    kwargs: ["language"],
    build: (kw, rng) => {
      const lang = kw.language === void 0 ? rng.choice(Object.keys(LANGUAGE_CODES)) : kw.language;
      if (typeof lang !== "string" || !Object.hasOwn(LANGUAGE_CODES, lang)) {
        throw new PyError("KeyError", `language ${JSON.stringify(lang)} is not one of the supported codes`);
      }
      return (value, tools2) => {
        try {
          return detect(value, tools2.langdetectProfilesDir) === lang;
        } catch (e) {
          if (e instanceof LangDetectException) return true;
          throw e;
        }
      };
    }
  },
  "length_constraints:number_sentences": {
    kwargs: ["num_sentences", "relation"],
    build: (kw, rng) => {
      const n = countArg(kw.num_sentences, rng, 1, 20);
      const relation = relationArg(kw.relation, rng);
      return (value, tools2) => compare(tools2.punkt.countSentences(value), relation, n);
    }
  },
  "length_constraints:number_paragraphs": {
    kwargs: ["num_paragraphs"],
    build: (kw, rng) => {
      const n = countArg(kw.num_paragraphs, rng, 1, 5);
      return (value) => {
        const count = countPieces(value.split(STARS_SPLIT));
        return count === null ? false : pyEq(count, n);
      };
    }
  },
  "length_constraints:number_words": {
    kwargs: ["num_words", "relation"],
    build: (kw, rng) => {
      const n = countArg(kw.num_words, rng, 100, 500);
      const relation = relationArg(kw.relation, rng);
      return (value) => compare(countWords(value), relation, n);
    }
  },
  "length_constraints:nth_paragraph_first_word": {
    kwargs: ["num_paragraphs", "nth_paragraph", "first_word"],
    build: (kw, rng) => {
      const num = countArg(kw.num_paragraphs, rng, 1, 5);
      let nth = kw.nth_paragraph;
      if (nth === void 0 || !pyLt(0, nth) || pyLt(num, nth)) nth = rng.randint(1, pyNum(num) + 1);
      const firstWord = pyLower(kw.first_word === void 0 ? rng.keywords(1)[0] : pyStr(kw.first_word, "first_word"));
      const nthIndex = pyIndexValue(nth);
      return (value) => {
        const paragraphs = value.split("\n\n");
        let count = paragraphs.length;
        for (const p of paragraphs) if (!pyStrip(p)) count--;
        if (!(nthIndex <= count)) return false;
        const paragraph = pyStrip(pyIndex(paragraphs, nthIndex - 1));
        if (!paragraph) return false;
        let word = pyStrip(pySplit(paragraph)[0]);
        word = pyLstrip(pyLstrip(word, "'"), '"');
        let first = "";
        for (const ch of word) {
          if (`.,?!'"`.includes(ch)) break;
          first += pyLower(ch);
        }
        return pyEq(count, num) && first === firstWord;
      };
    }
  },
  "detectable_content:number_placeholders": {
    kwargs: ["num_placeholders"],
    build: (kw, rng) => {
      const n = countArg(kw.num_placeholders, rng, 1, 4);
      return (value) => !pyLt(pyCount("\\[.*?\\]", value), n);
    }
  },
  "detectable_content:postscript": {
    kwargs: ["postscript_marker"],
    build: (kw, rng) => {
      let marker = kw.postscript_marker;
      if (typeof marker === "string") marker = pyStrip(marker);
      if (marker === void 0) marker = rng.choice(POSTSCRIPT_MARKERS);
      return (value) => {
        const lower = pyLower(value);
        let pattern;
        if (marker === "P.P.S") pattern = "\\s*p\\.\\s?p\\.\\s?s.*$";
        else if (marker === "P.S.") pattern = "\\s*p\\.\\s?s\\..*$";
        else pattern = `\\s*${pyLower(pyStr(marker, "postscript_marker"))}.*$`;
        return pySearch(pattern, lower, { multiline: true });
      };
    }
  },
  "detectable_format:number_bullet_lists": {
    kwargs: ["num_bullets"],
    build: (kw, rng) => {
      const n = countArg(kw.num_bullets, rng, 1, 5);
      return (value) => {
        const stars = pyCount("^\\s*\\*[^\\*].*$", value, { multiline: true });
        const dashes = pyCount("^\\s*-.*$", value, { multiline: true });
        return pyEq(stars + dashes, n);
      };
    }
  },
  "detectable_format:constrained_response": {
    kwargs: none,
    build: () => (value) => {
      const v = pyStrip(value);
      return CONSTRAINED_RESPONSES.some((r2) => v.includes(r2));
    }
  },
  "detectable_format:number_highlighted_sections": {
    kwargs: ["num_highlights"],
    build: (kw, rng) => {
      const n = countArg(kw.num_highlights, rng, 1, 4);
      return (value) => {
        let count = 0;
        for (const h of pyFindall("\\*[^\\n\\*]*\\*", value)) if (pyStrip(pyStrip(h, "*"))) count++;
        for (const h of pyFindall("\\*\\*[^\\n\\*]*\\*\\*", value)) {
          const inner = h.slice(2, -2);
          if (pyStrip(inner)) count++;
        }
        return !pyLt(count, n);
      };
    }
  },
  "detectable_format:multiple_sections": {
    kwargs: ["section_spliter", "num_sections"],
    build: (kw, rng) => {
      let splitter = kw.section_spliter;
      if (typeof splitter === "string") splitter = pyStrip(splitter);
      if (splitter === void 0) splitter = rng.choice(SECTION_SPLITTERS);
      const n = countArg(kw.num_sections, rng, 1, 5);
      return (value) => {
        if (typeof splitter !== "string") throw new PyError("TypeError", "can only concatenate str to str");
        const parts = pySplitCount(`\\s?${splitter}\\s?\\d+\\s?`, value);
        return !pyLt(parts - 1, n);
      };
    }
  },
  "detectable_format:json_format": {
    kwargs: none,
    build: () => (value) => {
      let v = pyStrip(value);
      for (const prefix of ["```json", "```Json", "```JSON", "```"]) if (v.startsWith(prefix)) v = v.slice(prefix.length);
      if (v.endsWith("```")) v = v.slice(0, -3);
      return pyJsonLoads(pyStrip(v));
    }
  },
  "detectable_format:title": {
    kwargs: none,
    build: () => (value) => {
      for (const t of pyFindall("<<[^\\n]+>>", value)) {
        if (pyStrip(pyRstrip(pyLstrip(t, "<"), ">"))) return true;
      }
      return false;
    }
  },
  "combination:two_responses": {
    kwargs: none,
    build: () => (value) => {
      const parts = value.split("******");
      const valid = [];
      for (let i = 0; i < parts.length; i++) {
        if (!pyStrip(parts[i])) {
          if (i !== 0 && i !== parts.length - 1) return false;
        } else valid.push(parts[i]);
      }
      return valid.length === 2 && pyStrip(valid[0]) !== pyStrip(valid[1]);
    }
  },
  "combination:repeat_prompt": {
    kwargs: ["prompt_to_repeat"],
    build: (kw) => {
      const prompt = requirePrompt(kw);
      return (value) => pyLower(pyStrip(value)).startsWith(pyLower(pyStrip(pyStr(prompt, "prompt_to_repeat"))));
    }
  },
  "startend:end_checker": {
    kwargs: ["end_phrase"],
    build: (kw, rng) => {
      let phrase = kw.end_phrase;
      if (typeof phrase === "string") phrase = pyStrip(phrase);
      if (phrase === void 0) phrase = rng.choice(ENDING_OPTIONS);
      return (value) => {
        const v = pyLower(pyStrip(pyStrip(value), '"'));
        return v.endsWith(pyLower(pyStrip(pyStr(phrase, "end_phrase"))));
      };
    }
  },
  "change_case:capital_word_frequency": {
    kwargs: ["capital_frequency", "capital_relation"],
    build: (kw, rng) => {
      const n = kw.capital_frequency === void 0 ? rng.randint(1, 20) : kw.capital_frequency;
      const relation = relationArg(kw.capital_relation, rng);
      return (value, tools2) => {
        const count = wordTokenize(tools2.punkt, value).filter((w) => pyIsUpper(w)).length;
        return relation === LESS_THAN ? pyLt(count, n) : !pyLt(count, n);
      };
    }
  },
  "change_case:english_capital": {
    kwargs: none,
    build: () => (value, tools2) => englishCase(value, pyIsUpper, tools2)
  },
  "change_case:english_lowercase": {
    kwargs: none,
    build: () => (value, tools2) => englishCase(value, pyIsLower, tools2)
  },
  "punctuation:no_comma": {
    kwargs: none,
    build: () => (value) => !value.includes(",")
  },
  "startend:quotation": {
    kwargs: none,
    build: () => (value) => {
      const v = pyStrip(value);
      return pyLen(v) > 1 && v.startsWith('"') && v.endsWith('"');
    }
  },
  "copy:repeat_phrase": {
    kwargs: ["phrase", "small_n"],
    build: (kw, rng) => {
      const phrase = pyTruthy(kw.phrase) ? pyStrip(pyStr(kw.phrase, "phrase")) : rng.choice(PHRASES);
      const smallN = truthyArg(kw.small_n, rng, 2, 3);
      return (value) => {
        const ref = pySplit(phrase);
        const firstWord = pyIndex(ref, 0);
        const lastWord = pyIndex(ref, -1);
        const found = pyFindall(`${firstWord} .*? ${lastWord}`, value);
        if (!pyEq(found.length, smallN)) return false;
        let differences = 0;
        for (const f of found) {
          if (typeof f !== "string") throw new PyError("AttributeError", "'tuple' object has no attribute 'split'");
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
    }
  },
  "copy:copy": {
    kwargs: ["prompt_to_repeat"],
    build: (kw) => copyCheck(requirePrompt(kw))
  },
  "new:copy_span_idx": {
    kwargs: ["prompt_to_repeat", "n_start", "n_end"],
    build: (kw, rng) => {
      const prompt = requirePrompt(kw);
      const promptLen = typeof prompt === "string" ? pyLen(prompt) : Array.isArray(prompt) ? prompt.length : NaN;
      const nStart = kw.n_start === void 0 || !pyTruthy(kw.n_start) && kw.n_start !== 0 ? rng.randint(0, promptLen - 2) : kw.n_start;
      const nEnd = pyTruthy(kw.n_end) ? kw.n_end : rng.randint(pyNum(nStart) + 1, promptLen - 1);
      const start = pyIndexValue(nStart);
      const end = pyIndexValue(nEnd);
      return (value) => {
        const span = pySliceStr(pyStr(prompt, "prompt_to_repeat"), start, end);
        return pyLower(pyStrip(value)) === pyLower(pyStrip(span));
      };
    }
  },
  "detectable_format:sentence_hyphens": {
    kwargs: none,
    build: () => (value) => {
      const gold = splitIntoSentences(value.replaceAll("-", " "));
      const parts = value.split("-");
      const n = Math.min(gold.length, parts.length);
      for (let i = 0; i < n; i++) {
        if (pyStrip(parts[i]) !== parts[i]) return false;
        if (parts[i] !== gold[i]) return false;
      }
      return true;
    }
  },
  "keywords:no_adjacent_consecutive": {
    kwargs: none,
    build: () => (value) => {
      const words = pySplit(value);
      for (let i = 0; i + 1 < words.length; i++) {
        const a = pyLower(firstCodePoint(words[i]));
        const b = pyLower(firstCodePoint(words[i + 1]));
        if (pyLen(a) !== 1 || pyLen(b) !== 1) return false;
        if (b.codePointAt(0) - a.codePointAt(0) === 1) return false;
      }
      return true;
    }
  },
  "detectable_format:square_brackets": {
    kwargs: none,
    build: () => (value) => pySplit(value).every((w) => w.startsWith("[") && w.endsWith("]"))
  },
  "keywords:word_once": {
    kwargs: ["keyword"],
    build: (kw, rng) => {
      const keyword = keywordArg(kw.keyword, rng, "keyword");
      return (value) => pyCount(keyword, value, I) === 1;
    }
  },
  "keywords:word_count_different_numbers": {
    kwargs: ["keyword", "frequency", "relation"],
    build: (kw, rng) => frequencyCheck(kw, rng)
  },
  "keywords:exclude_word_harder": {
    kwargs: ["keyword", "instruction"],
    build: (kw, rng) => {
      const keyword = pyTruthy(kw.keyword) ? pyStrip(pyStr(kw.keyword, "keyword")) : rng.choice(pySplit(pyStr(kw.instruction, "instruction")));
      return (value) => !value.includes(` ${keyword} `);
    }
  },
  "paragraphs:paragraphs": {
    kwargs: none,
    build: () => (value) => countPieces(value.split(STARS_SPLIT)) === 2
  },
  "paragraphs:paragraphs2": {
    kwargs: none,
    build: () => (value) => countPieces(value.split("\n\n")) === 2
  },
  "first_word:first_word_sent": {
    kwargs: ["first_word"],
    build: (kw, rng) => {
      let first;
      if (!pyTruthy(kw.first_word)) first = rng.keywords(1)[0];
      else if (typeof kw.first_word !== "string") {
        throw new PyError("AttributeError", "object has no attribute '_first_word'");
      } else first = pyStrip(kw.first_word);
      return (value) => {
        for (const s of splitIntoSentences(value)) {
          if (!pyStrip(s)) return false;
          if (pyLower(pyStrip(pySplit(s)[0])) !== pyLower(first)) return false;
        }
        return true;
      };
    }
  },
  "first_word:first_word_answer": {
    kwargs: ["first_word"],
    build: (kw, rng) => {
      const first = keywordArg(kw.first_word, rng, "first_word");
      return (value) => {
        const words = pySplit(value);
        if (!pyStrip(value) || words.length === 0) return false;
        return pyLower(pyStrip(words[0])) === pyLower(first);
      };
    }
  },
  "last_word:last_word_sent": {
    kwargs: ["last_word"],
    build: (kw, rng) => {
      let last;
      if (!pyTruthy(kw.last_word)) last = rng.keywords(1)[0];
      else if (typeof kw.last_word === "string") last = pyStrip(kw.last_word);
      else last = pyStrip(pyStr(firstElement(kw.last_word), "last_word[0]"));
      return (value) => {
        for (const s of splitIntoSentences(value)) {
          if (!pyStrip(s)) return false;
          const words = pySplit(s);
          const word = pyStrip(words[words.length - 1]).replace(NON_WORD_NON_SPACE, "");
          if (pyLower(word) !== pyLower(last)) return false;
        }
        return true;
      };
    }
  },
  "last_word:last_word_answer": {
    kwargs: ["last_word"],
    build: (kw, rng) => {
      const last = keywordArg(kw.last_word, rng, "last_word");
      return (value) => {
        const word = pyStrip(pyIndex(pySplit(value), -1)).replace(NON_WORD_NON_SPACE, "");
        return pyLower(word) === pyLower(last);
      };
    }
  },
  "detectable_format:bigram_wrapping": {
    kwargs: none,
    build: () => (value) => {
      const words = pySplit(value);
      for (let i = 0; i < words.length - 1; i += 2) {
        if (!(words[i].startsWith("<<") && words[i + 1].endsWith(">>"))) return false;
      }
      return true;
    }
  },
  "copy:copying_simple": {
    kwargs: ["prompt_to_repeat"],
    build: (kw) => copyCheck(requirePrompt(kw))
  },
  "copy:copying_multiple": {
    kwargs: ["prompt_to_repeat", "N"],
    build: (kw, rng) => {
      const prompt = requirePrompt(kw);
      const n = truthyArg(kw.N, rng, 2, 3);
      return (value) => {
        const prompts = value.split("******");
        if (!pyEq(prompts.length, n)) return false;
        const want2 = pyLower(pyStrip(pyStr(prompt, "prompt_to_repeat")));
        return prompts.every((p) => pyLower(pyStrip(p)) === want2);
      };
    }
  },
  "punctuation:punctuation_dot": {
    kwargs: none,
    build: () => (value) => !value.includes(".")
  },
  "punctuation:punctuation_exclamation": {
    kwargs: none,
    build: () => (value) => !value.includes("!")
  },
  "count:lowercase_counting": {
    kwargs: ["N"],
    build: (kw, rng) => {
      const n = truthyArg(kw.N, rng, 2, 3);
      return (value) => !pyLt(n, pyCount("\\b[a-z]+\\b", value));
    }
  },
  "letters:letter_counting": {
    kwargs: ["N", "relation"],
    build: (kw, rng) => {
      const n = truthyArg(kw.N, rng, 2, 3);
      const relation = pyTruthy(kw.relation) ? kw.relation : rng.choice(RELATIONS);
      return (value) => {
        const count = pyCount("[a-zA-Z]", value);
        if (relation === AT_LEAST) return !pyLt(count, n);
        if (relation === LESS_THAN) return pyLt(count, n);
        return null;
      };
    }
  },
  "letters:letter_counting2": {
    kwargs: ["letter", "let_frequency", "let_relation"],
    build: (kw, rng) => letterFrequencyCheck(kw, rng)
  },
  "count:counting_composition": {
    kwargs: ["n_sent", "n_words"],
    build: (kw, rng) => {
      const nSent = truthyArg(kw.n_sent, rng, 2, 3);
      const nWords = truthyArg(kw.n_words, rng, 2, 3);
      return (value, tools2) => {
        const paragraphs = value.split(STARS_SPLIT);
        let count = paragraphs.length;
        for (let i = 0; i < paragraphs.length; i++) {
          const p = paragraphs[i];
          if (!pyStrip(p)) {
            if (i === 0 || i === paragraphs.length - 1) count--;
            else return false;
          }
          const sentences = splitIntoSentences(p);
          if (!pyEq(sentences.length, nSent)) return false;
          for (const s of sentences) {
            if (!pyEq(wordTokenize(tools2.punkt, s).length, nWords)) return false;
          }
        }
        return count === 3;
      };
    }
  },
  "count:count_unique": {
    kwargs: none,
    build: () => (value, tools2) => {
      const words = wordTokenize(tools2.punkt, value);
      return new Set(words).size === words.length;
    }
  },
  "count:count_increment_word": {
    kwargs: ["keyword1", "keyword2"],
    build: (kw) => {
      if (!pyTruthy(kw.keyword1) || !pyTruthy(kw.keyword2)) {
        throw new PyError("TypeError", "first argument must be string or compiled pattern");
      }
      const k1 = pyStrip(pyStr(kw.keyword1, "keyword1"));
      const k2 = pyStrip(pyStr(kw.keyword2, "keyword2"));
      return (value) => pyCount(k1, value, I) === 1 && pyCount(k2, value, I) === 2;
    }
  },
  "keywords:palindrome": {
    kwargs: none,
    build: () => (value) => pySplit(value).some((w) => w === Array.from(w).reverse().join(""))
  },
  "keywords:keyword_specific_position": {
    kwargs: ["keyword", "n", "m"],
    build: (kw, rng) => {
      let keyword;
      if (!pyTruthy(kw.keyword)) keyword = rng.keywords(1)[0];
      else if (typeof kw.keyword === "string") keyword = pyStrip(kw.keyword);
      else keyword = pyStrip(pyStr(firstElement(kw.keyword), "keyword[0]"));
      const n = truthyArg(kw.n, rng, 1, 20);
      const m = truthyArg(kw.m, rng, 1, 30);
      return (value, tools2) => {
        const sentences = splitIntoSentences(value);
        if (pyLt(sentences.length, n)) return false;
        const words = wordTokenize(tools2.punkt, pyIndex(sentences, pyIndexValue(n) - 1));
        if (pyLt(words.length, m)) return false;
        return pyIndex(words, pyIndexValue(m) - 1) === keyword;
      };
    }
  },
  "keywords:start_end": {
    kwargs: none,
    build: () => (value, tools2) => {
      const words = wordTokenize(tools2.punkt, value);
      if (words.length < 2) return false;
      return pyLower(words[0]) === pyLower(words[words.length - 1]);
    }
  }
};
function firstElement(v) {
  if (Array.isArray(v)) return pyIndex(v, 0);
  if (typeof v === "object" && v !== null) throw new PyError("KeyError", "0");
  throw new PyError("TypeError", "object is not subscriptable");
}
function requirePrompt(kw) {
  if (!pyTruthy(kw.prompt_to_repeat)) throw new PyError("ValueError", "prompt_to_repeat must be set.");
  return kw.prompt_to_repeat;
}
function copyCheck(prompt) {
  return (value) => pyLower(pyStrip(value)) === pyLower(pyStrip(pyStr(prompt, "prompt_to_repeat")));
}
function frequencyCheck(kw, rng) {
  const keyword = keywordArg(kw.keyword, rng, "keyword");
  const n = countArg(kw.frequency, rng, 1, 3);
  const relation = relationArg(kw.relation, rng);
  return (value) => compare(pyCount(keyword, value, I), relation, n);
}
function letterFrequencyCheck(kw, rng) {
  const raw = kw.letter;
  let letter;
  const invalid = () => {
    if (!pyTruthy(raw)) return true;
    if (typeof raw === "string") {
      if (pyLen(raw) > 1) return true;
      const lower = pyLower(raw);
      if (pyLen(lower) !== 1) throw new PyError("TypeError", "ord() expected a character");
      const c = lower.codePointAt(0);
      return c < 97 || c > 122;
    }
    if (Array.isArray(raw)) {
      if (raw.length > 1) return true;
      throw new PyError("AttributeError", "'list' object has no attribute 'lower'");
    }
    if (typeof raw === "object" && raw !== null) {
      if (Object.keys(raw).length > 1) return true;
      throw new PyError("AttributeError", "'dict' object has no attribute 'lower'");
    }
    throw new PyError("TypeError", "object has no len()");
  };
  if (invalid()) letter = rng.choice(ASCII_LETTERS);
  else letter = pyStrip(raw);
  letter = pyLower(letter);
  const n = countArg(kw.let_frequency, rng, 1, 10);
  const relation = relationArg(kw.let_relation, rng);
  return (value) => {
    let count = 0;
    for (const ch of pyLower(value)) if (ch === letter) count++;
    return relation === LESS_THAN ? pyLt(count, n) : !pyLt(count, n);
  };
}
function englishCase(value, caseTest, tools2) {
  try {
    return caseTest(value) && detect(value, tools2.langdetectProfilesDir) === "en";
  } catch (e) {
    if (e instanceof LangDetectException) return true;
    throw e;
  }
}
var INSTRUCTION_IDS = Object.keys(INSTRUCTIONS).sort(pyStrCompare);
function checkInstruction(instructionId, kwargs, value, tools2) {
  try {
    if (typeof instructionId !== "string" || !Object.hasOwn(INSTRUCTIONS, instructionId)) {
      throw new PyError("KeyError", JSON.stringify(instructionId));
    }
    const spec = INSTRUCTIONS[instructionId];
    const raw = kwargs === null || kwargs === void 0 ? {} : kwargs;
    if (typeof raw !== "object" || Array.isArray(raw)) {
      throw new PyError("AttributeError", "kwargs entry has no attribute 'items'");
    }
    const kw = {};
    for (const [k, v] of Object.entries(raw)) {
      if (v === null || v === void 0) continue;
      if (!spec.kwargs.includes(k)) {
        throw new PyError("TypeError", `build_description() got an unexpected keyword argument '${k}'`);
      }
      kw[k] = v;
    }
    const check = spec.build(kw, new Rng(instructionId));
    return { ok: check(value, tools2) === true };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

// resources_servers/instruction_following/src/punkt.ts
import { existsSync, readFileSync as readFileSync2 } from "node:fs";
import { homedir } from "node:os";
import { join as join2 } from "node:path";
var ORTHO_BEG_UC = 1 << 1;
var ORTHO_MID_UC = 1 << 2;
var ORTHO_UNK_UC = 1 << 3;
var ORTHO_BEG_LC = 1 << 4;
var ORTHO_MID_LC = 1 << 5;
var ORTHO_UNK_LC = 1 << 6;
var ORTHO_UC = ORTHO_BEG_UC | ORTHO_MID_UC | ORTHO_UNK_UC;
var ORTHO_LC = ORTHO_BEG_LC | ORTHO_MID_LC | ORTHO_UNK_LC;
var PUNKT_FILES = ["abbrev_types.txt", "collocations.tab", "sent_starters.txt", "ortho_context.tab"];
var PUNKT_SUBDIR = join2("tokenizers", "punkt_tab", "english");
function nltkSearchPath(env = process.env) {
  const dirs = [];
  if (env.NLTK_DATA) dirs.push(...env.NLTK_DATA.split(":").filter((d) => d.length > 0));
  dirs.push(join2(homedir(), "nltk_data"));
  dirs.push("/usr/share/nltk_data", "/usr/local/share/nltk_data", "/usr/lib/nltk_data", "/usr/local/lib/nltk_data");
  return dirs;
}
var PunktDataNotFoundError = class extends Error {
  constructor(searched) {
    super(
      `NLTK Punkt parameters for English were not found. Looked for ${PUNKT_SUBDIR}/{${PUNKT_FILES.join(",")}} under:
` + searched.map((d) => `  - ${d}`).join("\n") + `
Install NLTK's published 'punkt_tab' data package into one of these folders (for example unpack punkt_tab.zip into ~/nltk_data/tokenizers/, or run \`python -m nltk.downloader punkt_tab\` on a machine with NLTK), or set NLTK_DATA or the server config key 'nltk_data_dir' to a folder that contains ${PUNKT_SUBDIR}.`
    );
    this.searched = searched;
    this.name = "PunktDataNotFoundError";
  }
  code = "NG_ERR_PUNKT_DATA_NOT_FOUND";
};
function findPunktDir(extraDir, env = process.env) {
  const roots = [...extraDir ? [extraDir] : [], ...nltkSearchPath(env)];
  for (const root of roots) {
    const dir = join2(root, PUNKT_SUBDIR);
    if (PUNKT_FILES.every((f) => existsSync(join2(dir, f)))) return dir;
  }
  throw new PunktDataNotFoundError(roots);
}
function lines(text) {
  return text.split(/\r?\n/).filter((l) => l.length > 0);
}
function loadPunktParams(dir) {
  const read = (f) => readFileSync2(join2(dir, f), "utf8");
  const abbrevTypes = new Set(lines(read("abbrev_types.txt")).map((l) => pyStrip(l)));
  const sentStarters = new Set(lines(read("sent_starters.txt")).map((l) => pyStrip(l)));
  const collocations = /* @__PURE__ */ new Set();
  for (const l of lines(read("collocations.tab"))) {
    const [a, b] = l.split("	");
    if (a !== void 0 && b !== void 0) collocations.add(`${a}	${b}`);
  }
  const orthoContext = /* @__PURE__ */ new Map();
  for (const l of lines(read("ortho_context.tab"))) {
    const tab = l.lastIndexOf("	");
    if (tab < 0) continue;
    orthoContext.set(l.slice(0, tab), parseInt(l.slice(tab + 1), 10) | 0);
  }
  return { abbrevTypes, collocations, sentStarters, orthoContext };
}
var WS3 = `[${PY_WS_CLASS}]`;
var NWS = `[^${PY_WS_CLASS}]`;
var NON_WORD = `(?:[)";}\\]*:@'({\\[?!])`;
var MULTI_CHAR = `(?:-{2,}|\\.{2,}|(?:\\.${WS3}){2,}\\.)`;
var WORD_START = `[^("\`{\\[:;&#*@)}\\]\\-,]`;
var END = "(?![\\s\\S])";
var WORD_TOKENIZER = new RegExp(
  `${MULTI_CHAR}|(?=${WORD_START})${NWS}+?(?=${WS3}|${END}|${NON_WORD}|${MULTI_CHAR}|,(?=${END}|${WS3}|${NON_WORD}|${MULTI_CHAR}))|${NWS}`,
  "gu"
);
var PERIOD_CONTEXT = new RegExp(`[.?!](?=(${NON_WORD}|${WS3}+(${NWS}+)))`, "gu");
var BOUNDARY_REALIGNMENT = new RegExp(`^["')\\]}]+?(?:${WS3}+|(?=--)|(?=\\n|${END}))`, "u");
var RE_NUMERIC = /^-?[.,]?\p{Nd}[\p{Nd},.\-]*\.?$/u;
var RE_ELLIPSIS = /^\.\.+$/u;
var RE_INITIAL = /^[\p{L}\p{Nl}\p{No}_]\.$/u;
var ASCII_WS = /* @__PURE__ */ new Set([" ", "	", "\n", "\r", "\v", "\f"]);
var PUNCTUATION2 = /* @__PURE__ */ new Set([";", ":", ",", ".", "!", "?"]);
function makeToken(tok) {
  const lower = tok.toLowerCase();
  const type = RE_NUMERIC.test(lower) ? "##number##" : lower;
  return { tok, type, periodFinal: tok.endsWith("."), sentbreak: false, abbr: false, ellipsis: false };
}
function typeNoPeriod(t) {
  return t.type.length > 1 && t.type.endsWith(".") ? t.type.slice(0, -1) : t.type;
}
function typeNoSentperiod(t) {
  return t.sentbreak ? typeNoPeriod(t) : t.type;
}
function firstChar(s) {
  const cp = s.codePointAt(0);
  return cp === void 0 ? "" : String.fromCodePoint(cp);
}
var PunktSentenceTokenizer = class {
  constructor(params) {
    this.params = params;
  }
  /** `nltk.sent_tokenize(text)` */
  tokenize(text) {
    return this.spans(text).map(([s, e]) => text.slice(s, e));
  }
  countSentences(text) {
    return this.spans(text).length;
  }
  lastText = null;
  lastSpans = [];
  spans(text) {
    if (text === this.lastText) return this.lastSpans;
    const spans = this.realignBoundaries(text, this.slicesFromText(text));
    this.lastText = text;
    this.lastSpans = spans;
    return spans;
  }
  /** PunktLanguageVars.word_tokenize */
  wordTokenize(s) {
    return s.match(WORD_TOKENIZER) ?? [];
  }
  tokenizeWords(plaintext) {
    const out = [];
    for (const line of plaintext.split("\n")) {
      if (pyStrip(line).length === 0) continue;
      for (const tok of this.wordTokenize(line)) out.push(makeToken(tok));
    }
    return out;
  }
  firstPass(t) {
    const tok = t.tok;
    if (tok === "." || tok === "?" || tok === "!") {
      t.sentbreak = true;
    } else if (RE_ELLIPSIS.test(tok)) {
      t.ellipsis = true;
    } else if (t.periodFinal && !tok.endsWith("..")) {
      const base = tok.slice(0, -1).toLowerCase();
      const dash = base.split("-");
      if (this.params.abbrevTypes.has(base) || this.params.abbrevTypes.has(dash[dash.length - 1])) {
        t.abbr = true;
      } else {
        t.sentbreak = true;
      }
    }
  }
  orthoHeuristic(t) {
    if (PUNCTUATION2.has(t.tok)) return false;
    const ctx = this.params.orthoContext.get(typeNoSentperiod(t)) ?? 0;
    const first = firstChar(t.tok);
    const upper = pyIsUpper(first);
    const lower = pyIsLower(first);
    if (upper && ctx & ORTHO_LC && !(ctx & ORTHO_MID_UC)) return true;
    if (lower && (ctx & ORTHO_UC || !(ctx & ORTHO_BEG_LC))) return false;
    return "unknown";
  }
  secondPass(t1, t2) {
    if (!t1.periodFinal) return;
    const typ = typeNoPeriod(t1);
    const nextTyp = typeNoSentperiod(t2);
    const isInitial = RE_INITIAL.test(t1.tok);
    if (this.params.collocations.has(`${typ}	${nextTyp}`)) {
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
    if (isInitial || typ === "##number##") {
      const s = this.orthoHeuristic(t2);
      if (s === false) {
        t1.sentbreak = false;
        t1.abbr = true;
        return;
      }
      if (s === "unknown" && isInitial && pyIsUpper(firstChar(t2.tok)) && !((this.params.orthoContext.get(nextTyp) ?? 0) & ORTHO_LC)) {
        t1.sentbreak = false;
        t1.abbr = true;
      }
    }
  }
  /** True when some token other than the last one ends a sentence. */
  textContainsSentbreak(text) {
    const toks = this.tokenizeWords(text);
    for (const t of toks) this.firstPass(t);
    for (let i = 0; i < toks.length; i++) {
      if (i + 1 < toks.length) this.secondPass(toks[i], toks[i + 1]);
      if (toks[i].sentbreak && i + 1 < toks.length) return true;
    }
    return false;
  }
  lastWhitespaceIndex(text, from, to) {
    for (let i = to - 1; i >= from; i--) if (ASCII_WS.has(text[i])) return i - from;
    return 0;
  }
  slicesFromText(text) {
    const out = [];
    let lastBreak = 0;
    let prevStart = 0;
    let prevStop = 0;
    let prev = null;
    const decide = (m, sliceStart, sliceStop) => {
      const context = text.slice(sliceStart, sliceStop) + m[0] + m[1];
      if (this.textContainsSentbreak(context)) {
        const end = m.index + m[0].length;
        out.push([lastBreak, end]);
        if (m[2]) lastBreak = end + m[1].length - m[2].length;
        else lastBreak = end;
      }
    };
    PERIOD_CONTEXT.lastIndex = 0;
    for (const m of text.matchAll(PERIOD_CONTEXT)) {
      const match = m;
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
  realignBoundaries(text, slices) {
    const out = [];
    let realign = 0;
    for (let i = 0; i < slices.length; i++) {
      const s1 = [slices[i][0] + realign, slices[i][1]];
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
};

// resources_servers/instruction_following/src/verify.ts
var punktByDir = /* @__PURE__ */ new Map();
function toolsFor(punktDir, langdetectProfilesDir = null) {
  let punkt = punktByDir.get(punktDir);
  if (!punkt) {
    punkt = new PunktSentenceTokenizer(loadPunktParams(punktDir));
    punktByDir.set(punktDir, punkt);
  }
  return { punkt, langdetectProfilesDir };
}

// ../../tmp/ifs/diff.ts
var tools = toolsFor(findPunktDir("/work/shared/nltk_data"), process.env.LDP || null);
var texts = JSON.parse(readFileSync3("/tmp/ifs/corpus.json", "utf8"));
var checks = JSON.parse(readFileSync3("/tmp/ifs/checks.json", "utf8"));
var want = JSON.parse(readFileSync3("/tmp/ifs/oracle_out.json", "utf8"));
var bad = {};
var show = {};
var note = (k, msg) => {
  bad[k] = (bad[k] ?? 0) + 1;
  if ((show[k] = (show[k] ?? 0) + 1) <= 3) console.log(`[${k}] ${msg()}`);
};
texts.forEach((t, i) => {
  const w = want[i];
  const sent = tools.punkt.tokenize(t);
  if (JSON.stringify(sent) !== JSON.stringify(w.sent)) note("sent", () => JSON.stringify(t.slice(0, 300)) + "\n  got " + JSON.stringify(sent).slice(0, 600) + "\n  want " + JSON.stringify(w.sent).slice(0, 600));
  const words = wordTokenize(tools.punkt, t);
  if (JSON.stringify(words) !== JSON.stringify(w.words)) {
    let j = 0;
    while (j < words.length && words[j] === w.words[j]) j++;
    note("words", () => JSON.stringify(t.slice(0, 200)) + `
  at ${j}: got ` + JSON.stringify(words.slice(Math.max(0, j - 3), j + 5)) + " want " + JSON.stringify(w.words.slice(Math.max(0, j - 3), j + 5)));
  }
  const ifs = splitIntoSentences(t);
  if (JSON.stringify(ifs) !== JSON.stringify(w.ifs)) note("ifs", () => JSON.stringify(t.slice(0, 200)));
  if (countWords(t) !== w.cw) note("cw", () => `${countWords(t)} vs ${w.cw}: ` + JSON.stringify(t.slice(0, 200)));
  let lang;
  try {
    lang = detect(t, process.env.LDP || null);
  } catch {
    lang = "EXC";
  }
  if (lang !== w.lang) note("lang", () => `${lang} vs ${w.lang}: ` + JSON.stringify(t.slice(0, 150)));
  checks.forEach(([id, kw], k) => {
    const got = checkInstruction(id, kw, t, tools).ok;
    if (got !== w.checks[k]) note(id, () => `${JSON.stringify(kw)} got ${got} want ${w.checks[k]}: ` + JSON.stringify(t.slice(0, 200)));
  });
});
console.log("texts", texts.length, "mismatches", bad);
