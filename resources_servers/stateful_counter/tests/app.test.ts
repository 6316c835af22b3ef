import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core/config';
import { recordedRollouts, startTestServer, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';

const CONFIG = { name: 'stateful_counter_resources_server', domain: 'agent' };
const counter = useTestServer(server, { config: CONFIG });

async function post(url: string, payload?: unknown, cookie?: string) {
  const res = await counter.post<Record<string, any>>(url, payload, { cookie });
  expect(res.cookie, `no ${counter.cookieName} cookie`).not.toBe('');
  return { status: res.status, json: res.json, cookie: res.cookie };
}

function verifyBody(expected: unknown) {
  return {
    responses_create_params: { input: [{ role: 'user', content: 'add 1 then add 2 then get the count' }] },
    response: { id: 'r', created_at: 1, model: 'm', object: 'response', output: [], parallel_tool_calls: true, tool_choice: 'auto', tools: [] },
    expected_count: expected,
  };
}

describe('upstream test_app.py: sessions are kept apart by cookie', () => {
  it('counts per session', async () => {
    const first = await post('/get_counter_value');
    expect(first.json).toEqual({ count: 0 });
    const c1 = first.cookie;
    expect((await post('/increment_counter', { count: 2 }, c1)).json).toEqual({ success: true });
    expect((await post('/get_counter_value', undefined, c1)).json).toEqual({ count: 2 });

    // no cookie: a new session
    let r = await post('/increment_counter', { count: 4 });
    expect(r.json).toEqual({ success: true });
    r = await post('/get_counter_value', undefined, r.cookie);
    expect(r.json).toEqual({ count: 4 });
    r = await post('/increment_counter', { count: 3 }, r.cookie);
    expect(r.json).toEqual({ success: true });
    r = await post('/get_counter_value', undefined, r.cookie);
    expect(r.json).toEqual({ count: 7 });

    expect((await post('/get_counter_value', undefined, c1)).json).toEqual({ count: 2 });
  });
});

describe('seed and verify', () => {
  it('seed only sets a session that has no counter yet', async () => {
    const s = await post('/seed_session', { initial_count: 3, expected_count: 6, responses_create_params: {} });
    expect(s.json).toEqual({});
    await post('/increment_counter', { count: 1 }, s.cookie);
    await post('/seed_session', { initial_count: 100 }, s.cookie);
    expect((await post('/get_counter_value', {}, s.cookie)).json).toEqual({ count: 4 });
  });

  it('verify scores the session counter, answers upstream keys, and frees the session', async () => {
    const s = await post('/seed_session', { initial_count: 4 });
    await post('/increment_counter', { count: 5 }, s.cookie);
    await post('/increment_counter', { count: 6 }, s.cookie);
    const before = counter.context.state.store.size;
    const v = await post('/verify', verifyBody(15), s.cookie);
    expect(v.status).toBe(200);
    expect(v.json.reward).toBe(1);
    expect(Object.keys(v.json).sort()).toEqual(['response', 'responses_create_params', 'reward']);
    expect(counter.context.state.store.size).toBe(before - 1);
    // the counter is gone: verifying again finds no session
    expect((await post('/verify', verifyBody(15), s.cookie)).json.reward).toBe(0);
  });

  it('a wrong count scores 0; an unknown session scores 0', async () => {
    const s = await post('/seed_session', { initial_count: 1 });
    expect((await post('/verify', verifyBody(2), s.cookie)).json.reward).toBe(0);
    expect((await post('/verify', verifyBody(0))).json.reward).toBe(0);
  });

  it('two interleaved sessions do not mix', async () => {
    const [a, b] = await Promise.all([post('/seed_session', { initial_count: 10 }), post('/seed_session', { initial_count: 20 })]);
    await Promise.all([
      post('/increment_counter', { count: 1 }, a.cookie),
      post('/increment_counter', { count: 100 }, b.cookie),
      post('/increment_counter', { count: 2 }, a.cookie),
      post('/increment_counter', { count: 200 }, b.cookie),
    ]);
    const [va, vb] = await Promise.all([post('/verify', verifyBody(13), a.cookie), post('/verify', verifyBody(320), b.cookie)]);
    expect(va.json.reward).toBe(1);
    expect(vb.json.reward).toBe(1);
  });

  it('a tampered cookie starts a fresh session', async () => {
    const s = await post('/seed_session', { initial_count: 7 });
    const forged = s.cookie.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect((await post('/get_counter_value', {}, forged)).json).toEqual({ count: 0 });
  });
});

describe('sessions dropped before their verify', () => {
  it('tool calls and verify for a session dropped at the cap answer 410, not a wrong score', async () => {
    const small = await startTestServer(server, { config: { ...CONFIG, max_sessions: 1 } });
    try {
      const seedOf = async () => (await small.post('/seed_session', { initial_count: 1 })).cookie;
      const first = await seedOf();
      await seedOf(); // the second live session pushes the first one out
      const inc = await small.post('/increment_counter', { count: 1 }, { cookie: first });
      expect(inc.status).toBe(410);
      expect(inc.text).toContain('max_sessions');
      const v = await small.post('/verify', verifyBody(2), { cookie: first });
      expect(v.status).toBe(410);
      expect(v.text).toContain('max_sessions = 1');
    } finally {
      await small.close();
    }
  });
});

describe('bad input', () => {
  it('seed without initial_count is a 422', async () => {
    const r = await counter.app.inject({ method: 'POST', url: '/seed_session', payload: { expected_count: 3 } });
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('initial_count');
  });

  it('non-integer counts are a 422; numeric strings are accepted like pydantic', async () => {
    expect((await counter.app.inject({ method: 'POST', url: '/increment_counter', payload: { count: 'two' } })).statusCode).toBe(422);
    expect((await counter.app.inject({ method: 'POST', url: '/increment_counter', payload: { count: 1.5 } })).statusCode).toBe(422);
    const s = await post('/increment_counter', { count: '2' });
    expect((await post('/get_counter_value', {}, s.cookie)).json).toEqual({ count: 2 });
  });

  it('verify without expected_count or response is a 422', async () => {
    const body = verifyBody(1) as Record<string, unknown>;
    delete body.expected_count;
    expect((await counter.app.inject({ method: 'POST', url: '/verify', payload: body })).statusCode).toBe(422);
    const noResp = verifyBody(1) as Record<string, unknown>;
    delete noResp.response;
    expect((await counter.app.inject({ method: 'POST', url: '/verify', payload: noResp })).statusCode).toBe(422);
  });

  it('malformed JSON is a 422', async () => {
    const r = await counter.app.inject({ method: 'POST', url: '/increment_counter', payload: '{"count": ', headers: { 'content-type': 'application/json' } });
    expect(r.statusCode).toBe(422);
  });
});

describe('over real HTTP with the Set-Cookie the server returns', () => {
  const live = useTestServer(server, { config: CONFIG, listen: true });

  async function httpPost(path: string, body: unknown, cookie?: string) {
    const res = await live.post<Record<string, any>>(path, body, { cookie });
    expect(res.cookie, `no ${live.cookieName} cookie`).not.toBe('');
    return { json: res.json, cookie: res.cookie };
  }

  it('seed_session -> increment -> get -> verify keeps one session', async () => {
    const seeded = await httpPost('/seed_session', { initial_count: 3, expected_count: 6 });
    let cookie = seeded.cookie;
    for (const count of [1, 2]) cookie = (await httpPost('/increment_counter', { count }, cookie)).cookie;
    const got = await httpPost('/get_counter_value', {}, cookie);
    expect(got.json).toEqual({ count: 6 });
    const verified = await httpPost('/verify', verifyBody(6), got.cookie);
    expect(verified.json.reward).toBe(1);
    expect(live.context.state.store.has(cookie.split('=')[1]!.split('.')[0]!)).toBe(false);
  });
});

const dataDir = sharedPath('upstream-data', 'stateful_counter');

interface Item {
  type: string;
  name?: string;
  arguments?: string;
  call_id?: string;
  output?: string;
}

describe.skipIf(!existsSync(dataDir))('parity with upstream recorded rollouts', () => {
  if (!existsSync(dataDir)) console.log(`skipping stateful_counter parity: ${dataDir} is absent`);
  it('example_rollouts.jsonl: replaying the recorded tool calls reproduces tool outputs and reward', async () => {
    const pairs = recordedRollouts(dataDir);
    let reproduced = 0;
    for (const { input, recorded: rec } of pairs) {
      expect(input).toBeDefined();
      let { cookie } = await post('/seed_session', input);
      const output = (rec.response as { output: Item[] }).output;
      for (const item of output.filter((o) => o.type === 'function_call')) {
        const r = await post(`/${item.name}`, JSON.parse(item.arguments!), cookie);
        cookie = r.cookie;
        const seen = output.find((o) => o.type === 'function_call_output' && o.call_id === item.call_id)!;
        expect(r.json).toEqual(JSON.parse(seen.output!));
      }
      const v = await post('/verify', { ...input, response: rec.response }, cookie);
      expect(v.status).toBe(200);
      expect(v.json.reward).toBe(rec.reward);
      expect(Object.keys(v.json).sort()).toEqual(Object.keys(rec).sort());
      reproduced++;
    }
    expect(reproduced).toBe(5);
    console.log(`stateful_counter example_rollouts.jsonl: ${reproduced}/${pairs.length} recorded rollouts reproduced`);
  });
});
