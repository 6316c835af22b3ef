/**
 * Evaluates the expressions of a MultiverseMathHard question ("Get me the values for (9.0 - 9.0),
 * sin(5.0), and pi using only the given tools.") with this universe's tools, so the ground truth of
 * a row can be recomputed and compared bit for bit with the one CPython produced.
 */
import { callFunction } from '../src/universe.js';

type Tok = { kind: 'num'; value: number } | { kind: 'id'; value: string } | { kind: 'op'; value: string };

function tokenize(s: string): Tok[] {
  const out: Tok[] = [];
  const re = /\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_]+)|(\*\*|[-+*/(),]))/y;
  let m: RegExpExecArray | null;
  while (re.lastIndex < s.length && (m = re.exec(s))) {
    if (m[1]) out.push({ kind: 'num', value: Number(m[1]) });
    else if (m[2]) out.push({ kind: 'id', value: m[2] });
    else out.push({ kind: 'op', value: m[3]! });
  }
  if (re.lastIndex < s.trimEnd().length) throw new Error(`cannot tokenize at ${re.lastIndex}: ${s}`);
  return out;
}

class Parser {
  private i = 0;
  constructor(private readonly toks: Tok[]) {}

  private peek(): Tok | undefined {
    return this.toks[this.i];
  }
  private isOp(v: string): boolean {
    const t = this.peek();
    return t?.kind === 'op' && t.value === v;
  }
  private expect(v: string): void {
    if (!this.isOp(v)) throw new Error(`expected ${v} at token ${this.i}`);
    this.i++;
  }
  done(): boolean {
    return this.i >= this.toks.length;
  }

  /** Top level: expressions separated by ",", "and" or ", and". */
  list(): number[] {
    const values = [this.expr()];
    while (!this.done()) {
      if (this.isOp(',')) this.i++;
      const t = this.peek();
      if (t?.kind === 'id' && t.value === 'and') this.i++;
      values.push(this.expr());
    }
    return values;
  }

  expr(): number {
    let v = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.toks[this.i++] as { value: string }).value;
      const r = this.term();
      v = callFunction(op === '+' ? 'add' : 'subtract', { a: v, b: r });
    }
    return v;
  }

  term(): number {
    let v = this.unary();
    while (this.isOp('*') || this.isOp('/')) {
      const op = (this.toks[this.i++] as { value: string }).value;
      const r = this.unary();
      v = callFunction(op === '*' ? 'multiply' : 'divide', { a: v, b: r });
    }
    return v;
  }

  unary(): number {
    if (this.isOp('-')) {
      this.i++;
      return callFunction('negate', { a: this.unary() });
    }
    return this.power();
  }

  power(): number {
    const base = this.atom();
    if (this.isOp('**')) {
      this.i++;
      return callFunction('power', { a: base, b: this.unary() });
    }
    return base;
  }

  atom(): number {
    const t = this.toks[this.i++];
    if (!t) throw new Error('unexpected end');
    if (t.kind === 'num') return t.value;
    if (t.kind === 'op' && t.value === '(') {
      const v = this.expr();
      this.expect(')');
      return v;
    }
    if (t.kind === 'id') {
      if (t.value === 'pi') return callFunction('pi', {});
      this.expect('(');
      const first = this.expr();
      if (t.value === 'log') {
        this.expect(',');
        const base = this.expr();
        this.expect(')');
        return callFunction('log', { a: first, base });
      }
      this.expect(')');
      if (t.value === 'sin' || t.value === 'cos') return callFunction(t.value, { radians: first });
      throw new Error(`unknown function ${t.value}`);
    }
    throw new Error(`unexpected token ${JSON.stringify(t)}`);
  }
}

/** The values a question asks for, computed with this universe's tools. */
export function groundTruthOfQuestion(question: string): number[] {
  const m = /Get me the values? for (.*) using only the given tools\.?$/s.exec(question.trim());
  if (!m) throw new Error(`unrecognized question: ${question}`);
  return new Parser(tokenize(m[1]!)).list();
}
