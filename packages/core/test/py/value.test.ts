/**
 * core/py's value and float helpers against CPython: the same JSON values go through `python3`
 * (json.loads, then the Python operation) and through core/py, and every answer must agree.
 * Skipped when no python3 is on PATH; the pydantic table also when pydantic is not installed.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  laxFloatFromStr,
  PyComplex,
  PyFloat,
  pyDecimalStr,
  pyEq,
  PyException,
  pyFloat,
  pyFloatDiv,
  pyFloatPow,
  pyIndex,
  pyIntIndex,
  pyIter,
  pyJsonLoadable,
  pyJsonLoadsPlain,
  pyLt,
  pyStr,
  pyStrReceiver,
  pyTruthy,
  pyTypeName,
} from '@nemo-gym/core/py';

const python = spawnSync('python3', ['--version'], { encoding: 'utf8' }).status === 0 ? 'python3' : null;
const pydantic = python !== null && spawnSync(python, ['-c', 'import pydantic'], { encoding: 'utf8' }).status === 0;

/** Runs `script` with `input` as JSON on stdin; the script prints one JSON document. */
function runPython(script: string, input: unknown): unknown {
  const r = spawnSync(python!, ['-c', script], { input: JSON.stringify(input), encoding: 'utf8', timeout: 20_000 });
  if (r.status !== 0) throw new Error(`python3 failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** JSON texts: each is decoded the same way on both sides (no integral floats, which JavaScript cannot tell from ints). */
const VALUES = [
  'null', 'true', 'false', '0', '1', '-3', '2.5', '-0.5', '1e-07', '123456.789', '""', '"a"', '" x "', '"😀é"', '"0"',
  '[]', '[0]', '[1, "a", null]', '[[1], {"k": true}]', '{}', '{"a": 1}', '{"x": [false], "it\'s": "y"}', '{"a": {"b": null}}',
  '"1_000.5"', '"١٢٣"', '" inf "', '"nan"', '"1e5"', '"abc"',
];

/** Outcome of a call: its value, or the exception's type and message. */
function outcome(f: () => unknown): unknown {
  try {
    const v = f();
    if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf';
    return v;
  } catch (e) {
    if (e instanceof PyException) return [e.pyType, e.pyMessage];
    throw e;
  }
}

const UNARY = String.raw`
import json, sys
def outcome(f):
    try:
        v = f()
    except Exception as e:
        return [type(e).__name__, str(e)]
    if isinstance(v, float) and v != v:
        return 'nan'
    if v in (float('inf'), float('-inf')):
        return 'inf' if v > 0 else '-inf'
    return v
out = []
for text in json.loads(sys.stdin.read()):
    v = json.loads(text)
    out.append({
        'type': type(v).__name__, 'bool': bool(v), 'str': str(v), 'float': outcome(lambda: float(v)),
        'list': outcome(lambda: list(v)), 'index': outcome(lambda: [10, 20, 30][v]), 'strip': outcome(lambda: v.strip and v),
        'operator_index': outcome(lambda: __import__('operator').index(v)),
    })
sys.stdout.write(json.dumps(out))
`;

const BINARY = String.raw`
import json, sys
out = []
values = [json.loads(t) for t in json.loads(sys.stdin.read())]
for a in values:
    row = []
    for b in values:
        try:
            lt = a < b
        except TypeError as e:
            lt = ['TypeError', str(e)]
        row.append([a == b, lt])
    out.append(row)
sys.stdout.write(json.dumps(out))
`;

/** core/py's answers to the questions UNARY asks CPython. */
function unaryAnswers(v: unknown): Record<string, unknown> {
  return {
    type: pyTypeName(v),
    bool: pyTruthy(v),
    str: pyStr(v),
    float: outcome(() => pyFloat(v)),
    list: outcome(() => pyIter(v)),
    index: outcome(() => pyIndex([10, 20, 30], v)),
    strip: outcome(() => pyStrReceiver(v, 'strip')),
    operator_index: outcome(() => pyIntIndex(v)),
  };
}

describe.skipIf(!python)('core/py value helpers agree with CPython', () => {
  const want = python ? (runPython(UNARY, VALUES) as Record<string, unknown>[]) : [];
  VALUES.forEach((text, i) => {
    it(`type, bool, str, float, list, index of ${text}`, () => {
      const v: unknown = JSON.parse(text);
      // Python's float() of a list or dict raises TypeError; pyFloat answers null for every refusal
      const w = want[i]!;
      const wantFloat = Array.isArray(w.float) ? null : w.float;
      expect(unaryAnswers(v)).toEqual({ ...w, float: wantFloat });
    });
  });

  it('a float that is integral (PyFloat) is a float, as in Python', () => {
    const texts = ['4.0', '0.0', '-2.0'];
    const floats = python ? (runPython(UNARY, texts) as Record<string, unknown>[]) : [];
    texts.forEach((text, i) => {
      const v = new PyFloat(Number(text));
      const w = floats[i]!;
      expect(unaryAnswers(v), text).toEqual(w);
      expect(pyEq(v, Number(text)), text).toBe(true);
      expect(pyLt(v, 5), text).toBe(Number(text) < 5);
    });
  });

  it('== and < over every pair', () => {
    const table = runPython(BINARY, VALUES) as [boolean, unknown][][];
    const values = VALUES.map((t) => JSON.parse(t) as unknown);
    values.forEach((a, i) =>
      values.forEach((b, j) => {
        const lt = outcome(() => pyLt(a, b));
        const [eq, wantLt] = table[i]![j]!;
        // CPython orders lists and dicts are unordered; core/py's pyLt compares numbers and strs only
        if (Array.isArray(a) && Array.isArray(b)) return expect(pyEq(a, b), `${VALUES[i]} == ${VALUES[j]}`).toBe(eq);
        expect([pyEq(a, b), lt], `${VALUES[i]} vs ${VALUES[j]}`).toEqual([eq, wantLt]);
      }),
    );
  });
});

const FLOATS = [0, -0, 1, -1, 2, 0.5, -0.5, 3, -2.5, 1e308, 1e-308, 5e-324, Infinity, -Infinity, NaN, 16.61324772583615, -8, 1.5, 2.0000001];

function floatOut(v: number | PyComplex): unknown {
  if (v instanceof PyComplex) return ['complex', v.repr()];
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  return Object.is(v, -0) ? '-0.0' : v;
}

const FLOAT_OPS = String.raw`
import json, math, sys
def enc(v):
    if isinstance(v, complex):
        return ['complex', repr(v)]
    if v != v:
        return 'nan'
    if v in (float('inf'), float('-inf')):
        return 'inf' if v > 0 else '-inf'
    if v == 0 and math.copysign(1, v) < 0:
        return '-0.0'
    return v
def dec(x):
    return {'nan': float('nan'), 'inf': float('inf'), '-inf': float('-inf'), '-0.0': -0.0}.get(x, x) if isinstance(x, str) else float(x)
def outcome(f):
    try:
        return enc(f())
    except Exception as e:
        return [type(e).__name__, str(e)]
xs = [dec(x) for x in json.loads(sys.stdin.read())]
sys.stdout.write(json.dumps([[[outcome(lambda: a / b), outcome(lambda: a ** b)] for b in xs] for a in xs]))
`;

describe.skipIf(!python)('core/py float arithmetic agrees with CPython', () => {
  it('a / b and a ** b (ZeroDivisionError, OverflowError, complex results)', () => {
    const table = runPython(FLOAT_OPS, FLOATS.map((x) => floatOut(x))) as unknown[][][];
    FLOATS.forEach((a, i) =>
      FLOATS.forEach((b, j) => {
        const div = outcome(() => floatOut(pyFloatDiv(a, b)));
        const pow = outcome(() => floatOut(pyFloatPow(a, b)));
        const [wantDiv, wantPow] = table[i]![j]!;
        expect(div, `${a} / ${b}`).toEqual(wantDiv);
        // JavaScript's Math.pow may differ from glibc's pow in the last bit; finite results agree to 1 ulp
        if (typeof pow === 'number' && typeof wantPow === 'number') expect(Math.abs(pow - wantPow) <= Math.abs(wantPow) * 2.3e-16, `${a} ** ${b}: ${pow} vs ${wantPow}`).toBe(true);
        else if (Array.isArray(pow) && pow[0] === 'complex') expect(pow[0], `${a} ** ${b}`).toBe((wantPow as unknown[])[0]);
        else expect(pow, `${a} ** ${b}`).toEqual(wantPow);
      }),
    );
  });

  it('str(Decimal(text)) of decimal literals', () => {
    const texts = ['0', '1.0', '1.234e-5', '1.0e+20', '0.000001', '0.0000001', '123.450', '-0.5', '1e3', '12e-2', '.5', '5.', '-1.5E+7', '0.00', '100'];
    const want = runPython('import json, sys, decimal\nsys.stdout.write(json.dumps([str(decimal.Decimal(t)) for t in json.loads(sys.stdin.read())]))', texts);
    expect(texts.map(pyDecimalStr)).toEqual(want);
  });
});

describe.skipIf(!python)('core/py json helpers agree with CPython', () => {
  it('json.loads: what loads, and the plain value it gives', () => {
    const texts = ['{"a": [1, 2.5, null]}', 'NaN', '[Infinity, -Infinity]', '{"__proto__": 1}', '[1,]', "{'a': 1}", ' 7 ', '', '['.repeat(900) + ']'.repeat(900), '['.repeat(2000) + ']'.repeat(2000)];
    const want = runPython(
      String.raw`
import json, sys
out = []
for t in json.loads(sys.stdin.read()):
    try:
        v = json.loads(t)
        out.append([True, json.dumps(v) if len(t) < 100 else None])
    except (ValueError, RecursionError):
        out.append([False, None])
sys.stdout.write(json.dumps(out))`,
      texts,
    ) as [boolean, string | null][];
    texts.forEach((t, i) => {
      const [ok, dumped] = want[i]!;
      expect(pyJsonLoadable(t), t.slice(0, 20)).toBe(ok);
      if (ok && dumped !== null) {
        const plain = pyJsonLoadsPlain(t);
        expect(plain).toEqual(JSON.parse(dumped.replace(/\bNaN\b/g, '"nan"').replace(/-Infinity/g, '"-inf"').replace(/Infinity/g, '"inf"'), (_k, v: unknown) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v)));
      }
    });
  });
});

describe.skipIf(!pydantic)("pydantic's lax float from a str agrees with pydantic", () => {
  it('laxFloatFromStr', () => {
    const texts = [' 1.5 ', '1_000.5', '١٢٣', 'inf', 'Infinity', '-nan', 'NaN', '1e5', '.5', '5.', '1__0', '_1', '0x10', '\u00851\u0085', '\x1c1', '1_.5', '+1', '\u30001', 'infinit', '1e', '1_0e1_0', '1.5_', ' 1_0', '1_e5', '+_1', '-1_0', '++1', '', ' ', 'seven', '1\ufeff'];
    const want = runPython(
      String.raw`
import json, sys
from pydantic import TypeAdapter
ta = TypeAdapter(float)
out = []
for t in json.loads(sys.stdin.read()):
    try:
        v = ta.validate_python(t)
        out.append('nan' if v != v else ('inf' if v == float('inf') else ('-inf' if v == float('-inf') else v)))
    except Exception:
        out.append(None)
sys.stdout.write(json.dumps(out))`,
      texts,
    );
    expect(texts.map((t) => outcome(() => laxFloatFromStr(t)))).toEqual(want);
  });
});
