/**
 * Optional libm backend that asks a local CPython for `math.sin/cos/log` and `float ** float`,
 * so tool results are bit-identical to upstream's on the same C library (config
 * `float_backend: python`). One long-lived `python3` child answers JSON lines; doubles travel as
 * `float.hex()` strings, which are exact.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { crCos, crLog, crPow, crSin } from './libm.js';

export type LibmOp = 'sin' | 'cos' | 'log' | 'pow';

export interface Libm {
  sin(x: number): number;
  cos(x: number): number;
  log(x: number): number;
  pow(x: number, y: number): number;
}

export const CORRECTLY_ROUNDED: Libm = { sin: crSin, cos: crCos, log: crLog, pow: crPow };

const SCRIPT = String.raw`
import json, math, sys
ops = {"sin": math.sin, "cos": math.cos, "log": math.log, "pow": lambda x, y: x ** y}
for line in sys.stdin:
    req = json.loads(line)
    out = []
    for op, args in req["calls"]:
        try:
            out.append(float.hex(float(ops[op](*[float.fromhex(a) for a in args]))))
        except Exception:
            out.append(None)
    sys.stdout.write(json.dumps({"id": req["id"], "results": out}) + "\n")
    sys.stdout.flush()
`;
import { NgError } from '@nemo-gym/core/errors';
import { MULTIVERSE_MATH_HARD_ERRORS } from './errors.js';

/** Exact hex form of a double, as Python's float.hex() reads it. */
export function toHex(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, Math.abs(x));
  const bits = buf.getBigUint64(0);
  const exp = Number((bits >> 52n) & 0x7ffn);
  const frac = (bits & 0xfffffffffffffn).toString(16).padStart(13, '0');
  if (exp === 0) return `${sign}0x0.${frac}p-1022`;
  return `${sign}0x1.${frac}p${exp - 1023}`;
}

export function fromHex(s: string): number {
  const m = /^(-?)0x([01])\.([0-9a-f]+)p([+-]?\d+)$/i.exec(s);
  if (!m) {
    if (s === 'inf') return Infinity;
    if (s === '-inf') return -Infinity;
    if (s === 'nan') return NaN;
    throw new PythonLibmError(`python3 answered ${JSON.stringify(s)}, which is not a float.hex() value`);
  }
  const mant = Number.parseInt(m[2]!, 16) + Number.parseInt(m[3]!, 16) / 16 ** m[3]!.length;
  let v = mant;
  let e = Number(m[4]);
  while (e > 1000) {
    v *= 2 ** 1000;
    e -= 1000;
  }
  while (e < -1000) {
    v *= 2 ** -1000;
    e += 1000;
  }
  v *= 2 ** e;
  return m[1] ? -v : v;
}

type Call = [LibmOp, number[]];
const keyOf = (op: LibmOp, args: number[]) => `${op}:${args.map(toHex).join(',')}`;

/** A Libm that records the calls it is asked for and answers from a table, else correctly rounded. */
export class TableLibm implements Libm {
  readonly calls: Call[] = [];
  constructor(private readonly table: Map<string, number> = new Map()) {}
  private get(op: LibmOp, args: number[], fallback: () => number): number {
    this.calls.push([op, args]);
    const v = this.table.get(keyOf(op, args));
    return v === undefined ? fallback() : v;
  }
  sin(x: number) {
    return this.get('sin', [x], () => crSin(x));
  }
  cos(x: number) {
    return this.get('cos', [x], () => crCos(x));
  }
  log(x: number) {
    return this.get('log', [x], () => crLog(x));
  }
  pow(x: number, y: number) {
    return this.get('pow', [x, y], () => crPow(x, y));
  }
}

export class PythonLibmError extends NgError {
  override readonly name = 'PythonLibmError';
  constructor(message: string) {
    super(MULTIVERSE_MATH_HARD_ERRORS.NG_ERR_PYTHON_LIBM, message);
  }
}

export class PythonLibm {
  private child: ChildProcessWithoutNullStreams | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: (string | null)[]) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();

  constructor(
    private readonly executable = 'python3',
    private readonly timeoutMs = 5000,
  ) {}

  private start(): ChildProcessWithoutNullStreams {
    if (this.child) return this.child;
    const child = spawn(this.executable, ['-c', SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    const fail = (err: Error) => {
      if (this.child === child) this.child = null;
      for (const [id, p] of this.pending) {
        clearTimeout(p.timer);
        p.reject(err);
        this.pending.delete(id);
      }
    };
    child.on('error', (err) => fail(new PythonLibmError(`cannot run ${this.executable}: ${err.message}`)));
    child.on('exit', (code) => fail(new PythonLibmError(`${this.executable} exited (code ${code})`)));
    child.stdin.on('error', () => undefined);
    createInterface({ input: child.stdout }).on('line', (line) => {
      let msg: { id: number; results: (string | null)[] };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch {
        return;
      }
      const p = this.pending.get(msg.id);
      if (!p) return;
      clearTimeout(p.timer);
      this.pending.delete(msg.id);
      p.resolve(msg.results);
    });
    return child;
  }

  /** Evaluate calls in CPython; a call CPython raises on yields undefined. */
  async evaluate(calls: Call[]): Promise<(number | undefined)[]> {
    if (calls.length === 0) return [];
    const child = this.start();
    const id = this.nextId++;
    const results = await new Promise<(string | null)[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new PythonLibmError(`${this.executable} did not answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      child.stdin.write(`${JSON.stringify({ id, calls: calls.map(([op, args]) => [op, args.map(toHex)]) })}\n`);
    });
    return results.map((r) => (r === null ? undefined : fromHex(r)));
  }

  /**
   * Run `fn` with CPython's libm values: a first pass records which libm calls `fn` makes, CPython
   * evaluates them, and a second pass uses those values.
   */
  async run<T>(fn: (libm: Libm) => T): Promise<T> {
    const probe = new TableLibm();
    try {
      fn(probe);
    } catch {
      // the second pass raises the same error if it is real
    }
    const values = await this.evaluate(probe.calls);
    const table = new Map<string, number>();
    probe.calls.forEach(([op, args], i) => {
      const v = values[i];
      if (v !== undefined) table.set(keyOf(op, args), v);
    });
    return fn(new TableLibm(table));
  }

  close(): void {
    const child = this.child;
    this.child = null;
    if (child) {
      child.stdin.end();
      child.kill();
    }
  }
}
