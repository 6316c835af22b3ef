// Server behaviour kept from upstream: config, routes, per-session state, the restricted
// builtins, the last-line `result`, timeouts, /end_session, and verify's shape.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MathWithCodeConfigSchema, MathWithCodeVerifyRequestSchema } from '../app.js';
import { buildApp, hasPython, pythonHas, Session, type App } from './helpers.js';

const params = {
  input: [{ role: 'user', content: 'What is 6*7? Answer in \\boxed{}.' }],
  tools: [
    {
      type: 'function',
      name: 'execute_python',
      parameters: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'], additionalProperties: false },
      strict: true,
    },
  ],
  parallel_tool_calls: false,
};
const response = (text: string) => ({
  id: 'resp_1',
  created_at: 1,
  model: 'm',
  object: 'response',
  output: [
    { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] },
  ],
  parallel_tool_calls: false,
  tool_choice: 'auto',
  tools: [],
});

describe('config (upstream test_sanity and defaults)', () => {
  it('accepts upstream config keys with upstream defaults and coerces like pydantic', () => {
    const c = MathWithCodeConfigSchema.parse({ name: 'x', host: '0.0.0.0', port: 8080, entrypoint: '', domain: 'math' });
    expect(c.max_execution_time).toBe(10);
    expect(c.answer_matching).toBe('normalized');
    expect(MathWithCodeConfigSchema.parse({ name: 'x', domain: 'math', max_execution_time: '3' }).max_execution_time).toBe(3);
  });

  it('refuses to start with an interpreter that does not run, saying what to change', async () => {
    await expect(buildApp({ python_executable: '/nonexistent/python3' })).rejects.toThrow(
      /cannot run the Python interpreter `\/nonexistent\/python3`.*python_executable/s,
    );
  });

  it('rejects a zero or fractional time limit and an unknown matching mode', () => {
    expect(MathWithCodeConfigSchema.safeParse({ name: 'x', domain: 'math', max_execution_time: 0 }).success).toBe(false);
    expect(MathWithCodeConfigSchema.safeParse({ name: 'x', domain: 'math', max_execution_time: 1.5 }).success).toBe(false);
    expect(MathWithCodeConfigSchema.safeParse({ name: 'x', domain: 'math', answer_matching: 'fuzzy' }).success).toBe(false);
  });
});

describe.skipIf(!hasPython)('execute_python', () => {
  let app: App;
  beforeAll(async () => {
    app = await buildApp({ max_execution_time: 1, kill_grace_s: 3, preload_modules: ['numpy'] });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('keeps variables within a session and isolates sessions', async () => {
    const a = new Session(app);
    const b = new Session(app);
    expect(await a.run('x = 41\ny = x + 1\nprint(y)')).toEqual({ success: true, stdout: '42\n', stderr: '', error_message: null, result: null });
    expect((await a.run('y * 2')).result).toBe('84');
    const other = await b.run('y');
    expect(other.success).toBe(false);
    expect(other.error_message).toBe("name 'y' is not defined");
  });

  it('returns str() of the last line, evaluated a second time, unless it starts with a statement keyword', async () => {
    const s = new Session(app);
    expect((await s.run('lst = []\nlst.append(1)')).result).toBe('None');
    expect((await s.run('len(lst)')).result).toBe('2'); // the append ran twice, as upstream
    expect((await s.run('format_x = 3\nformat_x')).result).toBeNull(); // prefix "for"
    expect((await s.run('"a" + "b"')).result).toBe('ab');
    expect((await s.run('1/0 if False else 5\n')).result).toBe('5');
    expect((await s.run('undefined_name_here = 1\nundefined_name_here + "x"')).result).toBeNull(); // eval error -> None
  });

  it('allows only upstream builtins (import works, sorted/class do not)', async () => {
    const s = new Session(app);
    expect((await s.run('import math\nmath.factorial(5)')).result).toBe('120');
    expect((await s.run('sorted([2, 1])')).error_message).toBe("name 'sorted' is not defined");
    expect((await s.run('class A:\n    pass')).error_message).toBe('__build_class__ not found');
    expect((await s.run('1/0')).error_message).toBe('division by zero');
  });

  it('keeps exec(code, globals, locals) scoping: top-level names are invisible inside functions', async () => {
    const s = new Session(app);
    const out = await s.run('k = 3\ndef f():\n    return k\nprint(f())');
    expect(out.success).toBe(false);
    expect(out.error_message).toBe("name 'k' is not defined");
  });

  it('discards captured output when the code fails', async () => {
    const s = new Session(app);
    expect(await s.run('print("partial")\nint("x")')).toEqual({
      success: false,
      stdout: '',
      stderr: '',
      error_message: "invalid literal for int() with base 10: 'x'",
      result: null,
    });
  });

  it('times out with upstream\'s message and keeps the session state', async () => {
    const s = new Session(app);
    await s.run('kept = 7');
    expect(await s.run('while True:\n    pass')).toEqual({ success: false, stdout: '', stderr: '', error_message: 'code timed-out', result: null });
    expect((await s.run('kept')).result).toBe('7');
  });

  it.skipIf(!pythonHas('numpy'))('preloads numpy as np', async () => {
    const s = new Session(app);
    expect((await s.run('np.arange(5).sum()')).result).toBe('10');
  });

  it('answers 422 with the field location for a bad body', async () => {
    const res = await app.inject({ method: 'POST', url: '/execute_python', payload: { source: 'print(1)' } });
    expect(res.statusCode).toBe(422);
    expect(JSON.parse(res.body).detail[0].loc).toEqual(['body', 'code']);
  });

  it('/end_session closes the interpreter, answers like upstream, and a later call starts fresh', async () => {
    const s = new Session(app);
    await s.run('z = 1');
    const end = await s.post('/end_session');
    expect(end).toEqual({ status: 200, body: { success: true, stdout: '', stderr: '', error_message: null, result: null } });
    expect((await s.run('z')).error_message).toBe("name 'z' is not defined");
    expect((await s.post('/end_session', {})).status).toBe(200); // a JSON body is fine too
  });
});

describe.skipIf(!hasPython)('verify', () => {
  let app: App;
  beforeAll(async () => {
    app = await buildApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers with upstream\'s keys and scores the boxed answer', async () => {
    const s = new Session(app);
    const res = await s.post('/verify', { responses_create_params: params, response: response('So \\boxed{42}.'), expected_result: '42', id: 9 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['responses_create_params', 'response', 'reward', 'extracted_answer', 'accuracy']);
    expect(res.body.reward).toBe(1);
    expect(res.body.extracted_answer).toBe('42');
    expect(res.body.accuracy).toBe(true);
    const wrong = await s.post('/verify', { responses_create_params: params, response: response('no box'), expected_result: '42' });
    expect([wrong.body.reward, wrong.body.extracted_answer, wrong.body.accuracy]).toEqual([0, null, false]);
  });

  it('closes the session\'s interpreter after verifying', async () => {
    const s = new Session(app);
    await s.run('w = 5');
    await s.post('/verify', { responses_create_params: params, response: response('\\boxed{5}'), expected_result: '5' });
    // The session's interpreter is gone: the next call of this session must not see `w`.
    expect((await s.run('w')).error_message).toBe("name 'w' is not defined");
  });

  it('answers 422 when expected_result is missing', async () => {
    const res = await app.inject({ method: 'POST', url: '/verify', payload: { responses_create_params: params, response: response('x') } });
    expect(res.statusCode).toBe(422);
    expect(JSON.stringify(JSON.parse(res.body).detail)).toContain('expected_result');
  });
});

describe.skipIf(!hasPython)('data/example.jsonl', () => {
  const rows = readFileSync(new URL('../data/example.jsonl', import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown> & { expected_result: string });
  // Code a model could send for each row; its output, boxed, must earn reward 1.
  const solutions = [
    'sum(d for d in range(1, 361) if 360 % d == 0)',
    'len([i for i in range(1, 1001) if i % 3 and i % 7])',
    '7 ** 2024 % 1000',
    'from fractions import Fraction\np = Fraction(len([1 for a in range(1, 7) for b in range(1, 7) if a + b in (2, 3, 5, 7, 11)]), 36)\nr"\\frac{%d}{%d}" % (p.numerator, p.denominator)',
    'def zeros(n):\n    z, p = 0, 5\n    while p <= n:\n        z, p = z + n // p, p * 5\n    return z\nn = 1\nwhile zeros(n) < 100:\n    n += 1\nprint(n)\nn',
  ];
  let app: App;
  beforeAll(async () => {
    app = await buildApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('has 5 valid rows whose expected answers are what the tool computes', async () => {
    expect(rows.length).toBe(5);
    for (const [i, row] of rows.entries()) {
      const s = new Session(app);
      const ran = await s.run(solutions[i]!);
      expect(ran.success, ran.error_message).toBe(true);
      const payload = { ...row, response: response(`The answer is \\boxed{${ran.result}}.`) };
      expect(MathWithCodeVerifyRequestSchema.safeParse(payload).success).toBe(true);
      const verdict = await s.post('/verify', payload);
      expect([i, verdict.body.reward]).toEqual([i, 1]);
    }
  });
});
