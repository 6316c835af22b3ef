import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core';
import { server } from '../app.js';

type App = Awaited<ReturnType<typeof server.build>>;
let app: App;
const COOKIE = 'StatefulCounterResourcesServer___stateful_counter_resources_server';

beforeAll(async () => {
  app = await server.build({ config: { name: 'stateful_counter_resources_server', domain: 'agent' } });
});
afterAll(async () => {
  await app.close();
});

/** Cookie header value for the session cookie a response set. */
function sessionCookie(setCookie: string | string[] | undefined): string {
  const all = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
  const ours = all.find((c) => c.startsWith(`${COOKIE}=`));
  if (!ours) throw new Error(`no ${COOKIE} cookie in ${JSON.stringify(all)}`);
  return ours.split(';')[0]!;
}

async function post(url: string, payload?: unknown, cookie?: string) {
  const res = await app.inject({
    method: 'POST',
    url,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    headers: cookie ? { cookie } : {},
  });
  return { status: res.statusCode, json: res.json() as Record<string, unknown>, cookie: sessionCookie(res.headers['set-cookie']) };
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
    const before = app.ngContext.state.store.size;
    const v = await post('/verify', verifyBody(15), s.cookie);
    expect(v.status).toBe(200);
    expect(v.json.reward).toBe(1);
    expect(Object.keys(v.json).sort()).toEqual(['response', 'responses_create_params', 'reward']);
    expect(app.ngContext.state.store.size).toBe(before - 1);
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
    const small = await server.build({ config: { name: 'stateful_counter_resources_server', domain: 'agent', max_sessions: 1 } });
    try {
      const seedOf = async () => {
        const r = await small.inject({ method: 'POST', url: '/seed_session', payload: { initial_count: 1 } });
        return sessionCookie(r.headers['set-cookie']);
      };
      const first = await seedOf();
      await seedOf(); // the second live session pushes the first one out
      const inc = await small.inject({ method: 'POST', url: '/increment_counter', payload: { count: 1 }, headers: { cookie: first } });
      expect(inc.statusCode).toBe(410);
      expect(inc.body).toContain('max_sessions');
      const v = await small.inject({ method: 'POST', url: '/verify', payload: verifyBody(2), headers: { cookie: first } });
      expect(v.statusCode).toBe(410);
      expect(v.body).toContain('max_sessions = 1');
    } finally {
      await small.close();
    }
  });
});

describe('bad input', () => {
  it('seed without initial_count is a 422', async () => {
    const r = await app.inject({ method: 'POST', url: '/seed_session', payload: { expected_count: 3 } });
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('initial_count');
  });

  it('non-integer counts are a 422; numeric strings are accepted like pydantic', async () => {
    expect((await app.inject({ method: 'POST', url: '/increment_counter', payload: { count: 'two' } })).statusCode).toBe(422);
    expect((await app.inject({ method: 'POST', url: '/increment_counter', payload: { count: 1.5 } })).statusCode).toBe(422);
    const s = await post('/increment_counter', { count: '2' });
    expect((await post('/get_counter_value', {}, s.cookie)).json).toEqual({ count: 2 });
  });

  it('verify without expected_count or response is a 422', async () => {
    const body = verifyBody(1) as Record<string, unknown>;
    delete body.expected_count;
    expect((await app.inject({ method: 'POST', url: '/verify', payload: body })).statusCode).toBe(422);
    const noResp = verifyBody(1) as Record<string, unknown>;
    delete noResp.response;
    expect((await app.inject({ method: 'POST', url: '/verify', payload: noResp })).statusCode).toBe(422);
  });

  it('malformed JSON is a 422', async () => {
    const r = await app.inject({ method: 'POST', url: '/increment_counter', payload: '{"count": ', headers: { 'content-type': 'application/json' } });
    expect(r.statusCode).toBe(422);
  });
});

describe('over real HTTP with the Set-Cookie the server returns', () => {
  let live: App;
  let base: string;
  beforeAll(async () => {
    live = await server.build({ config: { name: 'stateful_counter_resources_server', domain: 'agent' } });
    await live.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(live.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await live.close();
  });

  async function httpPost(path: string, body: unknown, cookie?: string) {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body),
    });
    return { json: (await res.json()) as Record<string, unknown>, cookie: sessionCookie(res.headers.getSetCookie()) };
  }

  it('seed_session -> increment -> get -> verify keeps one session', async () => {
    const seeded = await httpPost('/seed_session', { initial_count: 3, expected_count: 6 });
    let cookie = seeded.cookie;
    for (const count of [1, 2]) cookie = (await httpPost('/increment_counter', { count }, cookie)).cookie;
    const got = await httpPost('/get_counter_value', {}, cookie);
    expect(got.json).toEqual({ count: 6 });
    const verified = await httpPost('/verify', verifyBody(6), got.cookie);
    expect(verified.json.reward).toBe(1);
    expect(live.ngContext.state.store.has(cookie.split('=')[1]!.split('.')[0]!)).toBe(false);
  });
});

const dataDir = sharedPath('upstream-data', 'stateful_counter');

function readJsonl(p: string): Record<string, unknown>[] {
  return readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function inputKey(r: Record<string, unknown>): string {
  const input = (r.responses_create_params as { input: { content?: unknown }[] }).input;
  return JSON.stringify(input.map((m) => m.content));
}

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
    const inputs = new Map(readJsonl(join(dataDir, 'example.jsonl')).map((r) => [inputKey(r), r]));
    const recorded = readJsonl(join(dataDir, 'example_rollouts.jsonl'));
    let reproduced = 0;
    for (const rec of recorded) {
      const input = inputs.get(inputKey(rec))!;
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
    console.log(`stateful_counter example_rollouts.jsonl: ${reproduced}/${recorded.length} recorded rollouts reproduced`);
  });
});
