import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sharedPath } from '@nemo-gym/core/config';
import { server } from '../app.js';
import { callFunction } from '../src/universe.js';
import { groundTruthOfQuestion } from './expr.js';

type App = Awaited<ReturnType<typeof server.build>>;
let app: App;

beforeAll(async () => {
  app = await server.build({ config: { name: 'multiverse_math_hard', domain: 'agent' } });
});
afterAll(async () => {
  await app.close();
});

async function call(path: string, body: unknown) {
  const res = await app.inject({ method: 'POST', url: `/${path}`, payload: body as object, headers: { 'content-type': 'application/json' } });
  return { status: res.statusCode, text: res.body, json: res.json() as Record<string, unknown> };
}

const readJsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, any>);

function response(output: unknown[]) {
  return { id: 'resp_1', created_at: 1.0, model: 'gpt-4.1-2025-04-14', object: 'response', output, parallel_tool_calls: true, tool_choice: 'auto', tools: [] };
}

function verifyBody(outputs: string[], groundTruth: unknown, extra: Record<string, unknown> = {}) {
  const output: unknown[] = [];
  outputs.forEach((o, i) => {
    output.push({ type: 'function_call', call_id: `call_${i}`, name: 'add', arguments: '{}', id: `fc_${i}`, status: 'completed' });
    output.push({ type: 'function_call_output', call_id: `call_${i}`, output: o });
  });
  return { responses_create_params: { input: [{ role: 'user', content: 'q' }] }, response: response(output), ground_truth: groundTruth, id: 1, depth: 1, breadth: 1, ...extra };
}

describe('tools (upstream test_app cases)', () => {
  it.each([
    ['multiply', { a: 5.0, b: 2.0 }, 1.1 * 5 * 2],
    ['divide', { a: 10.0, b: 2.0 }, (0.5 * 10) / 2],
    ['add', { a: 3.0, b: 7.0 }, 3 + 7 + 1.2],
    ['return_constant', { a: 42.0 }, 42],
    ['sin', { radians: Math.PI / 2 }, 6.123233995736766e-17], // math.cos(pi/2)
    ['cos', { radians: Math.PI }, 1.2246467991473532e-16], // math.sin(pi)
    ['subtract', { a: 15.0, b: 5.0 }, 15 - 5 - 3],
    ['power', { a: 2.0, b: 3.0 }, 32],
    ['log', { a: 100.0, base: 8.5 }, 2], // math.log(100, 10)
    ['pi', {}, Math.E],
    ['negate', { a: 7.0 }, 7],
  ])('%s(%j)', async (name, args, expected) => {
    const r = await call(name, args);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ solution: expected });
  });

  it('writes solutions as Python floats', async () => {
    expect((await call('power', { a: 8, b: 8 })).text).toBe('{"solution":1073741824.0}');
    expect((await call('add', { a: 6, b: 10 })).text).toBe('{"solution":17.2}');
    expect((await call('multiply', { a: 1e10, b: 1e10 })).text).toBe('{"solution":1.1e+20}');
    expect((await call('divide', { a: 1, b: 1e6 })).text).toBe('{"solution":5e-07}');
    expect((await call('multiply', { a: 1e200, b: 1e200 })).text).toBe('{"solution":null}'); // inf
  });

  it('reproduces CPython results where V8 Math.* differs', async () => {
    // math.log(3.0, abs(7.0 + 1.5)) and math.cos(6.0) from CPython
    expect((await call('log', { a: 3, base: 7 })).text).toBe('{"solution":0.5133543567051609}');
    expect((await call('sin', { radians: 6 })).text).toBe('{"solution":0.960170286650366}');
    expect((await call('cos', { radians: 2.5 })).text).toBe('{"solution":0.5984721441039565}');
  });

  it('accepts lax floats like pydantic and ignores unknown keys', async () => {
    expect((await call('add', { a: '1.5', b: 2, c: 'x' })).json).toEqual({ solution: 4.7 });
    expect((await call('return_constant', { a: 3, b: null })).json).toEqual({ solution: 3 });
  });
});

describe('tool errors (model-visible text as upstream)', () => {
  it.each([
    ['nope', { a: 1 }, 404, 'Function not found'],
    ['add', { a: 1 }, 500, "add() missing 1 required positional argument: 'b'"],
    ['add', {}, 500, "add() missing 2 required positional arguments: 'a' and 'b'"],
    ['sin', { a: 1, radians: 1 }, 500, "sin() got an unexpected keyword argument 'a'"],
    ['pi', { base: 2 }, 500, "pi() got an unexpected keyword argument 'base'"],
    ['divide', { a: 1, b: 0 }, 500, 'float division by zero'],
    ['log', { a: 0, base: 1 }, 500, 'math domain error'],
    ['log', { a: 5, base: -0.5 }, 500, 'float division by zero'],
    ['sin', { radians: 'inf' }, 500, 'math domain error'],
    ['power', { a: 0, b: -3 }, 500, '0.0 cannot be raised to a negative power'],
    ['power', { a: 10, b: 400 }, 500, "(34, 'Numerical result out of range')"],
  ])('%s(%j) -> %i', async (name, args, status, detail) => {
    const r = await call(name, args);
    expect(r.status).toBe(status);
    expect(r.json).toEqual({ detail });
  });

  it('a negative base with a fractional exponent fails the float response model, as in pydantic', async () => {
    const r = await call('power', { a: -8, b: -1.5 });
    expect(r.status).toBe(500);
    expect(r.json.detail).toBe(
      '1 validation error for MultiVerseMathHardResponse\nsolution\n  Input should be a valid number [type=float_type, input_value=(1.7319121124709868e-16+2.8284271247461903j), input_type=complex]\n    For further information visit https://errors.pydantic.dev/2.11/v/float_type',
    );
    // repr longer than 50 characters is shortened the way pydantic does
    // CPython: repr((-1.2345678901234567e-70) ** 1.5) == '(-2.5198493469436654e-121-1.3717420939643347e-105j)'
    const long = await call('power', { a: -1.2345678901234567e-70, b: -0.5 });
    expect(long.json.detail).toContain('input_value=(-2.5198493469436654e-121....3717420939643347e-105j), input_type=complex');
    // an underflowing modulus: CPython gives (-2.51984937e-316-1.3717420939643346e-300j) and -0j
    expect((await call('power', { a: -1.2345678901234567e-200, b: -0.5 })).json.detail).toContain('input_value=(-2.51984937e-316-1.3717420939643346e-300j),');
    expect((await call('power', { a: -1.2345678901234567e-200, b: -0.3 })).json.detail).toContain('input_value=-0j,');
    expect((await call('power', { a: -3.3333333333333335e250, b: -0.5 })).json.detail).toBe('complex exponentiation');
  });

  it('answers 422 with the failing field for bad bodies, never 500', async () => {
    const r1 = await call('add', { a: 'seven', b: 1 });
    expect(r1.status).toBe(422);
    expect(r1.json.detail).toEqual([{ type: 'float_parsing', loc: ['body', 'a'], msg: 'Input should be a valid number, unable to parse string as a number', input: 'seven' }]);
    const r2 = await call('add', { a: [1], b: { x: 1 } });
    expect(r2.status).toBe(422);
    expect((r2.json.detail as { loc: unknown[] }[]).map((d) => d.loc)).toEqual([
      ['body', 'a'],
      ['body', 'b'],
    ]);
    const r3 = await call('add', [1, 2]);
    expect(r3.status).toBe(422);
    const r4 = await app.inject({ method: 'POST', url: '/add', payload: '{"a": 1,', headers: { 'content-type': 'application/json' } });
    expect(r4.statusCode).toBe(422);
  });
});

describe('verify', () => {
  it('upstream case: add(1, 3) -> 5.2 matches ground truth "[5.2]" (breadth given as a string)', async () => {
    const r = await call('verify', verifyBody(['{"solution": 5.2}'], '[5.2]', { breadth: '1' }));
    expect(r.status).toBe(200);
    expect(r.json.reward).toBe(1.0);
    expect(Object.keys(r.json).sort()).toEqual(['response', 'responses_create_params', 'reward']);
  });

  it('needs every ground-truth value; compares floats exactly; ignores bad tool outputs', async () => {
    expect((await call('verify', verifyBody(['{"solution": 5.2}'], '[5.2, 1.0]'))).json.reward).toBe(0.0);
    expect((await call('verify', verifyBody(['{"solution": 5.2}', '{"solution": 1}'], '[1.0, 5.2]'))).json.reward).toBe(1.0);
    expect((await call('verify', verifyBody(['{"solution": 5.200000000000001}'], '[5.2]'))).json.reward).toBe(0.0);
    expect((await call('verify', verifyBody(['{"detail":"float division by zero"}', 'not json', '{"solution": "5.2"}'], '[5.2]'))).json.reward).toBe(1.0);
    expect((await call('verify', verifyBody([], '[]'))).json.reward).toBe(1.0);
    // Python: None in [None] is True, so a null ground truth matches a failed tool call
    expect((await call('verify', verifyBody(['{"detail":"x"}'], '[null]'))).json.reward).toBe(1.0);
  });

  it('rejects unusable ground truths and missing fields with 422', async () => {
    const bad = await call('verify', verifyBody([], '[5.2'));
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.json.detail)).toContain('ground_truth');
    expect((await call('verify', verifyBody([], '5.2'))).status).toBe(422);
    expect((await call('verify', { ...verifyBody([], '[1]'), id: undefined })).status).toBe(422);
    expect((await call('verify', verifyBody([], '[1]', { depth: 'deep' }))).status).toBe(422);
    // A real list is accepted (upstream's field type allows it; upstream then failed with a 500)
    expect((await call('verify', verifyBody(['{"solution": 2.0}'], [2.0]))).json.reward).toBe(1.0);
  });
});

describe('ground truths recomputed from the questions match the data bit for bit', () => {
  const ours = fileURLToPath(new URL('../data/example.jsonl', import.meta.url));
  it('our example rows', () => {
    const rows = readJsonl(ours);
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      const q = row.responses_create_params.input[0].content as string;
      expect(groundTruthOfQuestion(q)).toEqual(JSON.parse(row.ground_truth));
      expect(row.responses_create_params.tools).toHaveLength(11);
    }
  });

  const upstream = join(sharedPath('upstream-data', 'multiverse_math_hard'), 'example.jsonl');
  it.skipIf(!existsSync(upstream))('upstream example rows (ground truths computed by CPython)', () => {
    for (const row of readJsonl(upstream)) {
      const q = row.responses_create_params.input[0].content as string;
      expect(groundTruthOfQuestion(q)).toEqual(JSON.parse(row.ground_truth));
    }
  });
});

const rolloutsPath = join(sharedPath('upstream-data', 'multiverse_math_hard'), 'example_rollouts.jsonl');
describe.skipIf(!existsSync(rolloutsPath))('parity with upstream rollouts', () => {
  it('every recorded tool output is reproduced and every recorded reward is given', async () => {
    const rows = readJsonl(rolloutsPath);
    expect(rows).toHaveLength(5);
    let calls = 0;
    for (const row of rows) {
      const output = row.response.output as Record<string, any>[];
      // Each function call, replayed on our tools, gives the same solution upstream recorded.
      for (const item of output) {
        if (item.type !== 'function_call') continue;
        const recorded = output.find((o) => o.type === 'function_call_output' && o.call_id === item.call_id)!;
        const r = await call(item.name, JSON.parse(item.arguments));
        expect(r.json.solution).toBe(JSON.parse(recorded.output).solution);
        calls++;
      }
      // Rollout rows do not keep the ground truth: recompute it from the question.
      const q = row.responses_create_params.input[0].content as string;
      const gt = groundTruthOfQuestion(q);
      // These rows predate the current create-params schema (tool_choice: null); verify never reads it.
      const params = { ...row.responses_create_params };
      if (params.tool_choice === null) delete params.tool_choice;
      row.responses_create_params = params;
      const v = await call('verify', { ...row, ground_truth: JSON.stringify(gt), id: 0, depth: 1, breadth: gt.length });
      expect(v.status).toBe(200);
      expect(v.json.reward).toBe(row.reward);
      // and a wrong ground truth is not rewarded
      const w = await call('verify', { ...row, ground_truth: JSON.stringify([gt[0]! + 1]), id: 0, depth: 1, breadth: 1 });
      expect(w.json.reward).toBe(0.0);
    }
    expect(calls).toBeGreaterThanOrEqual(6);
  });

  it('the tools agree with direct calls for the recorded arguments', () => {
    expect(callFunction('sin', { radians: 4 })).toBe(-0.6536436208636119);
    expect(callFunction('log', { a: 2, base: 2 })).toBe(0.5532947556651122);
  });
});
