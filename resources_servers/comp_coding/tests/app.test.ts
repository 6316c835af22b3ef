// Upstream's test cases (spec §11) and the grading semantics of the LiveCodeBench runner.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, hasPython, py, request, verify, type App } from './helpers.js';

describe('config', () => {
  it('num_processes, unit_test_timeout_secs and debug are required', async () => {
    const { server } = await import('../app.js');
    await expect(server.build({ config: { name: 'comp_coding', domain: 'coding', num_processes: 1, debug: false } })).rejects.toThrow(/unit_test_timeout_secs/);
  });
});

describe.skipIf(!hasPython)('verify (upstream cases)', () => {
  let app: App;
  beforeAll(async () => {
    app = await buildApp({ num_processes: 1 });
  });
  afterAll(async () => {
    await app?.close();
  });

  const square = { inputs: ['2\n', '5\n'], outputs: ['4', '25'] };

  it('passes a correct program', async () => {
    const r = await verify(app, request(py('n=int(input())\nprint(n*n)'), square));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ reward: 1.0, result: [true, true], extracted_model_code: 'n=int(input())\nprint(n*n)' });
    expect(r.body.metadata['execution time']).toBeGreaterThanOrEqual(0);
    expect(r.body.unit_tests_time_taken).toBeGreaterThan(0);
    expect(Object.keys(r.body).sort()).toEqual(
      ['extracted_model_code', 'extracted_model_output', 'metadata', 'responses_create_params', 'response', 'result', 'reward', 'unit_tests_time_taken'].sort(),
    );
  });

  it('wrong answer: -2 with the line that differs', async () => {
    const r = await verify(app, request(py('n=int(input())\nprint(n+1)'), { inputs: ['3\n'], outputs: ['9'] }));
    expect(r.body.reward).toBe(0.0);
    expect(r.body.result).toEqual([-2]);
    expect(r.body.metadata).toEqual({ output: '4\n', inputs: '3\n', expected: '9', error_code: -2, error_message: 'Wrong answer at output_line_idx=0: 4 != 9' });
  });

  it('a missing response is a validation error', async () => {
    const body = request(py('print(1)'), square) as Record<string, unknown>;
    delete body.response;
    expect((await verify(app, body)).status).toBe(422);
  });

  it('no fenced block: 0.0 with the output and no code', async () => {
    const r = await verify(app, request('n=int(input())\nprint(n*n)', square));
    expect(r.body).toMatchObject({ reward: 0.0, extracted_model_output: 'n=int(input())\nprint(n*n)', extracted_model_code: null, result: null });
  });

  it('syntax error: -4 "Error during testing"', async () => {
    const r = await verify(app, request(py("print('hello'  # Missing closing parenthesis"), square));
    expect(r.body.reward).toBe(0.0);
    expect(r.body.result).toEqual([-4]);
    expect(r.body.metadata).toEqual({ error_code: -4, error_message: "Error during testing: '(' was never closed (<string>, line 1)" });
  });

  it('runtime error: -4 "Runtime Error"', async () => {
    const r = await verify(app, request(py('n=int(input())\nprint(n/0)'), square));
    expect(r.body.result).toEqual([-4]);
    expect(r.body.metadata).toMatchObject({ error: "ZeroDivisionError('division by zero')", error_code: -4, error_message: 'Runtime Error', inputs: '2\n', expected: '4' });
    expect(r.body.metadata.traceback).toContain('ZeroDivisionError');
  });

  it('empty output text: only reward 0.0; missing verifier_metadata after that: 500', async () => {
    const empty = await verify(app, request('   ', square));
    expect(empty.body).toMatchObject({ reward: 0.0, extracted_model_output: null, result: null, metadata: null, unit_tests_time_taken: null });
    const body = request('no code here', square) as Record<string, unknown>;
    delete body.verifier_metadata;
    expect((await verify(app, body)).status).toBe(500);
    expect((await verify(app, { ...body, verifier_metadata: { unit_tests: { inputs: 'x' } } })).status).toBe(500);
  });
});

describe.skipIf(!hasPython)('LiveCodeBench runner semantics', () => {
  let app: App;
  beforeAll(async () => {
    app = await buildApp({ num_processes: 2, unit_test_timeout_secs: 2 });
  });
  afterAll(async () => {
    await app?.close();
  });
  const run = async (code: string, tests: Record<string, unknown>) => (await verify(app, request(py(code), tests))).body;

  it('stdin: for line in sys.stdin works (upstream later fix), read() and readlines() see the whole input', async () => {
    const tests = { inputs: ['1 2\n3 4\n'], outputs: ['3\n7'] };
    expect((await run('import sys\nfor line in sys.stdin:\n    a, b = map(int, line.split())\n    print(a + b)', tests)).result).toEqual([true]);
    expect((await run('import sys\nfor l in sys.stdin.read().split("\\n"):\n    if l: print(sum(map(int, l.split())))', tests)).result).toEqual([true]);
    expect((await run('import sys\nfor l in sys.stdin.readlines():\n    if l: print(sum(map(int, l.split())))', tests)).result).toEqual([true]);
    expect((await run('from sys import stdin\nprint(sum(map(int, stdin.readline().split())))\nprint(sum(map(int, stdin.readline().split())))', tests)).result).toEqual([true]);
  });

  it('the main guard is hoisted; the prelude names need no import; decimals compare as numbers', async () => {
    const code = "def main():\n    n = int(input())\n    print(gcd(n, 6), ' 0.50 ')\nif __name__ == '__main__':\n    main()";
    expect((await run(code, { inputs: ['4\n'], outputs: ['2 0.5'] })).result).toEqual([true]);
  });

  it('stops at the first failing test; mismatched line counts are reported as such', async () => {
    const r = await run('n = int(input())\nprint(n)\nif n == 2: print(n)', { inputs: ['1', '2', '3'], outputs: ['1', '2', '3'] });
    expect(r.result).toEqual([true, -2]);
    expect(r.metadata.error_message).toBe('Wrong answer: mismatched output length');
  });

  it('time limit per test: -3', async () => {
    const r = await run('while True:\n    pass', { inputs: ['1'], outputs: ['1'] });
    expect(r.result).toEqual([-3]);
    expect(r.metadata).toMatchObject({ error: 'TimeoutException()', error_code: -3, error_message: 'Time Limit Exceeded' });
  });

  it('call-based: JSON arguments, Solution class, tuples as lists, wrong answers as false, float tolerance', async () => {
    const code = 'class Solution:\n    def f(self, a: List[int], k: int) -> float:\n        return (sum(a) / k, k)[0] if k else (1, 2)';
    const r = await run(code, { inputs: ['[1, 2, 3]\n3', '[1]\n0', '[1, 1]\n3'], outputs: ['2.0', '[1, 2]', '0.6666667'], fn_name: 'f' });
    expect(r.result).toEqual([true, true, true]);
    const wrong = await run('class Solution:\n    def f(self, x):\n        return x + 1', { inputs: ['1', '2'], outputs: ['2', '4'], fn_name: 'f' });
    expect(wrong.result).toEqual([true, false]);
    expect(wrong.metadata).toEqual({ output: '3', inputs: '[2]', expected: '4', error_code: -2, error_message: 'Wrong Answer' });
    const missing = await run('def g(x):\n    return x', { inputs: ['1'], outputs: ['1'], fn_name: 'f' });
    expect(missing.metadata.error_message).toBe('Error during testing: cannot unpack non-iterable NoneType object');
  });

  it('what the reference runner disables stays disabled: quit, os.getcwd, import resource', async () => {
    const t = { inputs: ['1'], outputs: ['1'] };
    expect((await run('quit()', t)).result).toEqual([-4]);
    expect((await run('import os\nprint(os.getcwd())', t)).result).toEqual([-4]);
    expect((await run('import resource\nprint(1)', t)).metadata.error_message).toBe('Error during testing: import of resource halted; None in sys.modules');
    expect((await run('import sys\nprint(1)\nsys.exit(0)', t)).result).toEqual([true]);
  });
});

describe.skipIf(!hasPython)('runner_mode: per_verify (a fresh sandboxed runner process per verify)', () => {
  let app: App;
  beforeAll(async () => {
    app = await buildApp({ num_processes: 2, runner_mode: 'per_verify' });
  });
  afterAll(async () => {
    await app?.close();
  });
  it('grades exactly as the warm runners do', async () => {
    const square = { inputs: ['2\n', '5\n'], outputs: ['4', '25'] };
    const [ok, wrong, broken] = await Promise.all([
      verify(app, request(py('n=int(input())\nprint(n*n)'), square)),
      verify(app, request(py('n=int(input())\nprint(n+1)'), { inputs: ['3\n'], outputs: ['9'] })),
      verify(app, request(py("print('hello'"), square)),
    ]);
    expect(ok.body.result).toEqual([true, true]);
    expect(wrong.body.metadata.error_message).toBe('Wrong answer at output_line_idx=0: 4 != 9');
    expect(broken.body.metadata).toEqual({ error_code: -4, error_message: "Error during testing: '(' was never closed (<string>, line 1)" });
  });
});
