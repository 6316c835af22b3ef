/**
 * The official JSON Schema 2020-12 conformance suite (../shared/json-schema-test-suite: required,
 * optional and format tests; groups needing the suite's remote documents are left out), checked two ways:
 * 1. the validator alone (no strictify) against the suite's `valid`, except where upstream's
 *    validator differs on purpose (`format` not asserted, Python regexes, no draft-07
 *    `dependencies`; each listed below and in the README);
 * 2. the full reward (`scoreJson`: strictify, parse, validate) against upstream's reward: the same
 *    expectation where strictify leaves the schema as it is, and the reward upstream's code
 *    recorded (fixtures/conformance_strictified.json) where strictify changes it.
 * A sample also goes through POST /verify over HTTP.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core/config';
import { pyDumps } from '@nemo-gym/core/data';
import { pyJsonLoads, toPlain, type PyValue } from '@nemo-gym/core/py';
import { server } from '../app.js';
import { checkSchema, isValid, prepare } from '../src/jsonschema.js';
import { scoreJson, strictify } from '../src/validate.js';

const suiteDir = sharedPath('json-schema-test-suite', 'tests', 'draft2020-12');
const present = existsSync(suiteDir);
if (!present) console.log(`skipping the JSON Schema conformance suite: ${suiteDir} is absent (it lives in ../shared)`);

interface Case {
  key: string;
  file: string;
  group: string;
  test: string;
  valid: boolean;
  /** Schema and answer as Python's json.dumps writes them (big integers kept exact). */
  schemaStr: string;
  answer: string;
  schema: unknown;
  data: unknown;
  strictified: boolean;
}

function jsonFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) return jsonFiles(p);
      return name.endsWith('.json') ? [p] : [];
    });
}

function loadCases(): Case[] {
  const cases: Case[] = [];
  for (const path of jsonFiles(suiteDir)) {
    const file = relative(suiteDir, path).split('\\').join('/');
    const groups = pyJsonLoads(readFileSync(path, 'utf8')) as PyValue[];
    for (const g of groups as Map<string, PyValue>[]) {
      const schemaStr = pyDumps(g.get('schema'));
      if (schemaStr.includes('localhost:1234')) continue; // needs the suite's remote documents
      const schema = toPlain(g.get('schema')!);
      const strict = JSON.parse(JSON.stringify(schema)) as unknown;
      strictify(strict);
      const strictified = JSON.stringify(strict) !== JSON.stringify(schema);
      for (const t of g.get('tests') as Map<string, PyValue>[]) {
        const group = g.get('description') as string;
        const test = t.get('description') as string;
        cases.push({
          key: `${file} | ${group} | ${test}`,
          file,
          group,
          test,
          valid: t.get('valid') as boolean,
          schemaStr,
          answer: pyDumps(t.get('data')),
          schema,
          data: toPlain(t.get('data')!),
          strictified,
        });
      }
    }
  }
  return cases;
}

/**
 * Where upstream's validator gives another verdict than the suite, on purpose (the README lists
 * these too). `test` absent: every test of the group.
 */
const UPSTREAM_DIFFERS: { file: string; group: string; test?: string; reward: number; reason: string }[] = [
  // `\p{...}` and `\cX` are not Python regex syntax: the meta-schema check (format "regex") rejects the schema
  ...[
    ['pattern.json', 'pattern with Unicode property escape requires unicode mode'],
    ['patternProperties.json', 'patternProperties with Unicode property escape'],
    ['optional/ecmascript-regex.json', 'ECMA 262 regex escapes control codes with \\c and upper letter'],
    ['optional/ecmascript-regex.json', 'ECMA 262 regex escapes control codes with \\c and lower letter'],
    ['optional/ecmascript-regex.json', 'patterns always use unicode semantics with pattern'],
    ['optional/ecmascript-regex.json', 'pattern with non-ASCII digits'],
    ['optional/ecmascript-regex.json', 'patterns always use unicode semantics with patternProperties'],
    ['optional/ecmascript-regex.json', 'patternProperties with non-ASCII digits'],
  ].map(([file, group]) => ({ file: file!, group: group!, reward: 0, reason: 'not a Python regex: the schema is invalid' })),
  // Python's \d, \w, \s are Unicode-aware (ECMA-262's are ASCII-only; \s differs on U+FEFF)
  ...[
    ['ECMA 262 \\d matches ascii digits only', 'NKO DIGIT ZERO does not match (unlike e.g. Python)', 1],
    ['ECMA 262 \\d matches ascii digits only', 'NKO DIGIT ZERO (as \\u escape) does not match', 1],
    ['ECMA 262 \\D matches everything but ascii digits', 'NKO DIGIT ZERO matches (unlike e.g. Python)', 0],
    ['ECMA 262 \\D matches everything but ascii digits', 'NKO DIGIT ZERO (as \\u escape) matches', 0],
    ['ECMA 262 \\w matches ascii letters only', 'latin-1 e-acute does not match (unlike e.g. Python)', 1],
    ['ECMA 262 \\W matches everything but ascii letters', 'latin-1 e-acute matches (unlike e.g. Python)', 0],
    ['ECMA 262 \\s matches whitespace', 'zero-width whitespace matches', 0],
    ['ECMA 262 \\S matches everything but whitespace', 'zero-width whitespace does not match', 1],
    ['\\w in patterns matches [A-Za-z0-9_], not unicode letters', 'literal unicode character in json string', 1],
    ['\\w in patterns matches [A-Za-z0-9_], not unicode letters', 'unicode character in hex format in string', 1],
    ['\\d in pattern matches [0-9], not unicode digits', 'non-ascii digits (BENGALI DIGIT FOUR, BENGALI DIGIT TWO)', 1],
    ['\\w in patternProperties matches [A-Za-z0-9_], not unicode letters', 'literal unicode character in json string', 1],
    ['\\w in patternProperties matches [A-Za-z0-9_], not unicode letters', 'unicode character in hex format in string', 1],
    ['\\d in patternProperties matches [0-9], not unicode digits', 'non-ascii digits (BENGALI DIGIT FOUR, BENGALI DIGIT TWO)', 1],
  ].map(([group, test, reward]) => ({
    file: 'optional/ecmascript-regex.json',
    group: group as string,
    test: test as string,
    reward: reward as number,
    reason: 'Python regex classes are Unicode-aware',
  })),
];

function expectedUnstrict(c: Case): { reward: number; reason?: string } {
  if (c.file.startsWith('optional/format/')) return { reward: 1, reason: 'format is an annotation (not asserted)' };
  if (c.file === 'optional/dependencies-compatibility.json') return { reward: 1, reason: 'draft-07 `dependencies` is not a 2020-12 keyword' };
  const o = UPSTREAM_DIFFERS.find((d) => d.file === c.file && d.group === c.group && (d.test === undefined || d.test === c.test));
  if (o) return { reward: o.reward, reason: o.reason };
  return { reward: c.valid ? 1 : 0 };
}

const recorded = JSON.parse(readFileSync(new URL('./fixtures/conformance_strictified.json', import.meta.url), 'utf8')) as {
  rewards: Record<string, number>;
};

function expectedReward(c: Case): number {
  if (c.strictified) return recorded.rewards[c.key] ?? NaN;
  return expectedUnstrict(c).reward;
}

describe.skipIf(!present)('JSON Schema 2020-12 conformance suite', () => {
  const cases = present ? loadCases() : [];

  it('the suite is the expected one: every group without remote references is here', () => {
    expect(cases.length).toBe(2157);
    const strictKeys = cases.filter((c) => c.strictified).map((c) => c.key);
    expect(strictKeys.sort()).toEqual(Object.keys(recorded.rewards).sort());
  });

  it('the validator alone gives the suite verdict, except where upstream differs on purpose', () => {
    const wrong: string[] = [];
    // the tests of a group share their schema object: check and index it once
    const checked = new Map<unknown, ReturnType<typeof prepare> | null>();
    const preparedFor = (schema: unknown) => {
      if (!checked.has(schema)) checked.set(schema, checkSchema(schema) ? prepare(schema) : null);
      return checked.get(schema)!;
    };
    for (const c of cases) {
      let got: boolean;
      try {
        const prepared = preparedFor(c.schema);
        got = prepared !== null && isValid(prepared, c.data);
      } catch (e) {
        got = false;
        if (!(e instanceof Error && e.name === 'SchemaEvalError')) wrong.push(`${c.key}: threw ${String(e)}`);
      }
      if (Number(got) !== expectedUnstrict(c).reward) wrong.push(`${c.key}: ${got}`);
    }
    const differ = cases.filter((c) => expectedUnstrict(c).reason && Number(c.valid) !== expectedUnstrict(c).reward).length;
    console.log(`conformance (validator): ${cases.length - wrong.length}/${cases.length}; ${differ} differ from the suite on purpose`);
    expect(wrong).toEqual([]);
  });

  it('the reward (strictify, parse, validate) equals upstream reward on every case', () => {
    const wrong: string[] = [];
    for (const c of cases) {
      const r = scoreJson(c.schemaStr, c.answer);
      if (r.reward !== expectedReward(c) || r.stage === 'internal_error' || r.stage === 'unsupported') {
        wrong.push(`${c.key}: expected ${expectedReward(c)}, got ${JSON.stringify(r)}`);
      }
    }
    console.log(`conformance (reward): ${cases.length - wrong.length}/${cases.length} agree with upstream`);
    expect(wrong).toEqual([]);
  });

  describe('a sample over HTTP', () => {
    type App = Awaited<ReturnType<typeof server.build>>;
    let app: App;
    let url: string;
    beforeAll(async () => {
      app = await server.build({ config: { name: 'structured_outputs', domain: 'instruction_following', num_workers: 2 } });
      await app.listen({ host: '127.0.0.1', port: 0 });
      url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/verify`;
    });
    afterAll(async () => {
      await app.close();
    });

    it('POST /verify answers 200 with upstream reward (every 32nd case, and the groups that used to fail)', async () => {
      const hardFiles = /^(optional\/)?(dynamicRef|float-overflow)\.json$/;
      const hardGroups = /Javascript object property names|URN ref with nested pointer|with \$dynamicRef|cousins|nested items|if without then|ECMA 262 \\[sSwW]|dependents/;
      const sample = cases.filter((c, i) => i % 32 === 0 || hardFiles.test(c.file) || hardGroups.test(c.group));
      const wrong: string[] = [];
      let next = 0;
      const worker = async () => {
        while (next < sample.length) {
          const c = sample[next++]!;
          const res = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              responses_create_params: { input: [] },
              response: {
                id: 'r',
                created_at: 0,
                model: 'm',
                object: 'response',
                output: [{ id: 'm', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: c.answer, annotations: [] }] }],
                parallel_tool_calls: false,
                tool_choice: 'none',
                tools: [],
              },
              schema_str: c.schemaStr,
              schema_type: 'json',
            }),
            signal: AbortSignal.timeout(30_000),
          });
          const json = (await res.json()) as { reward?: number };
          if (res.status !== 200 || json.reward !== expectedReward(c)) wrong.push(`${c.key}: HTTP ${res.status} ${JSON.stringify(json).slice(0, 200)}`);
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      console.log(`conformance over HTTP: ${sample.length - wrong.length}/${sample.length} cases answered 200 with upstream reward`);
      expect(wrong).toEqual([]);
    }, 60_000);
  });
});
