// LaTeX -> expression tree, following the grammar and conversion rules of latex2sympy2_extended
// (the parser math-verify uses): unevaluated Add/Mul/Pow, implicit multiplication, mixed
// fractions, sets, intervals, tuples, relations, matrices, lower-cased symbols.

import {
  type Node,
  type RelOp,
  MathError,
  add,
  cnst,
  freeSymbols,
  int,
  isNumber,
  mul,
  negNumber,
  numberFromString,
  pow,
  rational,
  HALF,
  NEG_ONE,
  numApprox,
} from './nodes.js';

type Tok = { k: string; v: string; pos: number };

const GREEK = new Set([
  'alpha', 'beta', 'gamma', 'Gamma', 'delta', 'Delta', 'epsilon', 'varepsilon', 'zeta', 'eta', 'theta', 'Theta',
  'vartheta', 'iota', 'kappa', 'lambda', 'Lambda', 'mu', 'nu', 'xi', 'Xi', 'omicron', 'pi', 'Pi', 'varpi', 'rho',
  'varrho', 'sigma', 'Sigma', 'varsigma', 'tau', 'upsilon', 'Upsilon', 'phi', 'Phi', 'varphi', 'chi', 'psi', 'Psi',
  'omega', 'Omega',
]);
const GREEK_UNICODE: Record<string, string> = {
  'α': 'alpha', 'β': 'beta', 'γ': 'gamma', 'Γ': 'Gamma', 'δ': 'delta', 'Δ': 'Delta', 'ε': 'epsilon', 'ϵ': 'varepsilon',
  'ζ': 'zeta', 'η': 'eta', 'θ': 'theta', 'Θ': 'Theta', 'ϑ': 'vartheta', 'ι': 'iota', 'κ': 'kappa', 'λ': 'lambda',
  'Λ': 'Lambda', 'μ': 'mu', 'ν': 'nu', 'ξ': 'xi', 'Ξ': 'Xi', 'ο': 'omicron', 'π': 'pi', 'Π': 'Pi', 'ϖ': 'varpi',
  'ρ': 'rho', 'ϱ': 'varrho', 'σ': 'sigma', 'Σ': 'Sigma', 'ς': 'varsigma', 'τ': 'tau', 'υ': 'upsilon', 'Υ': 'Upsilon',
  'φ': 'phi', 'Φ': 'Phi', 'ϕ': 'varphi', 'χ': 'chi', 'ψ': 'psi', 'Ψ': 'Psi', 'ω': 'omega', 'Ω': 'Omega',
};
const FUNCS_SINGLE: Record<string, string> = {
  log: 'log', ln: 'ln', lg: 'log', exp: 'exp', sin: 'sin', cos: 'cos', tan: 'tan', csc: 'csc', sec: 'sec', cot: 'cot',
  arcsin: 'asin', arccos: 'acos', arctan: 'atan', arccsc: 'acsc', arcsec: 'asec', arccot: 'acot', sinh: 'sinh',
  cosh: 'cosh', tanh: 'tanh', arsinh: 'asinh', arcosh: 'acosh', artanh: 'atanh', arcsinh: 'asinh', arccosh: 'acosh',
  arctanh: 'atanh', floor: 'floor', ceil: 'ceiling',
};
const FUNCS_MULTI: Record<string, string> = { gcd: 'gcd', lcm: 'lcm', max: 'Max', min: 'Min' };
const SPACING = new Set([',', ';', ':', '!', ' ', 'quad', 'qquad', 'space', 'enspace', 'thinspace', 'medspace', 'thickspace', 'negthinspace']);
const IGNORED_CMDS = new Set(['displaystyle', 'textstyle', 'scriptstyle', 'limits', 'nolimits', 'left', 'right', 'mleft', 'mright', 'big', 'Big', 'bigg', 'Bigg', 'bigl', 'bigr', 'Bigl', 'Bigr']);
const ACCENTS = new Set([
  'acute', 'bar', 'overline', 'breve', 'check', 'widecheck', 'dot', 'ddot', 'grave', 'hat', 'tilde', 'widetilde', 'vec',
  'overrightarrow', 'bm', 'boldsymbol', 'text', 'textit', 'textbf', 'textnormal', 'mathbb', 'mathbin', 'mathbf', 'mathcal',
  'mathclap', 'mathclose', 'mathellipsis', 'mathfrak', 'mathinner', 'mathit', 'mathnormal', 'mathop', 'mathopen', 'mathord',
  'mathpunct', 'mathrel', 'mathring', 'mathrlap', 'mathrm', 'mathscr', 'mathsf', 'mathsterling', 'mathtt', 'mbox', 'operatorname',
]);
/** Symbol-like commands of the grammar's OTHER_SYMBOL token. */
const OTHER_SYMBOLS = new Set([
  'Bbbk', 'wp', 'nabla', 'bigstar', 'angle', 'nexists', 'diagdown', 'measuredangle', 'eth', 'diagup', 'sphericalangle',
  'clubsuit', 'varnothing', 'Diamond', 'complement', 'diamondsuit', 'imath', 'Finv', 'triangledown', 'heartsuit', 'jmath',
  'Game', 'triangle', 'spadesuit', 'ell', 'hbar', 'vartriangle', 'hslash', 'blacklozenge', 'lozenge', 'blacksquare', 'mho',
  'blacktriangle', 'sharp', 'prime', 'Im', 'flat', 'square', 'backprime', 'Re', 'natural', 'surd', 'circledS',
]);

const REL_TOKENS: Record<string, RelOp | 'Approx' | 'In'> = {
  '=': 'Eq', '==': 'Eq', '\\equiv': 'Eq', '<': 'Lt', '\\lt': 'Lt', '>': 'Gt', '\\gt': 'Gt', '\\leq': 'Le', '\\le': 'Le',
  '\\leqslant': 'Le', '≤': 'Le', '<=': 'Le', '\\geq': 'Ge', '\\ge': 'Ge', '\\geqslant': 'Ge', '≥': 'Ge', '>=': 'Ge',
  '\\neq': 'Ne', '\\ne': 'Ne', '!=': 'Ne', '≠': 'Ne', '\\approx': 'Approx', '≈': 'Approx', '~=': 'Approx', '\\in': 'In',
};

const OTHER_CMDS = [
  ...OTHER_SYMBOLS,
  'frac', 'dfrac', 'tfrac', 'cfrac', 'sqrt', 'binom', 'dbinom', 'tbinom', 'choose', 'cdot', 'times', 'div', 'pm', 'mp', 'infty',
  'circ', 'degree', 'le', 'leq', 'leqslant', 'ge', 'geq', 'geqslant', 'ne', 'neq', 'lt', 'gt', 'approx', 'equiv', 'in', 'notin',
  'cup', 'cap', 'setminus', 'backslash', 'emptyset', 'varnothing', 'varemptyset', 'boxed', 'fbox', 'phantom', 'lfloor',
  'rfloor', 'lceil', 'rceil', 'lvert', 'rvert', 'vert', 'lbrace', 'rbrace', 'lbrack', 'rbrack', 'lgroup', 'rgroup', 'mod',
  'bmod', 'ast', 'cdots', 'ldots', 'dots', 'to', 'imath', 'jmath', 'partial', 'not', 'begin', 'end', 'operatorname',
  'exponentialE', 'sum', 'prod', 'int', 'lim',
];
let KNOWN: Set<string> | null = null;
function knownCommands(): Set<string> {
  KNOWN ??= new Set([...GREEK, ...Object.keys(FUNCS_SINGLE), ...Object.keys(FUNCS_MULTI), ...ACCENTS, ...SPACING, ...IGNORED_CMDS, ...OTHER_CMDS]);
  return KNOWN;
}

/** The lexer matches the longest known command: "\\quadx" is "\\quad" followed by "x". */
function splitCommand(name: string): string {
  const known = knownCommands();
  if (known.has(name)) return name;
  for (let k = name.length - 1; k > 0; k--) if (known.has(name.slice(0, k))) return name.slice(0, k);
  return name;
}

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i]!;
    // the grammar skips only these four whitespace characters; anything else is a lexer error
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
      i++;
      continue;
    }
    const pos = i;
    if (c === '\\') {
      const m = /^\\([a-zA-Z]+)/.exec(src.slice(i, i + 40));
      if (m) {
        let name = splitCommand(m[1]!);
        i += name.length + 1;
        if (SPACING.has(name) || IGNORED_CMDS.has(name)) continue;
        if (name === 'begin' || name === 'end') {
          const em = /^\s*\{([a-zA-Z*]+)\}/.exec(src.slice(i));
          if (!em) throw new MathError('bad environment');
          i += em[0].length;
          if (name === 'begin' && em[1] === 'array') {
            const spec = /^\s*\{[^}]*\}/.exec(src.slice(i));
            if (spec) i += spec[0].length;
          }
          out.push({ k: name, v: em[1]!, pos });
          continue;
        }
        if (ACCENTS.has(name)) {
          // ACCENT token: command, at most one whitespace character, then '{' ... up to the first '}'
          // that is not written '\\}' (no nesting, as the grammar's lexer rule)
          let j = i;
          if (j < n && /[ \t\r\n]/.test(src[j]!)) j++;
          if (src[j] === '{') {
            let k = j + 1;
            while (k < n) {
              if (src[k] === '\\' && src[k + 1] === '}') k += 2;
              else if (src[k] === '}') break;
              else k++;
            }
            if (k >= n) throw new MathError('unbalanced braces');
            out.push({ k: 'accent', v: name + '\u0000' + src.slice(j + 1, k), pos });
            i = k + 1;
            continue;
          }
          throw new MathError(`\\${name} needs a braced argument`);
        }
        if (OTHER_SYMBOLS.has(name)) {
          if (src[i] === ' ') i++;
          out.push({ k: 'other', v: name, pos });
          continue;
        }
        if (name === 'not' && src.startsWith('\\equiv', i)) {
          i += 6;
          name = 'neq';
        }
        out.push({ k: 'cmd', v: '\\' + name, pos });
        continue;
      }
      const d = src[i + 1];
      if (d === undefined) throw new MathError('trailing backslash');
      if (d === ',' || d === ';' || d === ':' || d === '!' || d === ' ') {
        i += 2;
        continue;
      }
      if (d === '\\') {
        out.push({ k: 'rowsep', v: '\\\\', pos });
        i += 2;
        continue;
      }
      out.push({ k: 'cmd', v: '\\' + d, pos });
      i += 2;
      continue;
    }
    const num = /^(\d+(?:\.\d+)?|\.\d+)/.exec(src.slice(i, i + 400));
    if (num) {
      i += num[0].length;
      const rest = src.slice(i);
      const en = /^E([+-]?\d+)/.exec(rest);
      if (en) {
        out.push({ k: 'num', v: num[0] + 'e' + en[1], pos });
        i += en[0].length;
        continue;
      }
      const pm = /^\s?(\\%|%)/.exec(rest);
      if (pm) {
        out.push({ k: 'pct', v: num[0], pos });
        i += pm[0].length;
        continue;
      }
      out.push({ k: 'num', v: num[0], pos });
      continue;
    }
    const two = src.slice(i, i + 2);
    if (two === '<=' || two === '>=' || two === '!=' || two === '==' || two === '~=') {
      out.push({ k: 'op', v: two, pos });
      i += 2;
      continue;
    }
    if (c === 'd') {
      // DIFFERENTIAL: 'd' + optional whitespace + a letter or a command (longest match wins: "dx", "odd" -> o, dd)
      const dm = /^d[ \t\r\n]*(?:([a-zA-Z])|\\([a-zA-Z]+))/.exec(src.slice(i, i + 64));
      if (dm) {
        out.push({ k: 'diff', v: 'd' + (dm[1] ?? dm[2]!), pos });
        i += dm[0].length;
        continue;
      }
    }
    if (/[a-zA-Z]/.test(c)) {
      out.push({ k: 'letter', v: c, pos });
      i++;
      continue;
    }
    if (GREEK_UNICODE[c]) {
      out.push({ k: 'cmd', v: '\\' + GREEK_UNICODE[c], pos });
      i++;
      continue;
    }
    // unicode operators the grammar's lexer knows
    const uni: Record<string, string> = { '×': '\\times', '÷': '\\div', '⋅': '\\cdot', '∗': '\\cdot', '±': '\\pm', '∓': '\\pm', '∪': '\\cup', '∩': '\\cap', '∉': '\\notin', '∖': '\\setminus', '∅': '\\emptyset', '−': '-', '∸': '-', '∕': '/' };
    if (uni[c]) {
      out.push(uni[c] === '-' ? { k: 'op', v: '-', pos } : { k: 'cmd', v: uni[c]!, pos });
      i++;
      continue;
    }
    if ('+-*/^_=<>!,;:|()[]{}&\'≤≥≠≈'.includes(c)) {
      out.push({ k: 'op', v: c, pos });
      i++;
      continue;
    }
    if (c === '°') {
      out.push({ k: 'cmd', v: '\\circ', pos });
      i++;
      continue;
    }
    throw new MathError(`unexpected character ${JSON.stringify(c)}`);
  }
  return out;
}

const COMMA_NUMBER = /^\s*-?\d{1,3}(,\d{3})+(\.\d+)?\s*$/;

export function parseLatex(latex: string): Node {
  if (COMMA_NUMBER.test(latex)) {
    const t = latex.trim();
    let s = t.startsWith('0') && t.includes(',') ? t.replace(/,/g, '.') : t;
    s = s.replace(/[, ]/g, '');
    const neg = s.startsWith('-');
    if (neg) s = s.slice(1);
    s = s.replace(/^0+/, '') || '0';
    return numberFromString((neg ? '-' : '') + s);
  }
  const p = new LatexParser(tokenize(latex));
  const r = p.parseMath();
  return r;
}

function isOnlySymbols(n: Node): boolean {
  if (n.t === 'Symbol') return true;
  if (n.t === 'Pow' && n.exp.t === 'Integer' && n.exp.v === -1n) return isOnlySymbols(n.base);
  const cs = n.t === 'Add' || n.t === 'Mul' || n.t === 'Func' ? n.args : n.t === 'Pow' ? [n.base, n.exp] : [];
  return cs.length > 0 && cs.every(isOnlySymbols);
}

const isMatrixLike = (n: Node): boolean => n.t === 'Matrix' || n.t === 'MatOp';

function matFlat(op: 'Add' | 'Mul', lh: Node, rh: Node): Node {
  const parts = (n: Node) => (n.t === 'MatOp' && n.op === op ? n.args : [n]);
  return { t: 'MatOp', op, args: [...parts(lh), ...parts(rh)] };
}

function flatAdd(lh: Node, rh: Node): Node {
  if (isMatrixLike(lh) || isMatrixLike(rh)) return matFlat('Add', lh, rh);
  if (lh.t === 'Add' || rh.t === 'Add') {
    return add(...(lh.t === 'Add' ? lh.args : [lh]), ...(rh.t === 'Add' ? rh.args : [rh]));
  }
  return add(lh, rh);
}
function flatMul(lh: Node, rh: Node): Node {
  if (isMatrixLike(lh) || isMatrixLike(rh)) return matFlat('Mul', lh, rh);
  if (lh.t === 'Mul' || rh.t === 'Mul') {
    return mul(...(lh.t === 'Mul' ? lh.args : [lh]), ...(rh.t === 'Mul' ? rh.args : [rh]));
  }
  return mul(lh, rh);
}


class LatexParser {
  i = 0;
  absDepth = 0;
  constructor(private toks: Tok[]) {}

  peek(o = 0): Tok | undefined {
    return this.toks[this.i + o];
  }
  is(v: string, o = 0): boolean {
    const t = this.peek(o);
    return !!t && (t.k === 'op' || t.k === 'cmd') && t.v === v;
  }
  expect(v: string): void {
    if (!this.is(v)) throw new MathError(`expected ${v}`);
    this.i++;
  }
  atEnd(): boolean {
    return this.i >= this.toks.length;
  }

  parseMath(): Node {
    const start = this.i;
    // set_elements_relation: atom_expr_list (= | \in) elements-without-relations
    try {
      const r = this.trySetElementsRelation();
      if (r && this.atEnd()) return r;
    } catch {
      /* fall through */
    }
    this.i = start;
    let firstErr: unknown;
    try {
      const groups = this.parseSemicolonElements(true);
      if (this.atEnd()) return elementsToSetOrTuple(groups);
      throw new MathError(`unexpected ${this.peek()!.v}`);
    } catch (e) {
      firstErr = e;
    }
    this.i = start;
    try {
      const r = this.parseSetExpr();
      if (this.atEnd()) return r;
    } catch {
      /* ignore */
    }
    this.i = start;
    try {
      const lhs = this.parseAtomExprList();
      if (lhs && (this.is('=') || this.is('\\in'))) {
        this.i++;
        const r = this.parseSetExpr();
        if (this.atEnd()) return { t: 'Rel', op: 'Eq', lhs, rhs: r };
      }
    } catch {
      /* ignore */
    }
    throw firstErr;
  }

  trySetElementsRelation(): Node | null {
    const lhs = this.parseAtomExprList();
    if (!lhs) return null;
    if (!(this.is('=') || this.is('\\in'))) return null;
    this.i++;
    const groups = this.parseSemicolonElements(false);
    return { t: 'Rel', op: 'Eq', lhs, rhs: elementsToSetOrTuple(groups) };
  }

  parseAtomExprList(): Node | null {
    if (this.is('(')) {
      this.i++;
      const items: Node[] = [];
      for (;;) {
        const a = this.parseAtomExpr();
        if (!a) return null;
        items.push(a);
        if (this.is(',')) {
          this.i++;
          continue;
        }
        break;
      }
      if (!this.is(')')) return null;
      this.i++;
      return items.length === 1 ? items[0]! : { t: 'Tuple', args: items };
    }
    return this.parseAtomExpr();
  }

  /** A symbol-like atom (letter, greek, accent) with optional sub/superscripts. */
  parseAtomExpr(): Node | null {
    const t = this.peek();
    if (!t) return null;
    let base: string | null = null;
    if (t.k === 'letter' && t.v !== 'e') base = t.v;
    else if (t.k === 'cmd' && GREEK.has(t.v.slice(1))) base = t.v;
    else if (t.k === 'other') base = t.v;
    else if (t.k === 'accent' && !t.v.startsWith('mathbb\u0000') && !t.v.startsWith('operatorname\u0000')) base = accentText(t.v);
    if (base === null) return null;
    this.i++;
    let sub = '';
    let sup: Node | null = null;
    for (let round = 0; round < 2; round++) {
      if (this.is('_') && !sub) {
        this.i++;
        sub = this.subscriptText();
      } else if (this.is('^') && !sup && !this.isDegreeAhead()) {
        this.i++;
        sup = this.parseSupArg();
      }
    }
    let s = makeSymbol(base, sub);
    if (sup) s = pow(s, sup);
    return s;
  }

  isDegreeAhead(): boolean {
    return this.is('\\circ', 1) || this.is('\\degree', 1) || (this.is('{', 1) && (this.is('\\circ', 2) || this.is('\\degree', 2)) && this.is('}', 3));
  }

  subscriptText(): string {
    if (this.is('{')) {
      let depth = 0;
      const parts: string[] = [];
      for (;;) {
        const t = this.peek();
        if (!t) throw new MathError('unbalanced subscript');
        this.i++;
        if (t.v === '{' && t.k === 'op') {
          depth++;
          if (depth === 1) continue;
        } else if (t.v === '}' && t.k === 'op') {
          depth--;
          if (depth === 0) break;
        }
        parts.push(t.k === 'accent' ? accentText(t.v) : t.v);
      }
      return parts.join('');
    }
    const t = this.peek();
    if (!t) throw new MathError('missing subscript');
    this.i++;
    if (t.k === 'accent') return accentText(t.v);
    return t.v;
  }

  parseSupArg(): Node {
    if (this.is('{')) {
      this.i++;
      const e = this.parseExpr();
      this.expect('}');
      return e;
    }
    const a = this.parseAtom();
    if (!a) throw new MathError('bad superscript');
    return a;
  }

  parseSemicolonElements(allowRelation: boolean): Node[][] {
    const groups: Node[][] = [];
    for (;;) {
      const group: Node[] = [];
      for (;;) {
        group.push(...this.parseElement(allowRelation));
        if (this.is(',')) {
          this.i++;
          continue;
        }
        break;
      }
      groups.push(group);
      if (this.is(';')) {
        this.i++;
        continue;
      }
      return groups;
    }
  }

  parseElement(allowRelation: boolean): Node[] {
    if (this.is('\\pm') || this.is('\\mp')) {
      this.i++;
      const e = this.parseExpr();
      return [asUnaryMinus(e), e];
    }
    const start = this.i;
    const sa = this.trySetAtom();
    if (sa && this.atElementEnd()) return [sa];
    this.i = start;
    const e = allowRelation ? this.parseRelation() : this.parseExpr();
    if (this.is('\\pm') || this.is('\\mp')) {
      this.i++;
      const r = this.parseExpr();
      return [add(e, r), add(e, asUnaryMinus(r))];
    }
    return [e];
  }

  atElementEnd(): boolean {
    return this.atEnd() || this.is(',') || this.is(';') || this.is(')') || this.is(']') || this.is('\\}') || this.is('}') || this.is('\\rbrace');
  }

  trySetAtom(): Node | null {
    const t = this.peek();
    if (!t) return null;
    try {
      if (t.k === 'cmd' && t.v === '\\emptyset') {
        this.i++;
        return { t: 'SetConst', name: 'EmptySet' };
      }
      const open = t.v;
      if (t.k === 'op' && (open === '(' || open === '[')) return this.parseIntervalOrTuple();
      if (t.k === 'cmd' && (open === '\\(' || open === '\\lbrack' || open === '\\lgroup')) return this.parseIntervalOrTuple();
      if ((t.k === 'cmd' && (open === '\\{' || open === '\\lbrace')) || (t.k === 'op' && open === '{')) {
        this.i++;
        const close = open === '{' ? '}' : open === '\\{' ? '\\}' : '\\rbrace';
        if (this.is(close)) {
          this.i++;
          return { t: 'SetConst', name: 'EmptySet' };
        }
        const groups = this.parseSemicolonElements(true);
        this.expect(close);
        return { t: 'FiniteSet', args: groups.flat() };
      }
    } catch {
      return null;
    }
    return null;
  }

  parseIntervalOrTuple(): Node | null {
    const open = this.peek()!.v;
    this.i++;
    const groups = this.parseSemicolonElements(true);
    const close = this.peek();
    if (!close) return null;
    const cv = close.v;
    const closers = [')', ']', '\\)', '\\rbrack', '\\rgroup'];
    if (!closers.includes(cv)) return null;
    this.i++;
    const flat = groups.flat();
    const lo = open === '(' || open === '\\(' || open === '\\lgroup';
    const ro = cv === ')' || cv === '\\)' || cv === '\\rgroup';
    if (groups.length === 1 && flat.length === 2 && !isRelation(flat[0]!) && !isRelation(flat[1]!)) {
      const [a, b] = flat as [Node, Node];
      if (freeSymbols(a).size === 0 && freeSymbols(b).size === 0 && !isSetLike(a) && !isSetLike(b)) {
        const av = approxValue(a);
        const bv = approxValue(b);
        if (av !== null && bv !== null && ((lo && ro && bv <= av) || (!lo && !ro && bv < av))) return { t: 'Tuple', args: [a, b] };
      }
      if (!isSetLike(a) && !isSetLike(b)) {
        // sympy makes infinite endpoints open
        const lo2 = lo || (a.t === 'Const' && a.name === '-oo');
        const ro2 = ro || (b.t === 'Const' && b.name === 'oo');
        return { t: 'Interval', start: a, end: b, lo: lo2, ro: ro2 };
      }
    }
    // ordered tuple: only () and [] pairs
    const pairOk = (open === '(' && cv === ')') || (open === '[' && cv === ']') || (open === '\\(' && cv === '\\)');
    if (!pairOk) return null;
    if (flat.length === 1 && groups.length === 1) return flat[0]!;
    return { t: 'Tuple', args: flat };
  }

  parseSetExpr(): Node {
    let left = this.parseSetAtomStrict();
    for (;;) {
      if (this.is('\\cup')) {
        this.i++;
        left = { t: 'SetOp', op: 'Union', args: [tupleToSet(left), tupleToSet(this.parseSetAtomStrict())] };
      } else if (this.is('\\cap')) {
        this.i++;
        left = { t: 'SetOp', op: 'Intersection', args: [tupleToSet(left), tupleToSet(this.parseSetAtomStrict())] };
      } else if (this.is('\\setminus') || this.is('\\backslash')) {
        this.i++;
        left = { t: 'SetOp', op: 'Complement', args: [left, this.parseSetAtomStrict()] };
      } else return left;
    }
  }

  parseSetAtomStrict(): Node {
    const t = this.peek();
    if (t && t.k === 'accent' && t.v.startsWith('mathbb\u0000')) {
      this.i++;
      const body = t.v.split('\u0000')[1]!.trim();
      const m: Record<string, Node> = {
        N: { t: 'SetConst', name: 'Naturals' }, Z: { t: 'SetConst', name: 'Integers' }, Q: { t: 'SetConst', name: 'Rationals' },
        R: { t: 'SetConst', name: 'Reals' }, C: { t: 'SetConst', name: 'Complexes' },
      };
      if (m[body]) return m[body]!;
      throw new MathError('unknown set');
    }
    const r = this.trySetAtom();
    if (!r) throw new MathError('expected a set');
    return r;
  }

  parseRelation(): Node {
    let lh = this.parseExpr();
    for (;;) {
      const t = this.peek();
      if (!t) return lh;
      const op = (t.k === 'op' || t.k === 'cmd') ? REL_TOKENS[t.v] : undefined;
      if (!op) return lh;
      this.i++;
      const rh = this.parseExpr();
      if (op === 'Approx') {
        lh = isOnlySymbols(lh) ? rh : lh;
        continue;
      }
      const rop: RelOp = op === 'In' ? 'Eq' : op;
      if (lh.t === 'And') {
        const last = lh.args[lh.args.length - 1] as Extract<Node, { t: 'Rel' }>;
        lh = { t: 'And', args: [...lh.args, { t: 'Rel', op: rop, lhs: last.rhs, rhs: rh }] };
      } else if (lh.t === 'Rel') {
        lh = { t: 'And', args: [lh, { t: 'Rel', op: rop, lhs: lh.rhs, rhs: rh }] };
      } else lh = { t: 'Rel', op: rop, lhs: lh, rhs: rh };
    }
  }

  parseExpr(): Node {
    let lh = this.parseMp();
    for (;;) {
      if (this.is('+')) {
        this.i++;
        const rh = this.parseMp();
        lh = flatAdd(lh, rh);
      } else if (this.is('-')) {
        this.i++;
        let rh = this.parseMp();
        if (isMatrixLike(lh) || isMatrixLike(rh)) {
          lh = matFlat('Add', lh, matFlat('Mul', NEG_ONE, rh));
          continue;
        }
        rh = rh.t === 'Const' && rh.name === 'oo' ? cnst('-oo') : isNumber(rh) ? negNumber(rh) : flatMul(NEG_ONE, rh);
        lh = flatAdd(lh, rh);
      } else return lh;
    }
  }

  parseMp(nofunc = false): Node {
    let lh = this.parseUnary(nofunc);
    for (;;) {
      if (this.is('*') || this.is('\\times') || this.is('\\cdot') || this.is('\\ast')) {
        this.i++;
        lh = flatMul(lh, this.parseUnary(nofunc));
      } else if (this.is('/') || this.is('\\div') || this.is(':')) {
        this.i++;
        const rh = this.parseUnary(nofunc);
        if (isMatrixLike(lh) || isMatrixLike(rh)) throw new MathError('matrix division is not supported');
        if (lh.t === 'Integer' && rh.t === 'Integer') lh = rational(lh.v, rh.v);
        else lh = mul(lh, pow(rh, NEG_ONE));
      } else if (this.is('\\mod') || this.is('\\bmod')) {
        this.i++;
        lh = { t: 'Func', name: 'Mod', args: [lh, this.parseUnary(nofunc)] };
      } else return lh;
    }
  }

  parseUnary(nofunc = false): Node {
    if (this.is('+')) {
      this.i++;
      return this.parseUnary(nofunc);
    }
    if (this.is('-')) {
      this.i++;
      const inner = this.parseUnary(nofunc);
      if (inner.t === 'Const' && inner.name === 'oo') return cnst('-oo');
      if (isMatrixLike(inner)) return matFlat('Mul', NEG_ONE, inner);
      return isNumber(inner) ? negNumber(inner) : flatMul(NEG_ONE, inner);
    }
    const items: Node[] = [];
    // unary: postfix+ ; unary_nofunc: postfix postfix_nofunc* (no function after the first factor)
    const first = this.parsePostfix(false);
    if (!first) throw new MathError(this.atEnd() ? 'unexpected end of input' : `unexpected ${this.peek()!.v}`);
    items.push(first);
    for (;;) {
      if (!this.canStartPostfix()) break;
      const save = this.i;
      let next: Node | null;
      try {
        next = this.parsePostfix(nofunc);
      } catch {
        this.i = save;
        break;
      }
      if (!next) {
        this.i = save;
        break;
      }
      items.push(next);
    }
    // right-nested product with mixed fractions: 2\frac{1}{2} = 5/2
    let res = items[items.length - 1]!;
    for (let k = items.length - 2; k >= 0; k--) {
      const left = items[k]!;
      // an integer followed by a positive rational (integers included) is a mixed number: 2 3 = 5
      const r = res.t === 'Rational' ? [res.p, res.q] : res.t === 'Integer' ? [res.v, 1n] : null;
      if (left.t === 'Integer' && r && r[0]! > 0n) {
        const [p, q] = r as [bigint, bigint];
        res = left.v < 0n ? rational(left.v * q - p, q) : rational(left.v * q + p, q);
      } else res = flatMul(left, res);
    }
    return res;
  }

  canStartPostfix(): boolean {
    const t = this.peek();
    if (!t) return false;
    if (t.k === 'num' || t.k === 'pct' || t.k === 'letter' || t.k === 'accent' || t.k === 'begin' || t.k === 'diff' || t.k === 'other') return true;
    if (t.k === 'op') return t.v === '(' || t.v === '{' || t.v === '[' || (t.v === '|' && this.absDepth === 0);
    if (t.k === 'cmd') {
      const name = t.v.slice(1);
      if (REL_TOKENS[t.v] || ['\\pm', '\\mp', '\\cup', '\\cap', '\\setminus', '\\times', '\\cdot', '\\div', '\\}', '\\)', '\\rbrack', '\\rgroup', '\\rbrace', '\\rfloor', '\\rceil', '\\rvert', '\\rangle', '\\mod', '\\bmod', '\\circ'].includes(t.v)) return false;
      if (t.v === '\\|' || t.v === '\\vert' || t.v === '\\lvert') return t.v === '\\lvert';
      return name.length > 0;
    }
    return false;
  }

  parsePostfix(nofunc: boolean): Node | null {
    let e = this.parseExp(nofunc);
    if (!e) return null;
    for (;;) {
      if (this.is('!') && !this.is('=', 1)) {
        this.i++;
        e = { t: 'Func', name: 'factorial', args: [e] };
      } else if (this.is('^') && this.isDegreeAhead()) {
        this.i += this.is('{', 1) ? 4 : 2;
      } else if (this.is("'")) {
        throw new MathError('transpose is not supported');
      } else return e;
    }
  }

  parseExp(nofunc: boolean): Node | null {
    let base = this.parseComp(nofunc);
    if (!base) return null;
    while (this.is('^') && !this.isDegreeAhead()) {
      this.i++;
      const ex = this.parseSupArg();
      base = pow(base, ex);
      if (this.is('_')) {
        this.i++;
        this.subscriptText();
      }
    }
    return base;
  }

  parseGroup(close: string): Node {
    this.i++;
    const e = this.parseExpr();
    this.expect(close);
    return e;
  }

  parseComp(nofunc: boolean): Node | null {
    const t = this.peek();
    if (!t) return null;
    if (t.k === 'op') {
      if (t.v === '(') return this.parseGroup(')');
      if (t.v === '[') return this.parseGroup(']');
      if (t.v === '{') {
        // {n \choose k}
        const save = this.i;
        this.i++;
        const upper = this.parseExpr();
        if (this.is('\\choose')) {
          this.i++;
          const lower = this.parseExpr();
          this.expect('}');
          return binomial(upper, lower);
        }
        this.i = save;
        return this.parseGroup('}');
      }
      if (t.v === '|') {
        this.i++;
        this.absDepth++;
        try {
          const e = this.parseExpr();
          this.expect('|');
          return { t: 'Func', name: 'Abs', args: [e] };
        } finally {
          this.absDepth--;
        }
      }
      return null;
    }
    if (t.k === 'begin') return this.parseMatrix();
    if (t.k === 'cmd') {
      const v = t.v;
      if (v === '\\(') return this.parseGroup('\\)');
      if (v === '\\{') return this.parseGroup('\\}');
      if (v === '\\lbrace') return this.parseGroup('\\rbrace');
      if (v === '\\lbrack') return this.parseGroup('\\rbrack');
      if (v === '\\lgroup') return this.parseGroup('\\rgroup');
      if (v === '\\lfloor') {
        const e = this.parseGroup('\\rfloor');
        return { t: 'Func', name: 'floor', args: [e] };
      }
      if (v === '\\lceil') {
        const e = this.parseGroup('\\rceil');
        return { t: 'Func', name: 'ceiling', args: [e] };
      }
      if (v === '\\lvert' || v === '\\vert' || v === '\\|') {
        const close = v === '\\lvert' ? '\\rvert' : v;
        this.i++;
        this.absDepth++;
        try {
          const e = this.parseExpr();
          this.expect(close);
          return { t: 'Func', name: 'Abs', args: [e] };
        } finally {
          this.absDepth--;
        }
      }
      if (v === '\\boxed' || v === '\\phantom' || v === '\\fbox') {
        this.i++;
        this.expect('{');
        const e = this.parseExpr();
        this.expect('}');
        return e;
      }
      if (v === '\\frac' || v === '\\dfrac' || v === '\\tfrac' || v === '\\cfrac') {
        this.i++;
        this.expect('{');
        const top = this.parseExpr();
        this.expect('}');
        this.expect('{');
        const bot = this.parseExpr();
        this.expect('}');
        if (top.t === 'Integer' && bot.t === 'Integer') return rational(top.v, bot.v);
        return mul(top, pow(bot, NEG_ONE));
      }
      if (v === '\\binom' || v === '\\dbinom' || v === '\\tbinom') {
        this.i++;
        this.expect('{');
        const top = this.parseExpr();
        this.expect('}');
        this.expect('{');
        const bot = this.parseExpr();
        this.expect('}');
        return binomial(top, bot);
      }
      if (v === '\\sqrt') {
        this.i++;
        let root: Node | null = null;
        if (this.is('[')) {
          this.i++;
          root = this.parseExpr();
          this.expect(']');
        }
        this.expect('{');
        const base = this.parseExpr();
        this.expect('}');
        if (!root) return pow(base, HALF);
        if (root.t === 'Integer') return pow(base, rational(1n, root.v));
        if (root.t === 'Rational') return pow(base, rational(root.q, root.p));
        return pow(base, pow(root, NEG_ONE));
      }
      const name = v.slice(1);
      if ((name === 'sum' || name === 'prod') && !nofunc) return this.parseSumOrProduct(name === 'sum' ? 'Sum' : 'Product');
      if (FUNCS_SINGLE[name] || FUNCS_MULTI[name]) return nofunc ? null : this.parseFunction(name);
      if (name === 'operatorname') return null;
    }
    if (t.k === 'accent' && t.v.startsWith('operatorname\u0000')) {
      if (nofunc) return null;
      const fname = t.v.split('\u0000')[1]!.trim();
      if (FUNCS_SINGLE[fname] || FUNCS_MULTI[fname]) return this.parseFunction(fname);
      throw new MathError(`unsupported operator ${fname}`);
    }
    // e / e^x
    if (t.k === 'letter' && t.v === 'e') {
      this.i++;
      if (this.is('^') && !this.isDegreeAhead()) {
        this.i++;
        return expOf(this.parseSupArg());
      }
      return cnst('E');
    }
    // undefined function f(x) with atom arguments
    if (!nofunc && (t.k === 'letter' || (t.k === 'cmd' && GREEK.has(t.v.slice(1)) && t.v !== '\\pi'))) {
      const save = this.i;
      const f = this.tryUndefinedFunction();
      if (f) return f;
      this.i = save;
    }
    return this.parseAtom();
  }

  tryUndefinedFunction(): Node | null {
    const t = this.peek()!;
    const name = t.k === 'letter' ? t.v : t.v.slice(1);
    this.i++;
    let sub = '';
    if (this.is('_')) {
      this.i++;
      sub = this.subscriptText();
    }
    let sup: Node | null = null;
    if (this.is('^') && !this.isDegreeAhead()) {
      this.i++;
      sup = this.parseSupArg();
    }
    if (!this.is('(')) return null;
    this.i++;
    // func_common_args: atom | expr ',' | expr ',' args
    const save = this.i;
    const args: Node[] = [];
    const a = this.parseAtom();
    if (a && this.is(')')) {
      args.push(a);
    } else {
      this.i = save;
      args.push(this.parseExpr());
      if (!this.is(',')) return null;
      while (this.is(',')) {
        this.i++;
        if (this.is(')')) break;
        args.push(this.parseExpr());
      }
    }
    if (!this.is(')')) return null;
    this.i++;
    const fname = (name + (sub ? (sub.length > 1 ? `_{${sub}}` : `_${sub}`) : ''));
    let f: Node = { t: 'Func', name: fname, args, undef: true };
    if (sup) f = pow(f, sup);
    return f;
  }

  parseFunction(name: string): Node {
    this.i++;
    let sub: Node | null = null;
    let sup: Node | null = null;
    for (let k = 0; k < 2; k++) {
      if (this.is('_') && !sub) {
        this.i++;
        sub = this.parseSupArg();
      } else if (this.is('^') && !sup) {
        this.i++;
        sup = this.parseSupArg();
      }
    }
    const multi = !!FUNCS_MULTI[name];
    let args: Node[];
    if (this.is('(')) {
      this.i++;
      args = [this.parseExpr()];
      while (multi && this.is(',')) {
        this.i++;
        args.push(this.parseExpr());
      }
      this.expect(')');
    } else {
      args = [this.parseMp(true)];
    }
    let expr: Node;
    const fname = FUNCS_SINGLE[name] ?? FUNCS_MULTI[name]!;
    if (fname === 'log' || fname === 'ln') {
      let base: Node = fname === 'log' ? int(10) : cnst('E');
      if (sub) base = sub;
      // sympy.log(arg, base, evaluate=False) keeps the base, E included: log(2, E)
      expr = { t: 'Func', name: 'log', args: [args[0]!, base] };
    } else if (fname === 'exp') {
      expr = expOf(args[0]!);
    } else {
      expr = { t: 'Func', name: fname, args };
    }
    if (sup) {
      if (sup.t === 'Integer' && sup.v === -1n && ['sin', 'cos', 'tan', 'csc', 'sec', 'cot', 'sinh', 'cosh', 'tanh'].includes(fname)) {
        expr = { t: 'Func', name: 'a' + fname, args };
      } else expr = pow(expr, sup);
    }
    return expr;
  }

  /** \\sum_{k=a}^{b} body / \\prod (sub and sup in either order; the body is a product-level term). */
  parseSumOrProduct(kind: 'Sum' | 'Product'): Node {
    this.i++;
    let variable: Node | null = null;
    let start: Node | null = null;
    let end: Node | null = null;
    for (let k = 0; k < 2; k++) {
      if (this.is('_') && !variable) {
        this.i++;
        this.expect('{');
        variable = this.parseExpr();
        if (!(this.is('=') || this.is('=='))) throw new MathError('expected k=... below the sum');
        this.i++;
        start = this.parseExpr();
        this.expect('}');
      } else if (this.is('^') && !end) {
        this.i++;
        end = this.parseSupArg();
      }
    }
    if (!variable || !start || !end) throw new MathError('a sum needs both limits');
    const body = this.parseMp(false);
    return { t: 'Func', name: kind, args: [body, { t: 'Tuple', args: [variable, start, end] }] };
  }

  parseMatrix(): Node {
    const begin = this.peek()!;
    this.i++;
    const rows: Node[][] = [[]];
    for (;;) {
      const t = this.peek();
      if (!t) throw new MathError('unterminated matrix');
      if (t.k === 'end') {
        if (t.v !== begin.v) throw new MathError('mismatched environment');
        this.i++;
        break;
      }
      if (t.k === 'rowsep') {
        this.i++;
        rows.push([]);
        continue;
      }
      if (t.k === 'op' && t.v === '&') {
        this.i++;
        continue;
      }
      rows[rows.length - 1]!.push(this.parseExpr());
      if (!(this.is('&') || this.peek()?.k === 'rowsep' || this.peek()?.k === 'end')) throw new MathError('bad matrix cell');
    }
    while (rows.length > 0 && rows[rows.length - 1]!.length === 0) rows.pop();
    if (rows.length === 0 || rows.some((r) => r.length !== rows[0]!.length)) throw new MathError('ragged matrix');
    if (begin.v === 'vmatrix' || begin.v === 'Vmatrix') throw new MathError('determinants are not supported');
    return { t: 'Matrix', rows };
  }

  parseAtom(): Node | null {
    const t = this.peek();
    if (!t) return null;
    if (t.k === 'num') {
      this.i++;
      if (this.is('_')) {
        this.i++;
        this.subscriptText();
      }
      return parseNumber(t.v);
    }
    if (t.k === 'diff') {
      this.i++;
      return { t: 'Symbol', name: t.v };
    }
    if (t.k === 'pct') {
      this.i++;
      return mul(parseNumber(t.v.replace(/,/g, '')), rational(1n, 100n));
    }
    if (t.k === 'cmd') {
      if (t.v === '\\infty') {
        this.i++;
        return cnst('oo');
      }
      if (t.v === '\\pi') {
        this.i++;
        let s: Node = cnst('pi');
        if (this.is('^') && !this.isDegreeAhead()) {
          this.i++;
          s = pow(s, this.parseSupArg());
        }
        return s;
      }
      if (t.v === '\\%') throw new MathError('stray percent sign');
    }
    if (t.k === 'letter' && t.v === 'E') {
      this.i++;
      return { t: 'Symbol', name: 'e' };
    }
    if (t.k === 'letter' && t.v === 'I' && !this.is('_', 1) && !this.is('^', 1)) {
      this.i++;
      return cnst('I');
    }
    return this.parseAtomExpr();
  }
}

/** sympy.exp(x) with its automatic simplifications: exp(0) = 1, exp(1) = E, exp(log(x)) = x. */
function expOf(x: Node): Node {
  if (x.t === 'Integer' && x.v === 0n) return int(1);
  if (x.t === 'Integer' && x.v === 1n) return cnst('E');
  if (x.t === 'Func' && x.name === 'log' && (x.args.length === 1 || (x.args[1]!.t === 'Const' && x.args[1]!.name === 'E'))) return x.args[0]!;
  return { t: 'Func', name: 'exp', args: [x] };
}

function accentText(v: string): string {
  const [name0, body0] = v.split('\u0000') as [string, string];
  let name = name0;
  let body = body0.replace(/ /g, '');
  if (name === 'bar' || name === 'overline') name = 'bar';
  else if (name === 'vec' || name === 'overrightarrow') name = 'vec';
  else if (name === 'tilde' || name === 'widetilde') name = 'tilde';
  else if (name.includes('text') || name.includes('mbox')) {
    name = '';
    body = body.replace(/[()]/g, '');
  } else if (name.includes('math')) name = 'math';
  return name ? `${name}{${body}}` : body;
}

function makeSymbol(base: string, sub: string): Node {
  let letter = base;
  if (letter.startsWith('\\')) letter = letter.slice(1);
  if (GREEK_UNICODE[letter]) letter = GREEK_UNICODE[letter]!;
  let text = letter.trim();
  if (sub) text += sub.length > 1 ? `_{${sub}}` : `_${sub}`;
  text = text.toLowerCase();
  if (text === 'pi') return cnst('pi');
  if (text === '') throw new MathError('empty symbol');
  return { t: 'Symbol', name: text };
}

function parseNumber(text: string): Node {
  let s = text.replace(/,/g, '');
  if (/^\d+$/.test(s)) s = s.replace(/^0+(?=\d)/, '');
  return numberFromString(s);
}

function asUnaryMinus(e: Node): Node {
  if (isNumber(e) && e.t !== 'Float') return negNumber(e);
  return mul(NEG_ONE, e);
}

function binomial(n: Node, k: Node): Node {
  // sympy.binomial evaluates k = 0 and k = 1 for any n
  if (k.t === 'Integer' && k.v === 0n) return int(1);
  if (k.t === 'Integer' && k.v === 1n) return n;
  if (n.t === 'Integer' && k.t === 'Integer' && k.v >= 0n && n.v >= 0n && n.v < 100000n) {
    if (k.v > n.v) return int(0);
    let r = 1n;
    const kk = k.v < n.v - k.v ? k.v : n.v - k.v;
    for (let i = 0n; i < kk; i++) r = (r * (n.v - i)) / (i + 1n);
    return int(r);
  }
  return { t: 'Func', name: 'binomial', args: [n, k] };
}

function isRelation(n: Node): boolean {
  return n.t === 'Rel' || n.t === 'And';
}
function isSetLike(n: Node): boolean {
  return n.t === 'Interval' || n.t === 'FiniteSet' || n.t === 'Tuple' || n.t === 'SetOp' || n.t === 'SetConst';
}
function tupleToSet(n: Node): Node {
  return n.t === 'Tuple' ? { t: 'FiniteSet', args: n.args } : n;
}

let approxFn: ((n: Node) => number | null) | null = null;
export function setApproxReal(fn: (n: Node) => number | null): void {
  approxFn = fn;
}
function approxValue(n: Node): number | null {
  if (isNumber(n)) return numApprox(n);
  return approxFn ? approxFn(n) : null;
}

export function elementsToSetOrTuple(groups: Node[][]): Node {
  if (groups.length === 1) {
    if (groups[0]!.length === 1) return groups[0]![0]!;
    return { t: 'FiniteSet', args: groups[0]! };
  }
  if (groups.every((g) => g.length === 1)) return { t: 'FiniteSet', args: groups.map((g) => g[0]!) };
  return { t: 'FiniteSet', args: groups.map((g) => ({ t: 'Tuple', args: g }) as Node) };
}

export { flatMul, flatAdd };
