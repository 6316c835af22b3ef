/**
 * The Gymnasium protocol on a resources server: /reset, /step (keyed steps applied once, steps of
 * a session in order, no step after the end), /close, and the errors each route answers.
 */
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ServerDefinitionError } from '@nemo-gym/core/errors';
import { outputText } from '@nemo-gym/core/openai';
import { BaseVerifyRequestSchema, defineResourcesServer, GymnasiumServerConfigSchema, ResourcesServerConfigSchema, type Episode } from '@nemo-gym/core/server';
import { startTestServer, textResponse, type TestServer } from '@nemo-gym/core/testing';

interface Counter {
  total: number;
}

let applied = 0;
let closed: string[] = [];
let stepDelayMs = 0;

/** Adds the number the model says to a total; "stop" ends the episode, "boom" throws, "cut" truncates. */
const counter = defineResourcesServer({
  className: 'CounterEnv',
  configSchema: GymnasiumServerConfigSchema,
  gymnasium: {
    reset(metadata, episode: Episode<Counter>) {
      if (metadata.broken === true) throw new Error('the board file is missing');
      episode.state = { total: Number(metadata.start ?? 0) };
      return { observation: `total ${episode.state.total}`, info: { start: episode.state.total } };
    },
    async step(action, metadata, episode: Episode<Counter>) {
      if (stepDelayMs) await new Promise((r) => setTimeout(r, stepDelayMs));
      const text = outputText(action);
      if (text === 'boom') throw new RangeError('the counter overflowed');
      if (text === 'bad') return { reward: 'lots' as unknown as number };
      applied++;
      const state = episode.state!;
      if (text === 'stop') return { observation: null, reward: 1, terminated: true, info: { total: state.total, tag: metadata.tag } };
      if (text === 'cut') return { observation: null, reward: 0, truncated: true };
      state.total += Number(text);
      return { observation: `total ${state.total}`, reward: 0.5 };
    },
    close(episode) {
      closed.push(episode.id);
    },
  },
});

const ROW = { responses_create_params: { input: [{ role: 'user', content: 'count' }] }, start: 10, tag: 't' };
const stepBody = (text: string, key?: string) => ({ ...ROW, response: textResponse(text), ...(key === undefined ? {} : { _ng_step_request_id: key }) });

let env: TestServer | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
  applied = 0;
  closed = [];
  stepDelayMs = 0;
});

async function start(listen = false): Promise<TestServer> {
  env = await startTestServer(counter, { config: { name: 'counter_env', domain: 'games' }, listen });
  return env;
}

describe('reset and step', () => {
  it('reset answers the observation and info with the protocol flags; steps see the row as metadata', async () => {
    const s = (await start()).session();
    const r = await s.post('/reset', ROW);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ observation: 'total 10', info: { start: 10, supports_step_idempotency: true, supports_explicit_close: true } });
    expect((await s.post('/step', stepBody('5'))).json).toEqual({ observation: 'total 15', reward: 0.5, terminated: false, truncated: false, info: {} });
    const end = await s.post('/step', stepBody('stop'));
    expect(end.json).toEqual({ observation: null, reward: 1, terminated: true, truncated: false, info: { total: 15, tag: 't' } });
    // The episode's state was released when it ended.
    expect(closed).toHaveLength(1);
  });

  it('sessions are apart: two episodes keep their own totals', async () => {
    const server = await start();
    const a = server.session();
    const b = server.session();
    await a.post('/reset', ROW);
    await b.post('/reset', { ...ROW, start: 100 });
    await a.post('/step', stepBody('1'));
    expect((await b.post('/step', stepBody('1'))).json.observation).toBe('total 101');
    expect((await a.post('/step', stepBody('1'))).json.observation).toBe('total 12');
  });

  it('a step with the key of the last step is not applied again: the first answer is repeated', async () => {
    const s = (await start()).session();
    await s.post('/reset', ROW);
    const first = await s.post('/step', stepBody('5', 'k1'));
    const again = await s.post('/step', stepBody('5', 'k1'));
    expect(again.json).toEqual(first.json);
    expect(applied).toBe(1);
    expect((await s.post('/step', stepBody('5', 'k2'))).json.observation).toBe('total 20');
    expect(applied).toBe(2);
    // The last step is answered again after the episode ended too (its answer was lost in transit).
    const end = await s.post('/step', stepBody('stop', 'k3'));
    expect((await s.post('/step', stepBody('stop', 'k3'))).json).toEqual(end.json);
    expect(applied).toBe(3);
  });

  it('a keyed step resent while the first is still running waits for it and is applied once', async () => {
    const s = (await start()).session();
    await s.post('/reset', ROW);
    stepDelayMs = 100;
    const [a, b] = await Promise.all([s.post('/step', stepBody('3', 'same')), s.post('/step', stepBody('3', 'same'))]);
    expect(a.json).toEqual(b.json);
    expect(a.json.observation).toBe('total 13');
    expect(applied).toBe(1);
  });

  it('a step whose connection was lost after the server had it, resent with its key, is applied once (real HTTP)', async () => {
    const server = await start(true);
    const reset = await server.post('/reset', ROW);
    stepDelayMs = 300;
    const headers = { 'content-type': 'application/json', cookie: reset.cookie };
    const body = JSON.stringify(stepBody('4', 'lost-1'));
    const dispatcher = new Agent();
    try {
      // The first attempt gives up before the answer (the connection is closed under it).
      await expect(request(`${server.url}/step`, { method: 'POST', headers, body, dispatcher, signal: AbortSignal.timeout(100) })).rejects.toThrow();
      const retry = await request(`${server.url}/step`, { method: 'POST', headers, body, dispatcher });
      expect(retry.statusCode).toBe(200);
      expect(((await retry.body.json()) as { observation: string }).observation).toBe('total 14');
      expect(applied).toBe(1);
    } finally {
      await dispatcher.destroy();
    }
  });

  it('a second reset on a session ends the open episode (its state released) and starts afresh', async () => {
    const s = (await start()).session();
    await s.post('/reset', ROW);
    await s.post('/step', stepBody('5'));
    expect((await s.post('/reset', { ...ROW, start: 1 })).json.observation).toBe('total 1');
    expect(closed).toHaveLength(1);
    expect((await s.post('/step', stepBody('1'))).json.observation).toBe('total 2');
  });

  it('steps of one session run in order, one at a time', async () => {
    const s = (await start()).session();
    await s.post('/reset', ROW);
    stepDelayMs = 30;
    const answers = await Promise.all(['1', '2', '3'].map((n) => s.post('/step', stepBody(n))));
    expect(answers.map((a) => a.json.observation)).toEqual(['total 11', 'total 13', 'total 16']);
  });
});

describe('errors', () => {
  it('a step without a reset, after the end or after close answers 409 NG_ERR_ENV_NO_EPISODE', async () => {
    const server = await start();
    const none = await server.session().post('/step', stepBody('1'));
    expect(none.status).toBe(409);
    expect(none.json).toMatchObject({ code: 'NG_ERR_ENV_NO_EPISODE', detail: expect.stringContaining('call /reset first') });

    const s = server.session();
    await s.post('/reset', ROW);
    await s.post('/step', stepBody('cut', 'a'));
    const after = await s.post('/step', stepBody('1', 'b'));
    expect(after.status).toBe(409);
    expect(after.json.detail).toMatch(/has ended/);

    const c = server.session();
    await c.post('/reset', ROW);
    expect((await c.post('/close', {})).json).toEqual({});
    expect(closed).toHaveLength(2);
    expect((await c.post('/step', stepBody('1'))).status).toBe(409);
    // Closing again is harmless.
    expect((await c.post('/close', {})).status).toBe(200);
    expect(closed).toHaveLength(2);
  });

  it('a reset that throws answers 500 NG_ERR_ENV_RESET_FAILED naming the server and the error', async () => {
    const r = await (await start()).post('/reset', { ...ROW, broken: true });
    expect(r.status).toBe(500);
    expect(r.json).toEqual({ code: 'NG_ERR_ENV_RESET_FAILED', detail: expect.stringContaining('CounterEnv: reset failed: Error: the board file is missing') });
  });

  it('a step that throws, or returns a malformed result, answers 500 NG_ERR_ENV_STEP_FAILED; the episode goes on', async () => {
    const s = (await start()).session();
    await s.post('/reset', ROW);
    const boom = await s.post('/step', stepBody('boom'));
    expect(boom.status).toBe(500);
    expect(boom.json).toMatchObject({ code: 'NG_ERR_ENV_STEP_FAILED', detail: expect.stringContaining('RangeError: the counter overflowed') });
    const bad = await s.post('/step', stepBody('bad'));
    expect(bad.json).toMatchObject({ code: 'NG_ERR_ENV_STEP_FAILED', detail: expect.stringContaining('reward') });
    expect((await s.post('/step', stepBody('2'))).json.observation).toBe('total 12');
  });

  it('a step body without a response is refused with 422; /verify answers 501', async () => {
    const server = await start();
    const s = server.session();
    await s.post('/reset', ROW);
    expect((await s.post('/step', ROW)).status).toBe(422);
    const v = await s.post('/verify', stepBody('x'));
    expect(v.status).toBe(501);
    expect(v.json.detail).toMatch(/scores in \/step.*gymnasium_agent/);
  });

  it('an idle episode is dropped and its state released; a late step is told why (410)', async () => {
    env = await startTestServer(counter, { config: { name: 'counter_env', domain: 'games', session_idle_ttl_s: 0.05 } });
    const s = env.session();
    await s.post('/reset', ROW);
    await new Promise((r) => setTimeout(r, 120));
    const late = await s.post('/step', stepBody('1'));
    expect(late.status).toBe(410);
    expect(late.json.detail).toMatch(/episode of this session was dropped.*session_idle_ttl_s/);
    expect(closed).toHaveLength(1);
  });
});

describe('definitions', () => {
  it('a resources server needs verify or gymnasium; reset, step and close are not tool names there', () => {
    expect(() => defineResourcesServer({ className: 'Nothing', configSchema: ResourcesServerConfigSchema })).toThrow(ServerDefinitionError);
    const bad = defineResourcesServer({
      className: 'Clash',
      configSchema: ResourcesServerConfigSchema,
      gymnasium: { step: () => ({}) },
      tools: { step: { body: z.object({}), handler: () => ({}) } },
    });
    return expect(bad.build({ config: { domain: 'games' } })).rejects.toThrow(/tool cannot be named step/);
  });

  it('a server with verify and no gymnasium has no /reset', async () => {
    const plain = defineResourcesServer({ className: 'Plain', configSchema: ResourcesServerConfigSchema, verify: { body: BaseVerifyRequestSchema.loose(), handler: (b) => ({ ...b, reward: 1 }) } });
    env = await startTestServer(plain, { config: { domain: 'games' } });
    expect((await env.post('/reset', ROW)).status).toBe(404);
  });
});
