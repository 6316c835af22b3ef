import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkExampleData, globalConfigFor, startStubServer, startTestServer, textResponse, type StubRequest, type StubServer, type TestServer } from '@nemo-gym/core/testing';
import { parseScores, presentationOrder, server } from '../app.js';

/**
 * A judge on 127.0.0.1 that scores each trajectory of its prompt by the `q=<x>` its transcript
 * states (deterministic, and independent of the order it is shown in), unless told to misbehave.
 */
let mode: 'ok' | 'garbage' | 'http500' = 'ok';
function judgeAnswer(req: StubRequest) {
  if (mode === 'http500') return { status: 500, json: { error: { message: 'judge backend down' } } };
  if (mode === 'garbage') return { json: textResponse('I think they are all fine.') };
  const prompt = (req.body.input as { role: string; content: string }[]).find((m) => m.role === 'user')!.content;
  const scores = [...prompt.matchAll(/<trajectory id="(\d+)">\n([\s\S]*?)\n<\/trajectory>/g)].map(([, id, body]) => ({
    trajectory_id: id,
    explanation: `trajectory ${id}`,
    score: Number(/q=([\d.]+)/.exec(body!)?.[1] ?? 0),
  }));
  return { json: textResponse(`Reasoning first.\n\`\`\`json\n${JSON.stringify({ scores })}\n\`\`\``) };
}

let judge: StubServer;
let app: TestServer<unknown, unknown>;
beforeAll(async () => {
  judge = await startStubServer({ '/v1/responses': judgeAnswer });
  app = (await startTestServer(server, {
    config: { name: 'group_judge', domain: 'other', verify_group: true, judge_model_server: { type: 'responses_api_models', name: 'judge' }, judge_responses_create_params: { input: [] } },
    globalConfig: globalConfigFor({ judge: { kind: 'responses_api_models', impl: 'stub', port: judge.port } }) as never,
  })) as unknown as TestServer<unknown, unknown>;
});
afterAll(async () => {
  await app.close();
  await judge.close();
});
beforeEach(() => {
  mode = 'ok';
  judge.requests.length = 0;
});

const params = { input: [{ role: 'user', content: 'Write a haiku about frost.' }] };
const member = (id: string, q: number) => ({ member_id: id, responses_create_params: params, response: textResponse(`q=${q} a haiku`), reward: 0.2 });
const QS = [0.1, 0.9, 0.4, 0.4, 0.75, 0, 1, 0.3];

describe('/verify_group', () => {
  it('scores each member by id; the order members are sent in changes neither the rewards nor the judge prompt', async () => {
    const members = QS.map((q, r) => member(`3-${r}`, q));
    const shuffled = [members[5], members[2], members[7], members[0], members[6], members[1], members[4], members[3]];
    const a = await app.post('/verify_group', { task_index: 3, members });
    const b = await app.post('/verify_group', { task_index: 3, members: shuffled });
    expect(a.status, a.text).toBe(200);
    expect(b.status, b.text).toBe(200);
    const byId = (res: typeof a) => Object.fromEntries((res.json.members as { member_id: string; reward: number }[]).map((m) => [m.member_id, m.reward]));
    expect(byId(a)).toEqual(Object.fromEntries(QS.map((q, r) => [`3-${r}`, q])));
    expect(byId(b)).toEqual(byId(a));
    // Answered in the order sent.
    expect(b.json.members.map((m: { member_id: string }) => m.member_id)).toEqual(shuffled.map((m) => m!.member_id));
    const prompts = judge.requestsTo('/v1/responses').map((r) => r.body.input[1].content as string);
    expect(prompts).toHaveLength(2);
    expect(prompts[1]).toBe(prompts[0]);
    // Shown in the hash order of the ids, not the repeat order.
    const shownQs = [...prompts[0]!.matchAll(/q=([\d.]+)/g)].map((m) => Number(m[1]));
    const order = presentationOrder(members.map((m) => m.member_id), 0);
    expect(shownQs).toEqual(order.map((id) => QS[Number(id.split('-')[1])]));
    expect(order).not.toEqual(members.map((m) => m.member_id));
    expect(prompts[0]).toContain('Write a haiku about frost.');
  });

  it('a judge that fails or gives no usable scores is an error answer, never a reward', async () => {
    mode = 'garbage';
    const r = await app.post('/verify_group', { members: [member('0-0', 0.5), member('0-1', 0.2)] });
    expect(r.status).toBe(502);
    expect(r.json.code).toBe('NG_ERR_JUDGE_FAILED');
    expect(judge.requests).toHaveLength(2);
    mode = 'http500';
    const down = await app.post('/verify_group', { members: [member('0-0', 0.5)] });
    expect(down.status).toBe(502);
    expect(down.json.members).toBeUndefined();
  });

  it('refuses a group that names a member twice', async () => {
    const r = await app.post('/verify_group', { members: [member('0-0', 0.5), member('0-0', 0.2)] });
    expect(r.status).toBe(400);
  });
});

describe('/verify', () => {
  it('scores one rollout alone with the same rubric', async () => {
    const r = await app.post('/verify', { responses_create_params: params, response: textResponse('q=0.6 alone') });
    expect(r.status, r.text).toBe(200);
    expect(r.json.reward).toBe(0.6);
    expect(r.json.judge_explanation).toBe('trajectory 1');
  });
});

describe('parseScores', () => {
  it('takes the last JSON object that scores every label within [0, 1]', () => {
    const ok = '{"scores": [{"trajectory_id": "1", "score": 0.2}]} then {"scores": [{"trajectory_id": 1, "score": "0.5"}, {"trajectory_id": "2", "score": 1}]}';
    expect([...parseScores(ok, ['1', '2'])!.entries()].map(([k, v]) => [k, v.score])).toEqual([['1', 0.5], ['2', 1]]);
    expect(parseScores('{"scores": [{"trajectory_id": "1", "score": 1.5}, {"trajectory_id": "2", "score": 1}]}', ['1', '2'])).toBeNull();
    expect(parseScores('{"scores": [{"trajectory_id": "1", "score": 0.5}]}', ['1', '2'])).toBeNull();
  });
});

describe('example data', () => {
  it('has 5 rows the agent can send', () => {
    checkExampleData(new URL('..', import.meta.url));
  });
});
