/**
 * tau2's `calculate` tool: `str(round(float(eval(expression, {"__builtins__": None}, {})), 2))`
 * after checking that every character is one of `0123456789+-*\/(). `. Over that alphabet Python's
 * eval sees int and float literals, `+ - * / // **`, unary signs, parentheses and `...`; this is
 * that subset of Python's grammar and arithmetic (ints exact, as bigints), with Python's error
 * texts for the failures seen in practice.
 */
import { PyException, pyFloatRepr, pyRound } from '@nemo-gym/core/py';

type Val = { t: 'int'; v: bigint } | { t: 'float'; v: number } | { t: 'ellipsis' } | { t: 'tuple' };

const syntax = (msg: string, line = 1) => new PyException('SyntaxError', `${msg} (<string>, line ${line})`);
const zero = (msg: string) => new PyException('ZeroDivisionError', msg);
const overflow = (msg: string) => new PyException('OverflowError', msg);
const typeErr = (msg: string) => new PyException('TypeError', msg);

/** Ints longer than this many bits are refused (Python would spend unbounded time and memory on `9**9**9`). */
const MAX_INT_BITS = 1_000_000;

type Tok = { k: 'num'; text: string } | { k: 'op'; text: string } | { k: 'ellipsis' };

function tokenize(s: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    const ch = s[i]!;
    if (ch === ' ') {
      i++;
      continue;
    }
    if (s.startsWith('...', i)) {
      toks.push({ k: 'ellipsis' });
      i += 3;
      continue;
    }
    if (/[0-9]/.test(ch) || (ch === '.' && /[0-9]/.test(s[i + 1] ?? ''))) {
      const m = /^(?:[0-9]+\.?[0-9]*|\.[0-9]+)/.exec(s.slice(i))![0];
      if (!m.includes('.') && /^0+[1-9]/.test(m)) {
        throw syntax('leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers');
      }
      toks.push({ k: 'num', text: m });
      i += m.length;
      continue;
    }
    if (s.startsWith('**', i) || s.startsWith('//', i)) {
      toks.push({ k: 'op', text: s.slice(i, i + 2) });
      i += 2;
      continue;
    }
    toks.push({ k: 'op', text: ch });
    i++;
  }
  return toks;
}

function checkParens(toks: Tok[]): void {
  let depth = 0;
  for (const t of toks) {
    if (t.k !== 'op') continue;
    if (t.text === '(') depth++;
    else if (t.text === ')') {
      if (depth === 0) throw syntax("unmatched ')'");
      depth--;
    }
  }
  if (depth > 0) throw syntax("'(' was never closed");
}

function toFloat(x: Val): number {
  if (x.t === 'float') return x.v;
  if (x.t === 'int') {
    const n = Number(x.v);
    if (!Number.isFinite(n)) throw overflow('int too large to convert to float');
    return n;
  }
  throw typeErr(`float() argument must be a string or a real number, not '${x.t}'`);
}

function bitLength(v: bigint): number {
  return (v < 0n ? -v : v).toString(2).length;
}

/** Python's correctly rounded int / int. */
function intTrueDiv(a: bigint, b: bigint): number {
  if (b === 0n) throw zero('division by zero');
  const small = 2n ** 53n;
  const abs = (v: bigint) => (v < 0n ? -v : v);
  if (abs(a) <= small && abs(b) <= small) return Number(a) / Number(b);
  const neg = a < 0n !== b < 0n;
  let n = abs(a);
  let d = abs(b);
  const shift = 55 - (bitLength(n) - bitLength(d));
  if (shift > 0) n <<= BigInt(shift);
  else d <<= BigInt(-shift);
  let q = n / d;
  // a sticky bit keeps the rounding of the 55+-bit quotient correct
  q = (q << 1n) | (n % d === 0n ? 0n : 1n);
  const r = Number(q) * 2 ** -(shift + 1);
  if (!Number.isFinite(r)) throw overflow('integer division result too large for a float');
  return neg ? -r : r;
}

function floatFloorDiv(a: number, b: number): number {
  if (b === 0) throw zero('float floor division by zero');
  // CPython's float_floor_div
  let mod = a % b;
  let div = (a - mod) / b;
  if (mod) {
    if (b < 0 !== mod < 0) {
      mod += b;
      div -= 1;
    }
  }
  let floordiv: number;
  if (div) {
    floordiv = Math.floor(div);
    if (div - floordiv > 0.5) floordiv += 1;
  } else floordiv = a / b < 0 ? -0 : 0;
  return floordiv;
}

function checkSize(v: bigint): bigint {
  if (bitLength(v) > MAX_INT_BITS) throw overflow('int too large to convert to float');
  return v;
}

function arith(op: string, x: Val, y: Val): Val {
  if (x.t === 'ellipsis' || x.t === 'tuple' || y.t === 'ellipsis' || y.t === 'tuple') {
    const name = (v: Val) => (v.t === 'int' ? 'int' : v.t === 'float' ? 'float' : v.t);
    throw typeErr(`unsupported operand type(s) for ${op}: '${name(x)}' and '${name(y)}'`);
  }
  if (x.t === 'int' && y.t === 'int') {
    const a = x.v;
    const b = y.v;
    switch (op) {
      case '+':
        return { t: 'int', v: a + b };
      case '-':
        return { t: 'int', v: a - b };
      case '*':
        if (bitLength(a) + bitLength(b) > MAX_INT_BITS) throw overflow('int too large to convert to float');
        return { t: 'int', v: a * b };
      case '/':
        return { t: 'float', v: intTrueDiv(a, b) };
      case '//': {
        if (b === 0n) throw zero('integer division or modulo by zero');
        let q = a / b;
        if (a % b !== 0n && a < 0n !== b < 0n) q -= 1n;
        return { t: 'int', v: q };
      }
      case '**': {
        if (b < 0n) {
          const fa = toFloat(x);
          if (fa === 0) throw zero('0.0 cannot be raised to a negative power');
          return { t: 'float', v: fa ** Number(b) };
        }
        if (a === 0n || a === 1n) return { t: 'int', v: b === 0n ? 1n : a };
        if (a === -1n) return { t: 'int', v: b % 2n === 0n ? 1n : -1n };
        if (b > BigInt(MAX_INT_BITS)) throw overflow('int too large to convert to float');
        return { t: 'int', v: checkSize(a ** b) };
      }
    }
  }
  const a = toFloat(x);
  const b = toFloat(y);
  switch (op) {
    case '+':
      return { t: 'float', v: a + b };
    case '-':
      return { t: 'float', v: a - b };
    case '*':
      return { t: 'float', v: a * b };
    case '/':
      if (b === 0) throw zero('float division by zero');
      return { t: 'float', v: a / b };
    case '//':
      return { t: 'float', v: floatFloorDiv(a, b) };
    default: {
      // '**'
      if (a === 0 && b < 0) throw zero('0.0 cannot be raised to a negative power');
      if (a < 0 && !Number.isInteger(b) && Number.isFinite(b)) throw typeErr("float() argument must be a string or a real number, not 'complex'");
      const r = a ** b;
      if (!Number.isFinite(r) && Number.isFinite(a) && Number.isFinite(b)) throw overflow("(34, 'Numerical result out of range')");
      return { t: 'float', v: r };
    }
  }
}

class Parser {
  private i = 0;
  constructor(private readonly toks: Tok[]) {}

  private peek(): Tok | undefined {
    return this.toks[this.i];
  }

  private isOp(...ops: string[]): string | null {
    const t = this.peek();
    return t && t.k === 'op' && ops.includes(t.text) ? t.text : null;
  }

  parse(): Val {
    const v = this.expr();
    if (this.i < this.toks.length) {
      const t = this.peek()!;
      if (t.k === 'op' && t.text === '(') throw typeErr(`'${v.t}' object is not callable`);
      throw syntax('invalid syntax');
    }
    return v;
  }

  private expr(): Val {
    let v = this.term();
    for (let op = this.isOp('+', '-'); op; op = this.isOp('+', '-')) {
      this.i++;
      v = arith(op, v, this.term());
    }
    return v;
  }

  private term(): Val {
    let v = this.factor();
    for (let op = this.isOp('*', '/', '//'); op; op = this.isOp('*', '/', '//')) {
      this.i++;
      v = arith(op, v, this.factor());
    }
    return v;
  }

  private factor(): Val {
    const op = this.isOp('+', '-');
    if (op) {
      this.i++;
      const v = this.factor();
      if (v.t === 'int') return { t: 'int', v: op === '-' ? -v.v : v.v };
      if (v.t === 'float') return { t: 'float', v: op === '-' ? -v.v : v.v };
      throw typeErr(`bad operand type for unary ${op}: '${v.t}'`);
    }
    return this.power();
  }

  private power(): Val {
    const base = this.atom();
    if (this.isOp('**')) {
      this.i++;
      return arith('**', base, this.factor());
    }
    return base;
  }

  private atom(): Val {
    const t = this.peek();
    if (!t) throw syntax('invalid syntax');
    this.i++;
    if (t.k === 'num') {
      if (t.text.includes('.')) return { t: 'float', v: Number(t.text) };
      return { t: 'int', v: BigInt(t.text) };
    }
    if (t.k === 'ellipsis') return { t: 'ellipsis' };
    if (t.text === '(') {
      if (this.isOp(')')) {
        this.i++;
        return { t: 'tuple' };
      }
      const v = this.expr();
      if (!this.isOp(')')) throw syntax('invalid syntax');
      this.i++;
      return v;
    }
    throw syntax('invalid syntax');
  }
}

/** The tool's return value (a str), or a PyException carrying Python's error. */
export function calculate(expression: string): string {
  for (const ch of expression) {
    if (!'0123456789+-*/(). '.includes(ch)) throw new PyException('ValueError', 'Invalid characters in expression');
  }
  // eval of a blank string: Python reports line 0
  if (expression.trim() === '') throw syntax('invalid syntax', 0);
  const toks = tokenize(expression);
  checkParens(toks);
  const value = new Parser(toks).parse();
  return pyFloatRepr(pyRound(toFloat(value), 2));
}
