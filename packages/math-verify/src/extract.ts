// Answer extraction: the prioritised regexes of math-verify's LatexExtractionConfig and
// ExprExtractionConfig, and conversion of each match into an expression tree.

import { type Node, MathError, MathTimeLimitError, int, mul, negNumber, numberFromString, pow, rational, NEG_ONE, isNumber } from './nodes.js';
import { parseLatex } from './latex.js';
import { normalizeLatex, type BoxedMode } from './normalize.js';

export type Target = 'latex' | 'expr';
export type Extracted = Node | string;

/** Case-insensitive literal without inline flags: "answer" -> "[aA][nN]...". */
function ci(word: string): string {
  return word
    .split('')
    .map((c) => (/[a-zA-Z]/.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c === ' ' ? ' ' : c))
    .join('');
}

const DOT = '[^\\n]';

// Python's `$` (no MULTILINE) also matches before a final newline.
const END = '(?=\\n?$(?![\\s\\S]))';

// ---------------------------------------------------------------------------------------------
// Expression (plain text) patterns

function exprRegexes(): [RegExp, number][] {
  const number =
    '(?<!\\d)(?:' +
    '(?<integer1>-?[1-9]\\d{0,2}(?:[ ,]\\d{3})+)(?<decimal1>\\.\\d+)?|' +
    '(?<integer2>-?\\d+)(?<decimal2>[.,]\\d+)|' +
    '(?<decimal3>\\.\\d+)|' +
    '(?<integer3>-?\\d+)' +
    ')(?<percent>\\s*(?:%|[Pp]ercent|\\s*[Pp]ercentage|\\s*[Pp]ct))?';
  const ops = '\\+\\-\\*\\×\\/\\^\\(\\)\\÷';
  const allChars = `[\\d\\.\\s${ops}]`;
  const expr = `(?<expr>-?\\(?-?\\d${allChars}*[${ops}]${allChars}+\\)?)`;
  const currency = '$€£¥₹₽₪₩₫฿₡₢₣₤₥₦₧₨₩₪₫₭₮₯₰₱₲₳₴₵₶₷₸₹₺₻₼₽₾₿'.replace(/[$]/g, '\\$');
  const prefix = '(?:^|\\s|\\=)(?:\\*\\*)?';
  const suffix = `(?:\\*\\*)?(?:\\.|,|:|\\s|\\)|\\$|${END})`;
  const exprAnch = `(?:${prefix}${expr}${suffix})`;
  const numAnch = `(?:${prefix}[${currency}]?${number})`;
  const exprOrNum = `(?:${exprAnch}|${numAnch})`;
  const list: [string, number][] = [
    // Python's "." (no DOTALL) excludes only "\n"; JavaScript's also excludes "\r", U+2028, U+2029
    [`${ci('final answer is')}\\:?\\s*${exprOrNum}\\.?\\s?I hope`, 0],
    [`(?:${ci('final answer')}${DOT}{0,100}?)\\s+is\\:?${exprOrNum}`, 50],
    [`${ci('answer')}:(?:${DOT}{0,100}=\\s*|${DOT}{0,50}?)${exprOrNum}(?!\\s*=)`, 100],
    [`${ci('answer')}(?:${DOT}{0,100}=\\s*|${DOT}{0,50}?)${exprOrNum}(?!\\s*=)`, 200],
    [exprAnch, 300],
    [numAnch, 300],
  ];
  return list.map(([p, prio]) => [new RegExp(p, 'g'), prio]);
}

// ---------------------------------------------------------------------------------------------
// LaTeX patterns

function latexEnv(prefix: string, context: 'boxed' | 'plain'): string {
  const percent = `(?<${prefix}percent>(?:\\\\?%|[Pp]ercent|[Pp]ercentage|[Pp]ct))`;
  let displayDollar = '(?:[^$]|\\$(?!\\$))';
  let displayBracket = '(?:[^\\\\]|\\\\(?!\\]))';
  let inlineDollar = '(?:\\\\[$]|[^\\n$])';
  let inlineParen = '(?:[^\\\\\\n]|\\\\(?!\\)))';
  let inlineBracket = '[^\\n\\]\\[]';
  if (context === 'boxed') {
    const wrap = (c: string) => `${c}*?\\\\boxed\\{${c}+?\\}${c}*?`;
    displayDollar = wrap(displayDollar);
    displayBracket = wrap(displayBracket);
    inlineDollar = wrap(inlineDollar);
    inlineParen = wrap(inlineParen);
    inlineBracket = wrap(inlineBracket);
  } else {
    displayDollar += '+?';
    displayBracket += '+?';
    inlineDollar += '+?';
    inlineParen += '+?';
    inlineBracket += '+?';
  }
  const patterns = [
    `(?<!\\\\)\\$\\$(?<${prefix}latexDisplayDollar>${displayDollar})(?<!\\\\)\\$\\$`,
    `(?<!\\\\)\\\\\\[(?<${prefix}latexDisplayBracket>${displayBracket})(?<!\\\\)\\\\\\]`,
    `(?<!\\\\|\\d)\\$(?<${prefix}latexInlineDollar>${inlineDollar})(?<!\\\\)\\$`,
    `(?<!\\\\)\\\\\\((?<${prefix}latexInlineParenthesis>${inlineParen})(?<!\\\\)\\\\\\)`,
    `\\s\\[(?<${prefix}latexInlineBracket>${inlineBracket})\\]\\s`,
  ];
  if (context === 'plain') {
    const simple = '-?\\d+(?:[.,]\\d+)?';
    patterns.push(`(?<${prefix}latexFraction>-?\\\\frac\\{${simple}\\}\\{${simple}\\})`);
  }
  return `(?:(?:${patterns.join('|')})\\s*${percent}?)`;
}

function latexRegexes(): [RegExp, number][] {
  const first = latexEnv('first_', 'plain');
  let next = '';
  for (let i = 1; i <= 5; i++) next += `(?:\\s*(?:,?and|,?or|,)\\s*${latexEnv(`next${i}_`, 'plain')})?`;
  const envs = `(?:${first}${next})`;
  const list: [string, number][] = [
    [`${ci('final answer is')}\\:?\\s*${envs}\\.?\\s?I hope`, 0],
    [`(?:${ci('final answer')}.{0,100}?)\\s+is\\:?\\s*${envs}`, 50],
    [`${ci('answer')}:.{0,50}?${envs}`, 100],
    [`${ci('answer')}.{0,50}?${envs}`, 200],
    [envs, 300],
  ];
  let boxed = latexEnv('first_', 'boxed');
  for (let i = 1; i <= 5; i++) boxed += `\\s*(?:\\s*(?:,?and|,?or|,)\\s*${latexEnv(`next${i}_`, 'boxed')})?`;
  list.push([boxed, 50]);
  list.push(['(?<first_latexBoxed>\\\\boxed\\{.+\\})', 50]);
  return list.map(([p, prio]) => [new RegExp(p, 'gs'), prio]);
}

let LATEX: [RegExp, number][] | null = null;
let EXPR: [RegExp, number][] | null = null;
function regexesFor(t: Target): [RegExp, number][] {
  if (t === 'latex') return (LATEX ??= latexRegexes());
  return (EXPR ??= exprRegexes());
}

// ---------------------------------------------------------------------------------------------
// Conversion of matches

const COMPLEX_RE = /\\mathbb\{C\}|\\i\b|\bi\b|\\text\{i\}|\\mathrm\{i\}|\\imath\b|\\det|\\operatorname\{tr\}|\\operatorname\{rank\}|\\text\{rank\}|\\arg\{|\\Re\{|\\Im\{|\\operatorname\{Re\}|\\operatorname\{Im\}|\\text\{Re\}|\\text\{Im\}/;
export function shouldTreatAsComplex(latex: string): boolean {
  return COMPLEX_RE.test(latex);
}

const EQ_SPLIT = /(?<!\\|<|!|>)=/;

function getLastEq(latex: string): string {
  if (!latex.includes(',') && !latex.includes(';')) {
    const parts = latex.split(EQ_SPLIT);
    if (parts.length > 2) return parts[parts.length - 1]!;
  }
  return latex;
}

export function parseLatexWithFallback(latex: string): Node {
  try {
    return parseLatex(latex);
  } catch (e) {
    const last = getLastEq(latex);
    if (last !== latex) return parseLatex(last);
    throw e;
  }
}

const pct = (n: Node): Node => mul(n, rational(1n, 100n));

function extractLatex(m: RegExpExecArray): [Node | null, string] {
  const groups = m.groups ?? {};
  const found: [string, string][] = [];
  const pick = (prefix: string) => {
    for (const [name, val] of Object.entries(groups)) if (name.startsWith(prefix) && val) return [val, name] as [string, string];
    return null;
  };
  const f = pick('first_latex');
  if (f) found.push(f);
  for (let i = 1; i <= 5; i++) {
    const g = pick(`next${i}_latex`);
    if (g) found.push(g);
  }
  const exprs: (Node | null)[] = [];
  const strs: string[] = [];
  for (const [latex, name] of found) {
    const prefix = name.split('_')[0]!;
    const groupName = name.split('_')[1];
    const isPct = !!groups[`${prefix}_percent`];
    const boxed: BoxedMode = groupName === 'latexBoxed' ? 'last' : 'all';
    const norm = normalizeLatex(latex, { boxed, basicLatex: true, units: true, malformedOperators: true, nits: true });
    strs.push(norm);
    try {
      let parsed = parseLatexWithFallback(norm);
      if (isPct) parsed = pct(parsed);
      exprs.push(parsed);
    } catch {
      exprs.push(null);
    }
  }
  if (exprs.length === 0) return [null, ''];
  if (exprs.length > 1 && exprs.every((e) => e !== null)) {
    const all: Node[] = [];
    for (const e of exprs as Node[]) {
      if (e.t === 'FiniteSet') all.push(...e.args);
      else all.push(e);
    }
    return [{ t: 'FiniteSet', args: all }, strs.join(' and ')];
  }
  return [exprs[0] ?? null, strs[0]!];
}

function extractExpr(m: RegExpExecArray): [Node | null, string] {
  const groups = m.groups ?? {};
  const expr = groups.expr ?? '';
  let integer = '';
  let decimal = '';
  for (const [name, val] of Object.entries(groups)) {
    if (!integer && name.startsWith('integer') && val) integer = val;
    if (!decimal && name.startsWith('decimal') && val) decimal = val;
  }
  const isPct = !!groups.percent;
  if (integer || decimal) {
    integer = integer.replace(/[, ]/g, '');
    // str.lstrip('0'): a leading minus sign stops the stripping ("-007" stays "-007")
    integer = integer.replace(/^0+/, '');
    if (integer.length === 0) integer = '0';
    decimal = decimal.replace(/,/g, '.');
    const text = `${integer}${decimal}`;
    let n: Node;
    try {
      n = numberFromString(text);
    } catch {
      return [null, text];
    }
    if (isPct) n = pct(n);
    return [n, text];
  }
  if (expr) {
    try {
      return [parsePyExpr(expr.replace(/\n/g, ' ').replace(/\^/g, '**')), expr];
    } catch {
      /* unparsable */
    }
  }
  return [null, expr];
}

// ---------------------------------------------------------------------------------------------
// Python arithmetic (sympy parse_expr with evaluate=False) for the plain-expression matches

export function parsePyExpr(src: string): Node {
  const toks: string[] = [];
  const re = /\s*(\*\*|\d+\.\d*|\.\d+|\d+|[-+*/()]|\S)/y;
  let m: RegExpExecArray | null;
  let pos = 0;
  while (pos < src.length) {
    re.lastIndex = pos;
    m = re.exec(src);
    if (!m) {
      if (/^\s*$/.test(src.slice(pos))) break;
      throw new MathError('bad expression');
    }
    toks.push(m[1]!);
    pos = re.lastIndex;
  }
  let i = 0;
  const peek = () => toks[i];
  const flat = (kind: 'Add' | 'Mul', a: Node, b: Node): Node => {
    const args = a.t === kind && (a as { flatOk?: boolean }).flatOk !== false ? [...(a as { args: Node[] }).args, b] : [a, b];
    return { t: kind, args } as Node;
  };
  const parseSum = (): Node => {
    let lh = parseTerm();
    while (peek() === '+' || peek() === '-') {
      const op = toks[i++];
      const rh = parseTerm();
      lh = flat('Add', lh, op === '+' ? rh : mul(NEG_ONE, rh));
    }
    return lh;
  };
  const parseTerm = (): Node => {
    let lh = parseUnary();
    while (peek() === '*' || peek() === '/') {
      const op = toks[i++];
      const rh = parseUnary();
      lh = op === '*' ? flat('Mul', lh, rh) : flat('Mul', lh, pow(rh, NEG_ONE));
    }
    return lh;
  };
  const parseUnary = (): Node => {
    if (peek() === '-') {
      i++;
      const inner = parseUnary();
      if (isNumber(inner)) return negNumber(inner);
      return mul(NEG_ONE, inner);
    }
    if (peek() === '+') {
      i++;
      return parseUnary();
    }
    return parsePower();
  };
  const parsePower = (): Node => {
    const base = parseAtom();
    if (peek() === '**') {
      i++;
      const e = parseUnary();
      return pow(base, e);
    }
    return base;
  };
  const parseAtom = (): Node => {
    const t = toks[i++];
    if (t === undefined) throw new MathError('unexpected end');
    if (t === '(') {
      const e = parseSum();
      if (toks[i++] !== ')') throw new MathError('expected )');
      return e;
    }
    if (/^\d+$/.test(t)) return int(BigInt(t));
    if (/^(\d+\.\d*|\.\d+)$/.test(t)) return numberFromString(t.endsWith('.') ? t + '0' : t);
    throw new MathError(`unexpected ${t}`);
  };
  const r = parseSum();
  if (i !== toks.length) throw new MathError('trailing input');
  return r;
}

// ---------------------------------------------------------------------------------------------
// parse(): priorities, rightmost match first, first successful conversion wins

export function parse(text: string, targets: Target[], deadline = Infinity): Extracted[] {
  const all: { re: RegExp; target: Target; prio: number; order: number }[] = [];
  let order = 0;
  for (const t of targets) for (const [re, prio] of regexesFor(t)) all.push({ re, target: t, prio, order: order++ });
  all.sort((a, b) => a.prio - b.prio || a.order - b.order);
  const out: Extracted[] = [];
  const fallbacks: string[] = [];
  let k = 0;
  while (k < all.length) {
    const prio = all[k]!.prio;
    const group = [];
    while (k < all.length && all[k]!.prio === prio) group.push(all[k++]!);
    const matches: { m: RegExpExecArray; target: Target; seq: number }[] = [];
    let seq = 0;
    for (const p of group) {
      p.re.lastIndex = 0;
      for (const m of text.matchAll(p.re)) {
        if (Date.now() > deadline) throw new MathTimeLimitError('parsing time limit exceeded');
        matches.push({ m: m as RegExpExecArray, target: p.target, seq: seq++ });
        if (m[0].length === 0) break;
      }
    }
    matches.sort((a, b) => {
      const ea = a.m.index + a.m[0].length;
      const eb = b.m.index + b.m[0].length;
      return eb - ea || a.m.index - b.m.index || a.seq - b.seq;
    });
    let got = false;
    for (const { m, target } of matches) {
      if (Date.now() > deadline) throw new MathTimeLimitError('parsing time limit exceeded');
      const [value, str] = target === 'latex' ? extractLatex(m) : extractExpr(m);
      if (str) fallbacks.push(str);
      if (value !== null) {
        out.push(value);
        got = true;
        break;
      }
    }
    if (got) break;
  }
  if (fallbacks.length > 0) out.push(fallbacks[0]!);
  return out;
}

