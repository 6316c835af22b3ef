// Upstream's recorded rollouts posted to /verify must give upstream's recorded reward.
// The rollouts were scored by the pinned upstream commit (`answer_matching: legacy`); the default
// `normalized` matching (upstream's later fix) changes exactly one of them, on purpose.
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core/config';
import { buildApp, hasPython, type App } from './helpers.js';

const dir = sharedPath('upstream-data', 'python_math_exec');
const rolloutsPath = `${dir}/example_rollouts.jsonl`;
const examplesPath = `${dir}/example.jsonl`;
const present = existsSync(rolloutsPath) && existsSync(examplesPath);
if (!present) console.log(`math_with_code parity: ${dir} is absent; parity tests are skipped`);

interface Row {
  responses_create_params: { input: Array<{ role?: string; content?: unknown }> };
  response: unknown;
  reward: number;
  extracted_answer: string | null;
  accuracy: boolean;
}

const readJsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);

function userPrompt(row: { responses_create_params: unknown }): string {
  const input = (row.responses_create_params as Row['responses_create_params']).input;
  return String(input.find((m) => m.role === 'user')?.content);
}

/** The rollouts do not echo expected_result; it comes from the example row with the same prompt. */
function loadCases(): Array<{ row: Row; expected: string; id: unknown }> {
  const examples = new Map(readJsonl(examplesPath).map((e) => [userPrompt(e as never), e]));
  return readJsonl(rolloutsPath).map((r) => {
    const ex = examples.get(userPrompt(r as never));
    if (!ex) throw new Error('a recorded rollout has no matching example row');
    return { row: r as unknown as Row, expected: String(ex.expected_result), id: ex.id };
  });
}

describe.skipIf(!present || !hasPython)('recorded upstream rollouts', () => {
  let legacy: App;
  let normalized: App;
  beforeAll(async () => {
    [legacy, normalized] = await Promise.all([buildApp({ answer_matching: 'legacy' }), buildApp()]);
  });
  afterAll(async () => {
    await Promise.all([legacy?.close(), normalized?.close()]);
  });

  const verify = async (app: App, row: Row, expected: string) => {
    const res = await app.inject({
      method: 'POST',
      url: '/verify',
      payload: {
        responses_create_params: row.responses_create_params,
        response: row.response,
        expected_result: expected,
        expected_code_contains: '',
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    return JSON.parse(res.body) as Record<string, unknown>;
  };

  it('legacy matching reproduces every recorded reward, extracted answer and accuracy', async () => {
    const cases = loadCases();
    expect(cases.length).toBe(5);
    let same = 0;
    for (const { row, expected } of cases) {
      const out = await verify(legacy, row, expected);
      expect(Object.keys(out).sort()).toEqual(Object.keys(row).sort());
      expect(out.reward).toBe(row.reward);
      expect(out.extracted_answer).toBe(row.extracted_answer);
      expect(out.accuracy).toBe(row.accuracy);
      same += 1;
    }
    console.log(`math_with_code parity (legacy): ${same}/${cases.length} recorded rewards reproduced`);
  });

  it('normalized matching keeps four recorded rewards and credits the \\sqrt{2} answer upstream could not match', async () => {
    const cases = loadCases();
    const changed: unknown[] = [];
    for (const { row, expected, id } of cases) {
      const out = await verify(normalized, row, expected);
      if (out.reward !== row.reward) changed.push({ id, extracted: out.extracted_answer, reward: out.reward, expected });
    }
    // Example 3 expects `\(\sqrt{2}\)`; the model answered `\boxed{\sqrt{2}}`. The pinned commit cut
    // the box at the first `}` and compared with the delimiters; the later fix matches it.
    expect(changed).toEqual([{ id: 3, extracted: '\\sqrt{2}', reward: 1, expected: '\\(\\sqrt{2}\\)' }]);
  });
});
