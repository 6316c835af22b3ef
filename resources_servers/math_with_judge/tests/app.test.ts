import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, sharedPath } from '@nemo-gym/core/config';
import { server, verifyWithJudge } from '../app.js';
import { verifyAnswerWithLibrary } from '@nemo-gym/math-verify';
import { JUDGE_SYSTEM_MESSAGE, parseVerdict } from '../src/judge.js';
import { StubJudge, judgeText, msg, response, verifyBody } from './helpers.js';

const judge = new StubJudge();
type App = Awaited<ReturnType<typeof server.build>>;
let app: App;
let appNoJudge: App;
let appParity: App;

function globalConfig() {
  return { judge_model: { responses_api_models: { stub: { host: '127.0.0.1', port: judge.port } } } };
}
const baseConfig = {
  name: 'library_judge_math',
  domain: 'math',
  judge_model_server: { type: 'responses_api_models', name: 'judge_model' },
  judge_responses_create_params: { input: [], max_output_tokens: 1024 },
  library_verifier_workers: 0,
};

beforeAll(async () => {
  await judge.start();
  app = await server.build({ config: baseConfig, globalConfig: globalConfig() });
  appNoJudge = await server.build({ config: { ...baseConfig, should_use_judge: false }, globalConfig: globalConfig() });
  // upstream's shipped config: judge params are just {input: []}
  appParity = await server.build({ config: { ...baseConfig, judge_responses_create_params: { input: [] } }, globalConfig: globalConfig() });
});
afterAll(async () => {
  await app.close();
  await appNoJudge.close();
  await appParity.close();
  await judge.stop();
});
beforeEach(() => judge.reset());

async function post(a: App, body: unknown) {
  const res = await a.inject({ method: 'POST', url: '/verify', payload: body as object });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
}

describe('verify (upstream test_app cases)', () => {
  it('library says correct: no judge call, extracted answer from the boxed value', async () => {
    const r = await post(app, verifyBody('What is 3 plus 5?', '8', [msg('3 + 5 = \\boxed{8}')]));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ reward: 1, library_reward: 1, extracted_answer: '8', judge_evaluations: null });
    expect(judge.requests).toHaveLength(0);
  });

  it('library wrong, judge says different after the first call', async () => {
    judge.queue(judgeText('Conclusion: [[A!=B]]'));
    const r = await post(app, verifyBody('What is 1 + 1?', '2', [msg('3')]));
    expect(r.body).toMatchObject({ reward: 0, library_reward: 0, extracted_answer: '3' });
    expect(r.body.judge_evaluations).toHaveLength(1);
    expect(judge.requests).toHaveLength(1);
  });

  it('judge equal in both orders gives reward 1 with library reward 0; prompts swap the answers', async () => {
    judge.queue(judgeText('I say [[A=B]] as the verdict'), judgeText('[[A=B]]'));
    const r = await post(app, verifyBody('What is 14 divided by 10?', '1.4', [msg('Final answer: {7 / 5}')]));
    expect(r.body).toMatchObject({ reward: 1, library_reward: 0, extracted_answer: '5' });
    expect(r.body.judge_evaluations).toHaveLength(2);
    expect(judge.prompt(0)).toBe(
      "<|Problem|>\nWhat is 14 divided by 10?\n\n<|Start of Assistant A's Answer|>\n1.4\n<|End of Assistant A's Answer|>\n\n<|Start of Assistant B's Answer|>\nFinal answer: {7 / 5}\n<|End of Assistant B's Answer|>",
    );
    expect(judge.prompt(1)).toBe(
      "<|Problem|>\nWhat is 14 divided by 10?\n\n<|Start of Assistant A's Answer|>\nFinal answer: {7 / 5}\n<|End of Assistant A's Answer|>\n\n<|Start of Assistant B's Answer|>\n1.4\n<|End of Assistant B's Answer|>",
    );
    const input = judge.requests[0]!.input as { role: string; content: string }[];
    expect(input[0]).toMatchObject({ role: 'system', content: JUDGE_SYSTEM_MESSAGE });
    expect(judge.requests[0]!.max_output_tokens).toBe(1024);
    const evals = r.body.judge_evaluations as { responses_create_params: Record<string, unknown> }[];
    expect(evals[0]!.responses_create_params.max_output_tokens).toBe(1024);
  });

  it('judge equal then different gives 0 with two evaluations', async () => {
    judge.queue(judgeText('I conclude that [[A=B]]'), judgeText('[[A!=B]]'));
    const r = await post(app, verifyBody('What is 4 times 5?', '20', [msg('twenty')]));
    expect(r.body.reward).toBe(0);
    expect(r.body.judge_evaluations).toHaveLength(2);
  });

  it('judge 1/2 vs 0.5 path is skipped because the library already accepts it', async () => {
    const r = await post(app, verifyBody('What is 3 divided by 6?', '1/2', [msg('0.5')]));
    expect(r.body).toMatchObject({ reward: 1, library_reward: 1 });
    expect(judge.requests).toHaveLength(0);
  });

  it('x + 7 - 6: "$1" is wrong (judge says so), "$1 + x$" split over messages is right', async () => {
    judge.queue(judgeText('[[A!=B]] done'));
    const q = 'Simplify the expression x + 7 - 6';
    const r1 = await post(app, verifyBody(q, 'x + 1', [msg('$1')]));
    expect(r1.body).toMatchObject({ reward: 0, extracted_answer: '1', library_reward: 0 });
    expect(r1.body.judge_evaluations).toHaveLength(1);
    const output = [
      msg('$1'),
      { id: 'r', type: 'reasoning', summary: [{ type: 'summary_text', text: 'thinking' }] },
      msg(' + x$'),
      { id: 'm3', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'refusal', refusal: 'no' }] },
    ];
    const r2 = await post(app, verifyBody(q, 'x + 1', output));
    expect(r2.body).toMatchObject({ reward: 1, extracted_answer: 'x + 1', library_reward: 1, judge_evaluations: null });
    expect(Object.keys(r2.body).sort()).toEqual(
      ['expected_answer', 'extracted_answer', 'judge_evaluations', 'library_reward', 'response', 'responses_create_params', 'reward'].sort(),
    );
  });

  it('should_use_judge false never calls the judge', async () => {
    const r = await post(appNoJudge, verifyBody('What is 1 + 1?', '2', [msg('3')]));
    expect(r.body).toMatchObject({ reward: 0, judge_evaluations: null });
    expect(judge.requests).toHaveLength(0);
  });

  it('an unparsable expected answer scores 0 with a null extracted answer', async () => {
    const r = await post(appNoJudge, verifyBody('q', '', [msg('')]));
    expect(r.body).toMatchObject({ reward: 0, extracted_answer: null, library_reward: 0 });
  });

  it('a judge body that is not a Response answers 502 naming the judge server', async () => {
    judge.queue({});
    const r = await post(app, verifyBody('What is 2 + 2?', '4', [msg('5')]));
    expect(r.status).toBe(502);
    expect(String(r.body.detail)).toContain('judge_model');
  });

  it('should_use_judge without a judge server is a config error that says how to fix it', async () => {
    const { judge_model_server: _omit, ...rest } = baseConfig;
    await expect(server.build({ config: rest })).rejects.toThrow(/judge_model_server.*should_use_judge: false/s);
    const ok = await server.build({ config: { ...rest, should_use_judge: false } });
    const r = await post(ok, verifyBody('q', '2', [msg('3')]));
    expect(r.body).toMatchObject({ reward: 0, judge_evaluations: null });
    await ok.close();
  });

  it('missing expected_answer is a 422 naming the field', async () => {
    const body = verifyBody('q', '1', [msg('1')]);
    delete body.expected_answer;
    const res = await app.inject({ method: 'POST', url: '/verify', payload: body });
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('expected_answer');
  });
});

describe('library check (upstream _verify_answer_with_library cases)', () => {
  it.each([
    ['4', '2 + 2 = \\boxed{4}', 1, '4'],
    ['\\boxed{12}', '3 * 4 = \\boxed{12}', 1, '12'],
    ['\\boxed{5}', '10 - 5 = \\boxed{5}', 1, '5'],
    ['4.0', '2 + 2 = \\boxed{\\frac{8}{2}}', 1, '4'],
    ['\\boxed{12}', '3 * 4 = 13', 0, '13'],
    ['17.001', '17', 0, '17'],
    ['', '', 0, null],
    ['3', '3', 1, '3'],
  ] as const)('expected %j, generated %j -> (%d, %j)', (expected, generated, reward, extracted) => {
    expect(verifyAnswerWithLibrary(expected, generated)).toEqual({ reward, extracted });
  });
});

const workerBuilt = existsSync(join(repoRoot(), 'packages/math-verify/dist/src/worker.js'));
if (!workerBuilt) console.log('skipping the verifier time-limit test: packages/math-verify is not built (run pnpm build)');

describe.skipIf(!workerBuilt)('library check time limit', () => {
  it('a check over library_verifier_timeout_seconds scores (0.0, null), as upstream scores a timeout', async () => {
    const slow = await server.build({
      config: { ...baseConfig, should_use_judge: false, library_verifier_workers: 1, library_verifier_timeout_seconds: 0.3 },
    });
    try {
      const r = await post(slow, verifyBody('q', '1', [msg('1 '.repeat(50_000))]));
      expect(r.body).toMatchObject({ reward: 0, library_reward: 0, extracted_answer: null, judge_evaluations: null });
      const ok = await post(slow, verifyBody('q', '7', [msg('\\boxed{7}')]));
      expect(ok.body).toMatchObject({ reward: 1, extracted_answer: '7' });
    } finally {
      await slow.close();
    }
  });
});

describe('judge with both orders (upstream _verify_answer_with_judge cases)', () => {
  const ctx = () => (app as unknown as { ngContext: Parameters<typeof verifyWithJudge>[0] }).ngContext;
  it('different on the first call: 0.0 with one evaluation', async () => {
    judge.queue(judgeText('[[A!=B]] is the evaluation'));
    const [reward, evals] = await verifyWithJudge(ctx(), 'What is 2 + 2?', '4', '5');
    expect([reward, evals.length]).toEqual([0, 1]);
  });
  it('equal in both orders: 1.0 with two evaluations', async () => {
    judge.queue(judgeText('[[A=B]]'), judgeText('I conclude that [[A=B]]'));
    const [reward, evals] = await verifyWithJudge(ctx(), 'What is 3 divided by 6?', '1/2', '0.5');
    expect([reward, evals.length]).toEqual([1, 2]);
    expect(judge.prompt(0)).toContain("Assistant A's Answer|>\n1/2\n");
    expect(judge.prompt(1)).toContain("Assistant A's Answer|>\n0.5\n");
  });
  it('equal then different: 0.0 with two evaluations', async () => {
    judge.queue(judgeText('I conclude that [[A=B]]'), judgeText('[[A!=B]]'));
    const [reward, evals] = await verifyWithJudge(ctx(), 'What is 4 times 5?', '20', '20.0');
    expect([reward, evals.length]).toEqual([0, 2]);
  });
});

describe('judge verdict parsing (upstream _generate_judge_evaluation cases)', () => {
  it.each([
    ['no evaluation', false],
    ['Evaluation: [[A!=B]]', false],
    ['The evaluation is [[A=B]]', true],
    ['First [[A=B]], then [[A!=B]]', true],
    ['[[A!=B]] [[A=B]]', false],
  ])('%s -> %s', (text, expected) => {
    expect(parseVerdict(judgeText(text))).toBe(expected);
  });
  it('reasoning-only output and a trailing refusal are not equal', () => {
    expect(parseVerdict(response([{ id: 'r', type: 'reasoning', summary: [] }]))).toBe(false);
    expect(parseVerdict(response([{ id: 'm', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: '[[A=B]]', annotations: [] }, { type: 'refusal', refusal: 'x' }] }]))).toBe(false);
  });
});

const dataDir = sharedPath('upstream-data', 'library_judge_math');
const rolloutsFile = join(dataDir, 'example_rollouts.jsonl');
const haveData = existsSync(rolloutsFile);
if (!haveData) console.log(`skipping parity: ${rolloutsFile} not found`);

function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null).map(([k, x]) => [k, dropNulls(x)]));
  }
  return v;
}

describe.skipIf(!haveData)('parity with upstream example_rollouts.jsonl', () => {
  const rows = haveData ? readFileSync(rolloutsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : [];
  it.each(rows.map((r, i) => [i, r] as const))('row %i reproduces reward, library reward, extracted answer and judge calls', async (_i, row) => {
    const evals = (row.judge_evaluations ?? []) as { responses_create_params: Record<string, unknown>; response: unknown }[];
    for (const e of evals) judge.queue(e.response);
    const user = ((row.responses_create_params as { input: { role: string; content: string }[] }).input.find((m) => m.role === 'user')!).content;
    const question = user.replace(/^Solve the following math problem\. Make sure to put the answer \(and only answer\) inside \\boxed\{\}\.\n\n/, '');
    const r = await post(appParity, { responses_create_params: row.responses_create_params, response: row.response, question, expected_answer: row.expected_answer });
    expect(r.status).toBe(200);
    expect(r.body.reward).toBe(row.reward);
    expect(r.body.library_reward).toBe(row.library_reward);
    expect(r.body.extracted_answer).toBe(row.extracted_answer);
    expect(r.body.expected_answer).toBe(row.expected_answer);
    expect(Object.keys(r.body).sort()).toEqual(Object.keys(row).sort());
    expect(dropNulls(r.body.response)).toEqual(dropNulls(row.response));
    expect(dropNulls(r.body.responses_create_params)).toEqual(dropNulls(row.responses_create_params));
    if (row.judge_evaluations === null) {
      expect(r.body.judge_evaluations).toBeNull();
      expect(judge.requests).toHaveLength(0);
    } else {
      const ours = r.body.judge_evaluations as { responses_create_params: unknown; response: unknown }[];
      expect(ours).toHaveLength(evals.length);
      ours.forEach((e, k) => {
        expect(dropNulls(e.responses_create_params)).toEqual(dropNulls(evals[k]!.responses_create_params));
        expect(dropNulls(e.response)).toEqual(dropNulls(evals[k]!.response));
      });
    }
  });
});
