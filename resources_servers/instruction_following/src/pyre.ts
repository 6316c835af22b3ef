// Python `re` patterns (as found in instruction kwargs) run on V8.
//
// A pattern is translated into an equivalent JavaScript RegExp (always with the `u` flag):
// `\w`, `\d`, `\s`, `\b` get Python's Unicode meaning, `.` excludes only "\n", `^`/`$` follow Python
// (with and without MULTILINE), `(?P<name>...)`/`(?P=name)`, inline global flags, verbose mode,
// literal `{`/`}`/`]` and escaped punctuation are accepted; atomic groups and possessive
// quantifiers become a lookahead capture plus backreference. Constructs V8 cannot express (scoped
// flags, conditionals, \N{...}) raise PyError, as an invalid pattern does in Python.

import { PY_WS_CLASS, PyError } from './py.js';

export interface PyFlags {
  ignoreCase?: boolean;
  multiline?: boolean;
  dotAll?: boolean;
  verbose?: boolean;
}

const W_ITEMS = '\\p{L}\\p{N}_';
// Python's IGNORECASE treats these four as one letter (simple lowercase of İ is i, plus its i/ı
// fix-up); V8's case folding does not.
const TURKISH_I = 'iI\u0130\u0131';
const W_ITEMS_ASCII = 'A-Za-z0-9_';

interface ClassParts {
  items: string;
  negated: string[];
}

export interface CompiledPy {
  source: string;
  flags: string;
  /** Number of the pattern's own (Python) capture groups. */
  groups: number;
  /** JavaScript match index of Python group i (at i - 1); helper groups make them differ. */
  groupIndex: number[];
  /**
   * The same pattern anchored at one position and required to consume at least one character
   * (Python's "must advance" search after an empty match). Its group 1 is an added capture.
   */
  nonEmptySource: string;
}

const cache = new Map<string, CompiledPy>();
const CACHE_MAX = 2000;

/** Translate a Python pattern; raises PyError for an invalid or unsupported pattern. */
export function translatePy(pattern: string, flags: PyFlags = {}): CompiledPy {
  const key = `${flags.ignoreCase ? 'i' : ''}${flags.multiline ? 'm' : ''}${flags.dotAll ? 's' : ''}${flags.verbose ? 'x' : ''}\u0000${pattern}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const main = new Translator(pattern, flags).run();
  const shifted = new Translator(pattern, flags, 1).run();
  const compiled: CompiledPy = {
    ...main,
    // At the start, capture the rest of the input; at the end, the rest must differ from it.
    nonEmptySource: `(?=([\\s\\S]*))(?:${shifted.source})(?!\\1(?![\\s\\S]))`,
  };
  try {
    // Validate now, so that callers see one kind of error.
    new RegExp(compiled.source, compiled.flags);
    new RegExp(compiled.nonEmptySource, compiled.flags);
  } catch (e) {
    throw new PyError('re.error', (e as Error).message);
  }
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(key, compiled);
  return compiled;
}

export function pyRegExp(pattern: string, flags: PyFlags = {}, global = false): RegExp {
  const c = translatePy(pattern, flags);
  return new RegExp(c.source, c.flags + (global ? 'g' : ''));
}

function midPair(s: string, i: number): boolean {
  if (i <= 0 || i >= s.length) return false;
  const a = s.charCodeAt(i - 1);
  const b = s.charCodeAt(i);
  return a >= 0xd800 && a <= 0xdbff && b >= 0xdc00 && b <= 0xdfff;
}

/** `re.search(pattern, s, flags) is not None` */
export function pySearch(pattern: string, s: string, flags: PyFlags = {}): boolean {
  const c = translatePy(pattern, flags);
  const first = pyMatches(c, s).next();
  return !first.done;
}

/**
 * The matches `re.finditer` yields: like Python 3.7+, an empty match may follow a non-empty one at
 * the same position, and after an empty match the next match may start at the same position if it
 * is non-empty (JavaScript's iteration would skip ahead one character instead).
 */
function* pyMatches(c: CompiledPy, s: string): Generator<RegExpExecArray> {
  const re = new RegExp(c.source, `${c.flags}g`);
  let nonEmpty: RegExp | null = null;
  let pos = 0;
  let mustAdvance = false;
  while (pos <= s.length) {
    let m: RegExpExecArray | null = null;
    if (mustAdvance) {
      nonEmpty ??= new RegExp(c.nonEmptySource, `${c.flags}y`);
      nonEmpty.lastIndex = pos;
      const n = nonEmpty.exec(s);
      if (n) {
        // Drop the added group 1, keeping index and named groups.
        const fixed = [n[0], ...n.slice(2)] as unknown as RegExpExecArray;
        fixed.index = n.index;
        fixed.groups = n.groups;
        m = fixed;
      } else {
        const code = s.charCodeAt(pos);
        pos += code >= 0xd800 && code <= 0xdbff && pos + 1 < s.length ? 2 : 1;
        if (pos > s.length) return;
      }
    }
    if (!m) {
      re.lastIndex = pos;
      m = re.exec(s);
    }
    if (!m) return;
    if (midPair(s, m.index)) {
      // V8 lets zero-width lookbehinds match between the halves of a surrogate pair; Python
      // positions are code points, so no match starts there.
      pos = m.index + 1;
      mustAdvance = false;
      continue;
    }
    yield m;
    const end = m.index + m[0].length;
    mustAdvance = end === m.index;
    pos = end;
  }
}

/** `re.findall(pattern, s, flags)` (group 1 when one group, tuples when several). */
export function pyFindall(pattern: string, s: string, flags: PyFlags = {}): (string | string[])[] {
  const c = translatePy(pattern, flags);
  const out: (string | string[])[] = [];
  for (const m of pyMatches(c, s)) {
    if (c.groups === 0) out.push(m[0]);
    else if (c.groups === 1) out.push(m[c.groupIndex[0]!] ?? '');
    else out.push(c.groupIndex.map((j) => m[j] ?? ''));
  }
  return out;
}

/** `len(re.findall(pattern, s, flags))` */
export function pyCount(pattern: string, s: string, flags: PyFlags = {}): number {
  const c = translatePy(pattern, flags);
  let n = 0;
  for (const _ of pyMatches(c, s)) n++;
  return n;
}

/** `len(re.split(pattern, s))` */
export function pySplitCount(pattern: string, s: string, flags: PyFlags = {}): number {
  const c = translatePy(pattern, flags);
  const n = pyCount(pattern, s, flags);
  return 1 + n * (1 + c.groups);
}

class Translator {
  private i = 0;
  private out = '';
  private groups = 0;
  /** What the last emitted item was, for quantifier checks; and where it starts in `out`. */
  private last: 'none' | 'atom' | 'assert' | 'lookaround' | 'quantifier' = 'none';
  private lastStart = 0;
  private readonly stack: { start: number; look: boolean; num?: number; atomic?: number; name?: string }[] = [];
  private readonly closedNames = new Set<string>();
  /** Opening positions in `out` of every capture group (Python's and helper ones). */
  private readonly caps: { pos: number; py?: number }[] = [];
  private atomics = 0;
  private ignoreCase: boolean;
  private multiline: boolean;
  private dotAll: boolean;
  private verbose: boolean;
  private ascii = false;

  constructor(
    private readonly p: string,
    flags: PyFlags,
    /** Added to backreference numbers (a wrapper adds capture groups in front). */
    private readonly groupOffset = 0,
  ) {
    this.ignoreCase = !!flags.ignoreCase;
    this.multiline = !!flags.multiline;
    this.dotAll = !!flags.dotAll;
    this.verbose = !!flags.verbose;
  }

  private fail(msg: string): never {
    throw new PyError('re.error', `${msg} at position ${this.i}`);
  }

  private get w(): string {
    return this.ascii ? W_ITEMS_ASCII : W_ITEMS;
  }

  run(): { source: string; flags: string; groups: number; groupIndex: number[] } {
    this.readGlobalFlags();
    const p = this.p;
    while (this.i < p.length) {
      const c = p[this.i]!;
      if (this.verbose && /\s/.test(c)) {
        this.i++;
        continue;
      }
      if (this.verbose && c === '#') {
        while (this.i < p.length && p[this.i] !== '\n') this.i++;
        continue;
      }
      const start = this.out.length;
      switch (c) {
        case '\\': {
          const e = p[this.i + 1];
          this.out += this.escapeOutside();
          this.mark(e !== undefined && 'bBAZ'.includes(e) ? 'assert' : 'atom', start);
          break;
        }
        case '[':
          this.out += this.charClass();
          this.mark('atom', start);
          break;
        case '(':
          this.group();
          break;
        case ')':
          this.closeGroup();
          break;
        case '|':
          this.out += '|';
          this.i++;
          this.last = 'none';
          break;
        case '.':
          this.out += this.dotAll ? '[\\s\\S]' : '[^\\n]';
          this.i++;
          this.mark('atom', start);
          break;
        case '^':
          this.out += this.multiline ? '(?<![^\\n])' : '(?<![\\s\\S])';
          this.i++;
          this.mark('assert', start);
          break;
        case '$':
          this.out += this.multiline ? '(?=\\n|(?![\\s\\S]))' : '(?=\\n?(?![\\s\\S]))';
          this.i++;
          this.mark('assert', start);
          break;
        case '{':
          this.brace(start);
          break;
        case '}':
          this.out += '\\}';
          this.i++;
          this.mark('atom', start);
          break;
        case ']':
          this.out += '\\]';
          this.i++;
          this.mark('atom', start);
          break;
        case '*':
        case '+':
        case '?':
          this.quantifier(c);
          this.i++;
          this.afterQuantifier();
          break;
        default: {
          const cp = p.codePointAt(this.i)!;
          const ch = String.fromCodePoint(cp);
          this.out += this.ignoreCase && TURKISH_I.includes(ch) ? `[${TURKISH_I}]` : ch === '/' ? '\\/' : ch;
          this.i += ch.length;
          this.mark('atom', start);
        }
      }
    }
    if (this.stack.length > 0) this.fail('missing ), unterminated subpattern');
    let flags = 'u';
    if (this.ignoreCase) flags += 'i';
    // JavaScript numbers capture groups by position; resolve Python backreferences accordingly.
    const order = [...this.caps].sort((a, b) => a.pos - b.pos);
    const groupIndex: number[] = [];
    order.forEach((c, k) => {
      if (c.py !== undefined) groupIndex[c.py - 1] = k + 1;
    });
    const source = this.out.replace(/\u0001(\d+)\u0001/g, (_m, n: string) => String(groupIndex[Number(n) - 1]! + this.groupOffset));
    return { source, flags, groups: this.groups, groupIndex };
  }

  private insertAt(pos: number, text: string): void {
    this.out = this.out.slice(0, pos) + text + this.out.slice(pos);
    for (const c of this.caps) if (c.pos >= pos) c.pos += text.length;
  }

  /** Wraps out[from:] as an atomic group: a lookahead capture, then a backreference to it. */
  private atomicWrap(from: number): void {
    const name = `__pyatomic${++this.atomics}`;
    this.insertAt(from, `(?:(?=(?<${name}>`);
    this.caps.push({ pos: from + 6 });
    this.out += `))\\k<${name}>)`;
  }

  private mark(kind: 'atom' | 'assert' | 'lookaround', start: number): void {
    this.last = kind;
    this.lastStart = start;
  }

  /** Emits a quantifier after checking what it repeats, as Python's parser does. */
  private quantifier(q: string): void {
    if (this.last === 'none' || this.last === 'assert') this.fail('nothing to repeat');
    if (this.last === 'quantifier') this.fail('multiple repeat');
    // Python repeats lookarounds; V8 (unicode mode) only repeats them inside a group.
    if (this.last === 'lookaround') {
      this.insertAt(this.lastStart, '(?:');
      this.out += ')';
    }
    this.out += q;
    this.last = 'quantifier';
  }

  private closeGroup(): void {
    const g = this.stack.pop();
    if (!g) this.fail('unbalanced parenthesis');
    this.out += g.atomic !== undefined ? `))\\k<__pyatomic${g.atomic}>)` : ')';
    if (g.name) this.closedNames.add(g.name);
    this.i++;
    this.mark(g.look ? 'lookaround' : 'atom', g.start);
  }

  private readGlobalFlags(): void {
    // Python accepts (?aiLmsux) only at the very start (3.11); several groups may follow each other.
    const re = /^\(\?([aiLmsux]+)\)/;
    for (;;) {
      const m = re.exec(this.p.slice(this.i));
      if (!m) return;
      for (const f of m[1]!) {
        if (f === 'i') this.ignoreCase = true;
        else if (f === 'm') this.multiline = true;
        else if (f === 's') this.dotAll = true;
        else if (f === 'x') this.verbose = true;
        else if (f === 'a') this.ascii = true;
        else if (f === 'L') this.fail('bad inline flags: cannot use \'L\' flag with a str pattern');
      }
      this.i += m[0].length;
    }
  }

  private afterQuantifier(): void {
    const n = this.p[this.i];
    if (n === '?') {
      this.out += '?';
      this.i++;
    } else if (n === '+') {
      // Possessive: X*+ is (?>X*).
      this.i++;
      this.atomicWrap(this.lastStart);
    }
  }

  private brace(start: number): void {
    const m = /^\{(\d*)(,?)(\d*)\}/.exec(this.p.slice(this.i));
    if (m && (m[1] !== '' || (m[2] === ',' && m[3] !== ''))) {
      const lo = m[1] === '' ? '0' : m[1];
      if (m[2] && m[3] !== '' && Number(m[3]) < Number(lo)) this.fail('min repeat greater than max repeat');
      this.quantifier(m[2] ? `{${lo},${m[3]}}` : `{${lo}}`);
      this.i += m[0].length;
      this.afterQuantifier();
      return;
    }
    this.out += '\\{';
    this.i++;
    this.mark('atom', start);
  }

  private group(): void {
    const rest = this.p.slice(this.i);
    const start = this.out.length;
    if (rest.startsWith('(?#')) {
      // A comment: what follows applies to the item before it.
      const end = this.p.indexOf(')', this.i);
      if (end < 0) this.fail('missing ), unterminated comment');
      this.i = end + 1;
      return;
    }
    this.last = 'none';
    if (rest.startsWith('(?P<')) {
      const m = /^\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
      if (!m) this.fail('bad character in group name');
      this.groups++;
      this.caps.push({ pos: this.out.length, py: this.groups });
      this.out += `(?<${m[1]}>`;
      this.i += m[0].length;
      this.stack.push({ start, look: false, num: this.groups, name: m[1] });
      return;
    }
    if (rest.startsWith('(?P=')) {
      const m = /^\(\?P=([A-Za-z_][A-Za-z0-9_]*)\)/.exec(rest);
      if (!m) this.fail('bad character in group name');
      if (!this.closedNames.has(m[1]!)) {
        this.fail(this.stack.some((g) => g.name === m[1]) ? 'cannot refer to an open group' : `unknown group name '${m[1]}'`);
      }
      this.out += `\\k<${m[1]}>`;
      this.i += m[0].length;
      this.mark('atom', start);
      return;
    }
    for (const pre of ['(?:', '(?=', '(?!', '(?<=', '(?<!']) {
      if (rest.startsWith(pre)) {
        this.out += pre;
        this.i += pre.length;
        this.stack.push({ start, look: pre !== '(?:' });
        return;
      }
    }
    if (rest.startsWith('(?>')) {
      const k = ++this.atomics;
      this.out += `(?:(?=(?<__pyatomic${k}>`;
      this.caps.push({ pos: start + 6 });
      this.i += 3;
      this.stack.push({ start, look: false, atomic: k });
      return;
    }
    if (rest.startsWith('(?')) {
      if (/^\(\?[aiLmsux]+\)/.test(rest)) this.fail('global flags not at the start of the expression');
      this.fail('unsupported group construct');
    }
    this.groups++;
    this.caps.push({ pos: this.out.length, py: this.groups });
    this.out += '(';
    this.i++;
    this.stack.push({ start, look: false, num: this.groups });
  }

  /** Escape outside a character class. */
  private escapeOutside(): string {
    const p = this.p;
    const c = p[this.i + 1];
    if (c === undefined) this.fail('bad escape (end of pattern)');
    const w = this.w;
    const simple: Record<string, string> = {
      d: this.ascii ? '[0-9]' : '\\p{Nd}',
      D: this.ascii ? '[^0-9]' : '\\P{Nd}',
      w: `[${w}]`,
      W: `[^${w}]`,
      s: this.ascii ? '[\\t-\\r ]' : `[${PY_WS_CLASS}]`,
      S: this.ascii ? '[^\\t-\\r ]' : `[^${PY_WS_CLASS}]`,
      b: `(?:(?<=[${w}])(?![${w}])|(?<![${w}])(?=[${w}]))`,
      // Python's \B never matches in an empty string.
      B: `(?:(?<=[${w}])(?=[${w}])|(?<![${w}])(?![${w}])(?:(?<=[\\s\\S])|(?=[\\s\\S])))`,
      A: '(?<![\\s\\S])',
      Z: '(?![\\s\\S])',
    };
    if (c in simple) {
      this.i += 2;
      return simple[c]!;
    }
    if (/[1-9]/.test(c)) {
      // Backreference (one or two digits) unless it is a three-digit octal escape.
      const m = /^\\([0-7]{3})/.exec(p.slice(this.i));
      if (m && parseInt(m[1]!, 8) <= 0o377) {
        this.i += 4;
        return literal(String.fromCodePoint(parseInt(m[1]!, 8)));
      }
      const r = /^\\(\d\d?)/.exec(p.slice(this.i))!;
      const n = parseInt(r[1]!, 10);
      if (n > this.groups) this.fail('invalid group reference');
      if (this.stack.some((g) => g.num === n)) this.fail('cannot refer to an open group');
      this.i += r[0].length;
      // Resolved to the JavaScript group number at the end (see run()).
      return `(?:\\\u0001${n}\u0001)`;
    }
    const ch = this.commonEscape();
    return this.ignoreCase && TURKISH_I.includes(ch) ? `[${TURKISH_I}]` : literal(ch);
  }

  /** Escapes with the same meaning in and out of classes; returns the literal character. */
  private commonEscape(): string {
    const p = this.p;
    const c = p[this.i + 1]!;
    const map: Record<string, string> = { a: '\x07', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };
    if (c in map) {
      this.i += 2;
      return map[c]!;
    }
    if (c === '0') {
      const m = /^\\(0[0-7]{0,2})/.exec(p.slice(this.i))!;
      this.i += m[0].length;
      return String.fromCodePoint(parseInt(m[1]!, 8));
    }
    if (c === 'x' || c === 'u' || c === 'U') {
      const len = c === 'x' ? 2 : c === 'u' ? 4 : 8;
      const hex = p.slice(this.i + 2, this.i + 2 + len);
      if (hex.length !== len || !/^[0-9a-fA-F]+$/.test(hex)) this.fail(`incomplete escape \\${c}`);
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff) this.fail(`bad escape \\${c}`);
      this.i += 2 + len;
      return String.fromCodePoint(cp);
    }
    if (c === 'N') this.fail('named Unicode escapes are not supported');
    if (/[A-Za-z0-9]/.test(c)) this.fail(`bad escape \\${c}`);
    const cp = p.codePointAt(this.i + 1)!;
    const ch = String.fromCodePoint(cp);
    this.i += 1 + ch.length;
    return ch;
  }

  private charClass(): string {
    const p = this.p;
    this.i++; // [
    let negate = false;
    if (p[this.i] === '^') {
      negate = true;
      this.i++;
    }
    const parts: ClassParts = { items: '', negated: [] };
    let first = true;
    type Item = { kind: 'char'; ch: string } | { kind: 'set' };
    let prev: Item | null = null;
    let coversI = false;
    const w = this.w;
    for (;;) {
      if (this.i >= p.length) this.fail('unterminated character set');
      const c = p[this.i]!;
      if (c === ']' && !first) {
        this.i++;
        break;
      }
      first = false;
      // Range "a-b"
      if (c === '-' && prev && prev.kind === 'char' && this.i + 1 < p.length && p[this.i + 1] !== ']') {
        this.i++;
        const before = parts.items.length;
        const hi = this.classAtom(parts, w);
        if (hi.kind !== 'char') this.fail('bad character range');
        const lo = prev.ch.codePointAt(0)!;
        const hiCp = hi.ch.codePointAt(0)!;
        if (lo > hiCp) this.fail('bad character range');
        parts.items = `${parts.items.slice(0, before)}-${classLiteral(hi.ch)}`;
        for (const ch of TURKISH_I) if (ch.codePointAt(0)! >= lo && ch.codePointAt(0)! <= hiCp) coversI = true;
        prev = null;
        continue;
      }
      prev = this.classAtom(parts, w);
      if (prev.kind === 'char' && TURKISH_I.includes(prev.ch)) coversI = true;
    }
    if (this.ignoreCase && coversI) parts.items += TURKISH_I;
    if (parts.negated.length === 0) {
      if (parts.items === '') return negate ? '[\\s\\S]' : '[]';
      return `[${negate ? '^' : ''}${parts.items}]`;
    }
    // A negated shorthand (\W, \S, \D) inside a set: express as a union / intersection.
    if (!negate) {
      const alts = parts.negated.slice();
      if (parts.items) alts.unshift(`[${parts.items}]`);
      return `(?:${alts.join('|')})`;
    }
    const looks = parts.negated.map((n) => `(?!${n})`).join('');
    return `(?:${parts.items ? `(?![${parts.items}])` : ''}${looks}[\\s\\S])`;
  }

  private classAtom(parts: ClassParts, w: string): { kind: 'char'; ch: string } | { kind: 'set' } {
    const p = this.p;
    const c = p[this.i]!;
    if (c === '\\') {
      const e = p[this.i + 1];
      if (e === undefined) this.fail('bad escape (end of pattern)');
      const ws = this.ascii ? '\\t-\\r ' : PY_WS_CLASS;
      const sets: Record<string, () => void> = {
        d: () => (parts.items += this.ascii ? '0-9' : '\\p{Nd}'),
        w: () => (parts.items += w),
        s: () => (parts.items += ws),
        D: () => parts.negated.push(this.ascii ? '[^0-9]' : '\\P{Nd}'),
        W: () => parts.negated.push(`[^${w}]`),
        S: () => parts.negated.push(`[^${ws}]`),
      };
      if (e in sets) {
        sets[e]!();
        this.i += 2;
        return { kind: 'set' };
      }
      if (e === 'b') {
        this.i += 2;
        parts.items += '\\x08';
        return { kind: 'char', ch: '\b' };
      }
      if (/[1-9]/.test(e)) {
        const m = /^\\([0-7]{1,3})/.exec(p.slice(this.i));
        if (!m) this.fail(`bad escape \\${e}`);
        this.i += m[0].length;
        const ch = String.fromCodePoint(parseInt(m[1]!, 8));
        parts.items += classLiteral(ch);
        return { kind: 'char', ch };
      }
      const ch = this.commonEscape();
      parts.items += classLiteral(ch);
      return { kind: 'char', ch };
    }
    const cp = p.codePointAt(this.i)!;
    const ch = String.fromCodePoint(cp);
    this.i += ch.length;
    parts.items += classLiteral(ch);
    return { kind: 'char', ch };
  }
}

function hexEsc(ch: string): string {
  return `\\u{${ch.codePointAt(0)!.toString(16)}}`;
}

/** A literal character outside a class, valid under the `u` flag. */
function literal(ch: string): string {
  if ('^$\\.*+?()[]{}|/'.includes(ch)) return `\\${ch}`;
  const cp = ch.codePointAt(0)!;
  if (cp < 0x20 || cp === 0x7f || (cp >= 0xd800 && cp <= 0xdfff)) return hexEsc(ch);
  return ch;
}

/** A literal character inside a class, valid under the `u` flag. */
function classLiteral(ch: string): string {
  if ('^$\\.*+?()[]{}|/-'.includes(ch)) return `\\${ch}`;
  const cp = ch.codePointAt(0)!;
  if (cp < 0x20 || cp === 0x7f || (cp >= 0xd800 && cp <= 0xdfff)) return hexEsc(ch);
  return ch;
}
