// Upstream's recorded comp_coding rollouts posted to /verify must reproduce the recorded reward,
// `result` list and error messages. The rollouts do not echo the unit tests; they come from the
// example row with the same prompt.
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core/config';
import { buildApp, hasPython, verify, type App } from './helpers.js';

const dir = sharedPath('upstream-data', 'comp_coding');
const rolloutsPath = `${dir}/example_rollouts.jsonl`;
const examplesPath = `${dir}/example.jsonl`;
const present = existsSync(rolloutsPath) && existsSync(examplesPath);
if (!present) console.log(`comp_coding parity: ${dir} is absent; parity tests are skipped`);

const readJsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, any>);
const prompt = (row: Record<string, any>) => String((row.responses_create_params.input as Array<{ role?: string; content?: unknown }>).find((m) => m.role === 'user')?.content);

describe.skipIf(!present || !hasPython)('parity with upstream rollouts', () => {
  let app: App;
  beforeAll(async () => {
    app = await buildApp({ num_processes: 2, unit_test_timeout_secs: 10 });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('every recorded rollout: same reward, result list, error message and compared output', async () => {
    const examples = new Map(readJsonl(examplesPath).map((e) => [prompt(e), e]));
    const rollouts = readJsonl(rolloutsPath);
    expect(rollouts.length).toBe(5);
    const outcomes = await Promise.all(
      rollouts.map(async (r) => {
        const ex = examples.get(prompt(r));
        if (!ex) throw new Error('a recorded rollout has no matching example row');
        const res = await verify(app, { responses_create_params: r.responses_create_params, response: r.response, verifier_metadata: ex.verifier_metadata });
        return { r, got: res.body };
      }),
    );
    let same = 0;
    for (const { r, got } of outcomes) {
      expect(got.reward).toBe(r.reward);
      expect(got.result).toEqual(r.result);
      expect(got.extracted_model_code).toBe(r.extracted_model_code);
      const want = r.metadata as Record<string, unknown>;
      if ('error_code' in want) {
        expect(got.metadata).toEqual(want);
      } else {
        expect(Object.keys(got.metadata)).toEqual(['execution time']);
      }
      same += 1;
    }
    console.log(`comp_coding parity: ${same}/${rollouts.length} recorded rollouts reproduced`);
  });
});
