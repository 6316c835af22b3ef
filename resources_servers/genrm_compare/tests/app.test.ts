import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkExampleData, globalConfigFor, startStubServer, startTestServer, textResponse, type StubRequest, type StubServer, type TestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';
import { aggregate, comparisonPairs, parseVerdict } from '../src/scores.js';

/** A GenRM on 127.0.0.1: rates each response 1 + 4q from the `q=<x>` it states, ranks by the difference; or misbehaves. */
let mode: 'ok' | 'garbage' | 'http500' = 'ok';
const qOf = (text: string) => Number(/q=([\d.]+)/.exec(text)?.[1] ?? 0);
function genrm(req: StubRequest) {
  if (mode === 'http500') return { status: 500, json: { error: { message: 'down' } } };
  if (mode === 'garbage') return { json: textResponse('Both are fine.') };
  let r1: string;
  let r2: string;
  if (req.body.metadata?.response_1 !== undefined) {
    r1 = req.body.metadata.response_1;
    r2 = req.body.metadata.response_2;
  } else {
    const prompt = (req.body.input as { content: string }[]).at(-1)!.content;
    r1 = /<response_1>\n([\s\S]*?)\n<\/response_1>/.exec(prompt)![1]!;
    r2 = /<response_2>\n([\s\S]*?)\n<\/response_2>/.exec(prompt)![1]!;
  }
  const [a, b] = [qOf(r1), qOf(r2)];
  const ranking = a > b ? 2 : a < b ? 5 : 3;
  return { json: textResponse(`{"score_1": ${Math.round(1 + 4 * a)}, "score_2": ${Math.round(1 + 4 * b)}, "ranking": ${ranking}}`) };
}

let judge: StubServer;
const apps: TestServer<unknown, unknown>[] = [];
async function build(overrides: Record<string, unknown> = {}) {
  const app = (await startTestServer(server, {
    config: {
      name: 'genrm_compare',
      domain: 'other',
      verify_group: true,
      genrm_model_server: { type: 'responses_api_models', name: 'genrm' },
      genrm_responses_create_params: { input: [] },
      genrm_prompt_format: 'inline',
      genrm_parse_retry_sleep_s: 0,
      ...overrides,
    },
    globalConfig: globalConfigFor({ genrm: { kind: 'responses_api_models', impl: 'stub', port: judge.port } }) as never,
  })) as unknown as TestServer<unknown, unknown>;
  apps.push(app);
  return app;
}
let app: TestServer<unknown, unknown>;
beforeAll(async () => {
  judge = await startStubServer({ '/v1/responses': genrm });
  app = await build();
});
afterAll(async () => {
  for (const a of apps) await a.close();
  await judge.close();
});
beforeEach(() => {
  mode = 'ok';
  judge.requests.length = 0;
});

const params = { input: [{ role: 'user', content: 'Capital of Australia?' }] };
const member = (id: string, q: number) => ({ member_id: id, responses_create_params: params, response: textResponse(`q=${q} Canberra`), reward: 3 });
const QS = [0.25, 1, 0.5, 0, 0.75, 0.5, 0.25, 1];
const rewardsById = (res: { json: any }) => Object.fromEntries((res.json.members as { member_id: string; reward: number }[]).map((m) => [m.member_id, m.reward]));

describe('/verify_group', () => {
  it('compares the cohort in pairs; the order members are sent in does not change a reward', async () => {
    const members = QS.map((q, r) => member(`5-${r}`, q));
    const reversed = [...members].reverse();
    const rotated = [...members.slice(3), ...members.slice(0, 3)];
    const results = [];
    for (const group of [members, reversed, rotated]) {
      const r = await app.post('/verify_group', { task_index: 5, members: group });
      expect(r.status, r.text).toBe(200);
      results.push(rewardsById(r));
    }
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
    // circular: 8 comparisons per call
    expect(judge.requestsTo('/v1/responses')).toHaveLength(24);
    // Better answers get more.
    expect(results[0]!['5-1']).toBeGreaterThan(results[0]!['5-3']!);
  });

  it('two members: both orders of the pair are judged, and each gets the mean of its scores', async () => {
    const r = await app.post('/verify_group', { members: [member('0-0', 1), member('0-1', 0)] });
    expect(rewardsById(r)).toEqual({ '0-0': 5, '0-1': 1 });
    expect(r.json.comparison_results).toHaveLength(2);
    expect(r.json.metrics.tiebreak_usage_rate).toBe(0);
  });

  it('a GenRM that fails or gives no verdict fails the group; fallback_to_default_scores keeps upstream\'s defaults', async () => {
    mode = 'garbage';
    const r = await app.post('/verify_group', { members: [member('0-0', 1), member('0-1', 0)] });
    expect(r.status).toBe(502);
    expect(r.json.code).toBe('NG_ERR_JUDGE_FAILED');
    mode = 'http500';
    expect((await app.post('/verify_group', { members: [member('0-0', 1), member('0-1', 0)] })).status).toBe(502);
    const lenient = await build({ fallback_to_default_scores: true });
    const d = await lenient.post('/verify_group', { members: [member('0-0', 1), member('0-1', 0)] });
    expect(rewardsById(d)).toEqual({ '0-0': 3, '0-1': 3 });
  });

  it('metadata format: the pair goes in metadata.response_1/response_2, as upstream sends it to its GenRM model', async () => {
    const meta = await build({ genrm_prompt_format: 'metadata', use_principle: true });
    const r = await meta.post('/verify_group', { members: [member('0-0', 1), member('0-1', 0.5)] });
    expect(r.status, r.text).toBe(200);
    const sent = judge.requestsTo('/v1/responses')[0]!.body;
    expect(sent.metadata).toMatchObject({ response_1: 'q=1 Canberra', response_2: 'q=0.5 Canberra' });
    expect(typeof sent.metadata.principle).toBe('string');
    expect(sent.input).toEqual([{ role: 'user', content: 'Capital of Australia?', type: 'message' }]);
  });
});

describe('/verify and /compare', () => {
  it('/verify answers default_score for one rollout (no cohort)', async () => {
    const r = await app.post('/verify', { responses_create_params: params, response: textResponse('q=1 x') });
    expect(r.json.reward).toBe(3);
  });

  it('/compare: upstream\'s batch API, rewards in the order given', async () => {
    const r = await app.post('/compare', { conversation_history: [{ role: 'user', content: 'hi' }], response_objs: [textResponse('q=0'), textResponse('q=1')] });
    expect(r.status, r.text).toBe(200);
    expect(r.json.rewards).toEqual([1, 5]);
    expect(r.json.comparison_results[0]).toMatchObject({ response_i: 0, response_j: 1, judge_idx: 0, score_1: 1, score_2: 5, ranking: 5 });
  });
});

describe('scores', () => {
  it('pairs, verdict parsing and the tie-breaker', () => {
    expect(comparisonPairs('circular', 3)).toEqual([[0, 1], [1, 2], [2, 0]]);
    expect(comparisonPairs('all_pairs', 3)).toEqual([[0, 1], [0, 2], [1, 2]]);
    expect(parseVerdict('```json\n{"overall": {"score_1": 4, "score_2": 2, "ranking": 2}}\n```', 3, 3.5)).toEqual({ score_1: 4, score_2: 2, ranking: 2 });
    expect(parseVerdict('{"ranking": 5}', 3, 3.5)).toEqual({ score_1: 3, score_2: 3, ranking: 5 });
    expect(parseVerdict('no json', 3, 3.5)).toBeNull();
    // A tie broken by ranking 5: response 2 gets +1.5, response 1 -1.5.
    const o = { defaultScore: 3, reasoningBonus: 0, answerBonus: 0, topPercentile: 0.2, reasoningLengthCoeff: 0, answerLengthCoeff: 0 };
    expect(aggregate([{ i: 0, j: 1, verdict: { score_1: 3, score_2: 3, ranking: 5 } }], [{}, {}], o).rewards).toEqual([1.5, 4.5]);
  });
});

describe('example data', () => {
  it('has 5 rows the agent can send', () => {
    checkExampleData(new URL('..', import.meta.url));
  });
});
