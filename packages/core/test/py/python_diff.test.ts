/**
 * The Python str helpers against CPython itself: the same inputs go through `python3` and through
 * core/py, and every answer must agree. Skipped when no python3 is on PATH.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { PyFloat, pyFloatFromStr, pyIntFromStr, pyIsAlpha, pyIsLower, pyIsUpper, pyLen, pyLstrip, pyRepr, pyRstrip, pySplit, pyStrCompare, pyStrip, pyStrRepr } from '@nemo-gym/core/py';

const python = spawnSync('python3', ['--version'], { encoding: 'utf8' }).status === 0 ? 'python3' : null;

/** Deterministic strings over the characters where Python and JavaScript disagree. */
function inputs(): string[] {
  const fixed = [
    '', ' ', 'abc', "it's", 'say "hi"', `both ' and "`, 'a\\b\nc\td\re', '\x00\x7f\x85\xa0\u200b\u2028é✓😀',
    '\u{e0001}', '\ud800', 'x\udc00y', '\u001c x \u0085', '\ufeffx', ' a\u3000b\u001fc ', 'ABC 123', '123', 'ǅ', 'ß and ǆ',
    'İı', 'Aé', 'A1', ' 1_000.5 ', '١٢٣', '.5e1', '5.', '-Infinity', 'nan', '1__0', '_1', '1_', '0x10', '1e', 'inf1',
    '. 5', '+0_1', ' -7 ', '1.0', '\uff11\uff12', '\u00b2', '\uff21', '😀', 'a😀', 'a\ud7ff', '\ue000', '\u3000\u2003x\u2029',
  ];
  const alphabet = [...'aZ1 _-\'"\\\n\t.', '\x1c', '\x85', '\xa0', '\xad', '\u0130', '\u0131', '\u2028', '\u3000', '\ufeff', '😀', '\ud800', '\u0663', 'ǅ', 'ß'];
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let k = 0; k < 150; k++) {
    let s = '';
    for (let len = rand(8); len > 0; len--) s += alphabet[rand(alphabet.length)];
    fixed.push(s);
  }
  return fixed;
}

const ORACLE = `
import json, sys
def num(f, s):
    try:
        v = f(s)
    except ValueError:
        return None
    if isinstance(v, float) and v != v:
        return 'nan'
    if v in (float('inf'), float('-inf')):
        return 'inf' if v > 0 else '-inf'
    return v
def sign(x):
    return (x > 0) - (x < 0)
data = json.loads(sys.stdin.read())
out = []
for s in data['strings']:
    out.append({
        'repr': repr(s), 'strip': s.strip(), 'lstrip': s.lstrip(), 'rstrip': s.rstrip(), 'split': s.split(),
        'isupper': s.isupper(), 'islower': s.islower(), 'isalpha': s.isalpha(), 'len': len(s),
        'float': num(float, s), 'int': num(int, s), 'cmp': sign((s > 'a😀') - (s < 'a😀')),
    })
values = [repr(v) for v in [None, True, 3, -0.0, 1e16, 2.5, [1, 'a', {'k': None}], {'x': [False], "it's": 'y'}]]
sys.stdout.write(json.dumps({'strings': out, 'values': values}))
`;

/** JSON cannot carry lone surrogates from Python (it escapes them, which JSON.parse restores). */
function runPython(strings: string[]): { strings: Record<string, unknown>[]; values: string[] } {
  const r = spawnSync(python!, ['-c', ORACLE], { input: JSON.stringify({ strings }), encoding: 'utf8', timeout: 20_000 });
  if (r.status !== 0) throw new Error(`python3 failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

function numOut(v: number | null): unknown {
  if (v === null) return null;
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  return v;
}

describe.skipIf(!python)('Python str helpers agree with CPython', () => {
  const strings = inputs();
  const want = python ? runPython(strings) : { strings: [], values: [] };
  strings.forEach((s, i) => {
    it(`${JSON.stringify(s)}`, () => {
      const got = {
        repr: pyStrRepr(s),
        strip: pyStrip(s),
        lstrip: pyLstrip(s),
        rstrip: pyRstrip(s),
        split: pySplit(s),
        isupper: pyIsUpper(s),
        islower: pyIsLower(s),
        isalpha: pyIsAlpha(s),
        len: pyLen(s),
        float: numOut(pyFloatFromStr(s)),
        int: numOut(pyIntFromStr(s)),
        cmp: Math.sign(pyStrCompare(s, 'a😀')),
      };
      expect(got).toEqual(want.strings[i]);
    });
  });

  it('repr of JSON-shaped values', () => {
    const got = [null, true, 3, new PyFloat(-0), new PyFloat(1e16), 2.5, [1, 'a', { k: null }], { x: [false], "it's": 'y' }].map((v) => pyRepr(v));
    expect(got).toEqual(want.values);
  });
});
