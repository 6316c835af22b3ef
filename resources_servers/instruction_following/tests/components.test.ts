/**
 * `reward_components: true`: one component per instruction kind plus `not_all_followed`, summing to
 * the reward (NeMo-RL's contract); the reward itself is unchanged, the upstream rollouts included.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instructionComponents, server } from '../app.js';
import { testNltkData, UPSTREAM_EXAMPLES, UPSTREAM_ROLLOUTS } from './helpers.js';

const dataDir = testNltkData();
const sum = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
const readJsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);

function request(ids: string[], kwargs: unknown[], text: string) {
  return {
    id: 1,
    instruction_id_list: ids,
    prompt: 'p',
    kwargs,
    responses_create_params: { input: [] },
    response: { id: 'r', created_at: 0, model: 'm', object: 'response', output: [{ id: 'm', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }], parallel_tool_calls: true, tool_choice: 'auto', tools: [] },
  };
}

describe('instructionComponents', () => {
  it("gives each kind its followed instructions' share and takes it back when not all were followed", () => {
    const c = instructionComponents(['keywords:existence', 'keywords:forbidden_words', 'punctuation:no_comma'], [true, false, true], 0);
    expect(c.keywords).toBeCloseTo(1 / 3);
    expect(c.punctuation).toBeCloseTo(1 / 3);
    expect(c.not_all_followed).toBeCloseTo(-2 / 3);
    expect(sum(c)).toBeCloseTo(0, 12);
    expect(instructionComponents(['keywords:existence', 'punctuation:no_comma'], [true, true], 1)).toEqual({ keywords: 0.5, punctuation: 0.5, not_all_followed: 0 });
    expect(instructionComponents([], [], 0)).toEqual({});
  });
});

describe.skipIf(!dataDir)('instruction_following with reward_components: true', () => {
  type App = Awaited<ReturnType<typeof server.build>>;
  let app: App;
  let plain: App;
  beforeAll(async () => {
    const config = { name: 'instruction_following', domain: 'instruction_following', nltk_data_dir: dataDir, num_workers: 0 };
    app = await server.build({ config: { ...config, reward_components: true } });
    plain = await server.build({ config });
  });
  afterAll(async () => {
    await app?.close();
    await plain?.close();
  });
  const verify = async (a: App, body: unknown) => (await a.inject({ method: 'POST', url: '/verify', payload: body as object })).json() as Record<string, any>;

  it('answers one component per instruction kind beside the unchanged reward; off by default', async () => {
    const req = request(['punctuation:no_comma', 'change_case:english_lowercase'], [{}, {}], 'all lower case, but a comma');
    const r = await verify(app, req);
    expect(r.reward).toBe(0);
    expect(r.follow_instruction_list).toEqual([false, true]);
    expect(r.reward_components).toEqual({ punctuation: 0, change_case: 0.5, not_all_followed: -0.5 });
    const p = await verify(plain, req);
    expect(p.reward).toBe(0);
    expect('reward_components' in p).toBe(false);
  });

  it.skipIf(!existsSync(UPSTREAM_ROLLOUTS))('keeps every recorded upstream reward; the components sum to it', async () => {
    const inputs = new Map(readJsonl(UPSTREAM_EXAMPLES).map((r) => [r.prompt, r]));
    for (const row of readJsonl(UPSTREAM_ROLLOUTS)) {
      const r = await verify(app, { ...inputs.get(row.prompt)!, response: row.response });
      expect(r.reward).toBe(row.reward);
      expect(sum(r.reward_components)).toBeCloseTo(row.reward, 9);
    }
  });
});
