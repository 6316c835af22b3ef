/**
 * gymnasium_agent against in-process servers on 127.0.0.1: a Gymnasium-style environment (behind a
 * TCP proxy that can lose a step's answer), and a stub model server.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { outputText } from '@nemo-gym/core/openai';
import { defineResourcesServer, GymnasiumServerConfigSchema, type Episode } from '@nemo-gym/core/server';
import { globalConfigFor, startStubServer, startTestServer, textResponse, type StubServer, type TestServer } from '@nemo-gym/core/testing';
import { server as agent } from '../app.js';

type Json = Record<string, any>;

let applied = 0;
let closes = 0;
/** Each step's reward is the number the model says; "end" terminates. */
const env = defineResourcesServer({
  className: 'SumEnv',
  configSchema: GymnasiumServerConfigSchema,
  gymnasium: {
    reset(metadata, episode: Episode<number>) {
      if (metadata.fail === 'reset') throw new Error('no such level');
      episode.state = 0;
      return { observation: 'go', info: {} };
    },
    step(action, metadata, episode: Episode<number>) {
      const text = outputText(action);
      if (metadata.fail === 'step') throw new Error('the level crashed');
      applied++;
      episode.state = episode.state! + 1;
      if (text === 'end') return { reward: 0, terminated: true, info: { steps: episode.state } };
      return { observation: `step ${episode.state} done`, reward: Number(text) };
    },
    close() {
      closes++;
    },
  },
});

/** A TCP proxy that, `drops` times, closes the connection when a /step's answer comes back (the server had the step). */
async function startLossyProxy(target: number): Promise<{ port: number; drops: number; stepsSeen: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = { port: 0, drops: 0, stepsSeen: 0, close: async () => {} };
  const server: Server = createServer((client) => {
    const upstream = createConnection(target, '127.0.0.1');
    sockets.add(client).add(upstream);
    let stepPending = false;
    client.on('data', (d: Buffer) => {
      if (d.toString('latin1').includes('POST /step ')) {
        state.stepsSeen++;
        stepPending = true;
      }
      upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      if (stepPending && state.drops > 0) {
        state.drops--;
        client.destroy();
        upstream.destroy();
        return;
      }
      stepPending = false;
      client.write(d);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.port = (server.address() as { port: number }).port;
  state.close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return state;
}

let script: string[] = [];
let model: StubServer;
let resources: TestServer;
let proxy: Awaited<ReturnType<typeof startLossyProxy>>;
const agents: TestServer[] = [];

async function agentWith(extra: Json = {}, envName = 'env'): Promise<TestServer> {
  const servers = globalConfigFor({
    policy_model: { kind: 'responses_api_models', impl: 'stub', port: model.port },
    env: { kind: 'resources_servers', impl: 'sum_env', port: proxy.port },
    direct_env: { kind: 'resources_servers', impl: 'sum_env', port: resources.port },
  });
  const a = await startTestServer(agent, {
    config: { name: 'gym_agent', resources_server: { type: 'resources_servers', name: envName }, model_server: { type: 'responses_api_models', name: 'policy_model' }, ...extra },
    globalConfig: servers,
  });
  agents.push(a);
  return a;
}

const ROW = { responses_create_params: { input: 'play' } };

beforeAll(async () => {
  model = await startStubServer({
    '/v1/responses': (_req, i) => (script[i] === 'fail' ? { status: 500, json: { detail: 'backend down' } } : { json: textResponse(script[i] ?? 'end', { usage: { input_tokens: 2, output_tokens: 1, total_tokens: 3 } }) }),
  });
  resources = await startTestServer(env, { config: { name: 'env', domain: 'games' }, listen: true });
  proxy = await startLossyProxy(resources.port);
});

afterEach(async () => {
  for (const a of agents.splice(0)) await a.close();
  model.requests.length = 0;
  applied = 0;
  closes = 0;
  proxy.drops = 0;
  proxy.stepsSeen = 0;
});

afterAll(async () => {
  await proxy.close();
  await resources.close();
  await model.close();
});

describe('gymnasium_agent /run', () => {
  it('runs reset, then model <-> step until terminated; sums rewards; observations are input items; closes the episode', async () => {
    script = ['1', '2', 'end'];
    const r = await (await agentWith()).post('/run', ROW);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ reward: 3, terminated: true, truncated: false, info: { steps: 3 }, num_steps: 3 });
    expect(r.json.responses_create_params.input).toEqual([
      { content: 'play', role: 'user', type: 'message' },
      { content: 'go', role: 'user', type: 'message' },
    ]);
    const out = r.json.response.output as Json[];
    expect(out.map((o) => (o.role === 'user' ? `user:${o.content}` : `model:${o.content[0].text}`))).toEqual(['model:1', 'user:step 1 done', 'model:2', 'user:step 2 done', 'model:end']);
    expect(r.json.response.usage).toMatchObject({ input_tokens: 6, output_tokens: 3, total_tokens: 9 });
    // The third model call saw everything before it.
    expect(model.requests[2]!.body.input).toHaveLength(6);
    expect(closes).toBe(1);
  });

  it('reward_aggregation last and max; max_steps truncates', async () => {
    script = ['5', '2', 'end'];
    expect((await (await agentWith({ reward_aggregation: 'last' })).post('/run', ROW)).json.reward).toBe(0);
    model.requests.length = 0;
    expect((await (await agentWith({ reward_aggregation: 'max' })).post('/run', ROW)).json.reward).toBe(5);
    model.requests.length = 0;
    const t = await (await agentWith({ max_steps: 2 })).post('/run', ROW);
    expect(t.json).toMatchObject({ reward: 7, terminated: false, truncated: true, num_steps: 2 });
  });

  it('a step whose answer was lost on the way back is resent with its key and applied once', async () => {
    script = ['1', '2', 'end'];
    proxy.drops = 1;
    const r = await (await agentWith()).post('/run', ROW);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ reward: 3, terminated: true, info: { steps: 3 } });
    // Four /step requests reached the server, three were applied.
    expect(proxy.stepsSeen).toBe(4);
    expect(applied).toBe(3);
  });

  it('a reset that throws fails the rollout with NG_ERR_ENV_RESET_FAILED; no model call is made', async () => {
    const r = await (await agentWith({}, 'direct_env')).post('/run', { ...ROW, fail: 'reset' });
    expect(r.status).toBe(502);
    expect(r.json).toMatchObject({ code: 'NG_ERR_ENV_RESET_FAILED', detail: expect.stringMatching(/\/reset answered HTTP 500.*SumEnv: reset failed: Error: no such level/) });
    expect(model.requests).toHaveLength(0);
  });

  it('a step that throws fails the rollout with NG_ERR_ENV_STEP_FAILED, and the episode is closed', async () => {
    script = ['1'];
    const r = await (await agentWith({}, 'direct_env')).post('/run', { ...ROW, fail: 'step' });
    expect(r.status).toBe(502);
    expect(r.json).toMatchObject({ code: 'NG_ERR_ENV_STEP_FAILED', detail: expect.stringContaining('/step (step 1) answered HTTP 500') });
    expect(closes).toBe(1);
  });

  it('a model failure fails the rollout with the model\'s code, and the episode is closed', async () => {
    script = ['1', 'fail'];
    const r = await (await agentWith({}, 'direct_env')).post('/run', ROW);
    expect(r.status).toBe(502);
    expect(r.json.code).toBe('NG_ERR_MODEL_UNREACHABLE');
    expect(closes).toBe(1);
  });
});

describe('an environment that does not offer keys or close (upstream\'s base class)', () => {
  let plain: StubServer;
  afterEach(async () => plain?.close());

  it('gets no step key and no /close; tool outputs become function_call_output items', async () => {
    plain = await startStubServer({
      '/reset': () => ({ json: { observation: null, info: {} } }),
      '/step': (_req, i) => ({ json: i === 0 ? { observation: null, reward: 0.25, terminated: false, truncated: false, info: { tool_outputs: [{ call_id: 'call_1', output: '{"ok": true}' }] } } : { observation: null, reward: 0.5, terminated: true, truncated: false, info: {} } }),
    });
    script = ['a', 'b'];
    const servers = globalConfigFor({
      policy_model: { kind: 'responses_api_models', impl: 'stub', port: model.port },
      plain_env: { kind: 'resources_servers', impl: 'plain', port: plain.port },
    });
    const a = await startTestServer(agent, { config: { name: 'gym_agent', resources_server: { type: 'resources_servers', name: 'plain_env' }, model_server: { type: 'responses_api_models', name: 'policy_model' } }, globalConfig: servers });
    agents.push(a);
    const r = await a.post('/run', ROW);
    expect(r.json).toMatchObject({ reward: 0.75, terminated: true });
    expect(r.json.response.output[1]).toMatchObject({ call_id: 'call_1', output: '{"ok": true}', type: 'function_call_output' });
    expect(plain.requestsTo('/step').every((q) => !('_ng_step_request_id' in q.body))).toBe(true);
    expect(plain.requestsTo('/close')).toHaveLength(0);
    // The step body is the row plus the model's response.
    expect(plain.requestsTo('/step')[0]!.body).toMatchObject({ responses_create_params: { input: 'play' }, response: { output: [{ content: [{ text: 'a' }] }] } });
  });
});
