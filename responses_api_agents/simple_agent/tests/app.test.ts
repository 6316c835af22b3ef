/**
 * simple_agent against real servers on 127.0.0.1: a resources server defined here (it records
 * which session each call arrived in) and a stub model that answers from a script.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BaseVerifyRequestSchema, defineResourcesServer, ResourcesServerConfigSchema } from '@nemo-gym/core/server';
import {
  functionCall,
  globalConfigFor,
  modelResponse,
  startStubServer,
  startTestServer,
  textResponse,
  type StubAnswer,
  type StubRequest,
  type StubServer,
  type TestServer,
} from '@nemo-gym/core/testing';
import { server as agentServer } from '../app.js';

interface ToolCall {
  tool: string;
  session: string;
  args: unknown;
}

const resourcesServer = defineResourcesServer({
  className: 'AgentTestResources',
  configSchema: ResourcesServerConfigSchema,
  setup: () => ({ seeded: new Set<string>(), calls: [] as ToolCall[] }),
  seedSession: {
    body: z.object({}).loose(),
    handler: (_body, ctx) => {
      ctx.state.seeded.add(ctx.sessionId);
      return {};
    },
  },
  tools: {
    get_weather: {
      description: 'The weather in a city.',
      body: z.object({ city: z.string() }),
      handler: ({ city }, ctx) => {
        ctx.state.calls.push({ tool: 'get_weather', session: ctx.sessionId, args: { city } });
        return { city, weather_description: `The weather in ${city} is cold.` };
      },
    },
    station_down: {
      body: z.object({}),
      handler: (_body, ctx) => {
        ctx.state.calls.push({ tool: 'station_down', session: ctx.sessionId, args: {} });
        throw new Error('the weather station is down');
      },
    },
  },
  verify: {
    body: BaseVerifyRequestSchema.loose(),
    handler: (body, ctx) => {
      // Reward = tool calls made in the session that was seeded and is being verified.
      const own = ctx.state.calls.filter((c) => c.session === ctx.sessionId).length;
      return { ...body, reward: ctx.state.seeded.has(ctx.sessionId) ? own : -1, verified_session: ctx.sessionId };
    },
  },
});

const MODEL_COOKIE = 'StubModel___policy_model';

/** What the stub model answers next; each test sets it. */
let script: (req: StubRequest, index: number) => unknown = () => textResponse('nothing scripted');
let resources: TestServer<unknown, { seeded: Set<string>; calls: ToolCall[] }>;
let model: StubServer;
let agent: TestServer;
let seen = 0;

async function buildAgent(extra: Record<string, unknown> = {}): Promise<TestServer> {
  return startTestServer(agentServer, {
    config: {
      name: 'test_agent',
      resources_server: { type: 'resources_servers', name: 'weather' },
      model_server: { type: 'responses_api_models', name: 'policy_model' },
      ...extra,
    },
    globalConfig: globalConfigFor({
      weather: { kind: 'resources_servers', impl: 'agent_test_resources', port: resources.port },
      policy_model: { kind: 'responses_api_models', impl: 'stub', port: model.port },
    }),
  });
}

/** Model requests since the current test began. */
const modelCalls = () => model.requestsTo('/v1/responses').slice(seen);

beforeAll(async () => {
  resources = (await startTestServer(resourcesServer, { config: { name: 'weather', domain: 'agent' }, listen: true })) as typeof resources;
  model = await startStubServer({
    '/v1/responses': (req, index): StubAnswer => {
      const out = script(req, index);
      if (out instanceof RawAnswer) return out.answer;
      return { json: out, headers: { 'set-cookie': `${MODEL_COOKIE}=turn${index}; Path=/` } };
    },
  });
  agent = await buildAgent();
});
afterAll(async () => {
  await agent?.close();
  await resources?.close();
  await model?.close();
});
beforeEach(() => {
  seen = model.requestsTo('/v1/responses').length;
  resources.context.state.calls.length = 0;
});

/** A scripted model answer sent as it is (status and headers), not as a Response body. */
class RawAnswer {
  constructor(readonly answer: StubAnswer) {}
}

/** Answers the next model calls in order (the last answer repeats). */
function scripted(...answers: unknown[]): void {
  const base = model.requestsTo('/v1/responses').length;
  script = (_req, index) => answers[Math.min(index - base, answers.length - 1)];
}

describe('/v1/responses: the tool loop', () => {
  it('runs the function calls in order and feeds their outputs back to the model', async () => {
    scripted(modelResponse([functionCall('get_weather', { city: 'Paris' }, 'a'), functionCall('get_weather', { city: 'Berlin' }, 'b')]), textResponse('Cold in both.'));
    const r = await agent.post('/v1/responses', { input: 'Weather in Paris and Berlin?' });
    expect(r.status, r.text).toBe(200);
    expect(resources.context.state.calls.map((c) => c.args)).toEqual([{ city: 'Paris' }, { city: 'Berlin' }]);
    const calls = modelCalls();
    expect(calls).toHaveLength(2);
    expect(calls[0]!.body.input).toEqual([{ role: 'user', content: 'Weather in Paris and Berlin?' }]);
    const fed = calls[1]!.body.input as Record<string, unknown>[];
    expect(fed.slice(3)).toEqual([
      { type: 'function_call_output', call_id: 'call_a', output: '{"city":"Paris","weather_description":"The weather in Paris is cold."}' },
      { type: 'function_call_output', call_id: 'call_b', output: '{"city":"Berlin","weather_description":"The weather in Berlin is cold."}' },
    ]);
    expect(r.json.output.map((o: { type: string }) => o.type)).toEqual(['function_call', 'function_call', 'function_call_output', 'function_call_output', 'message']);
    expect(r.json.output[4].content[0].text).toBe('Cold in both.');
  });

  it('stops after max_steps model calls even while the model keeps calling tools', async () => {
    const limited = await buildAgent({ max_steps: 2 });
    try {
      scripted(modelResponse([functionCall('get_weather', { city: 'Oslo' }, 'loop')]));
      const r = await limited.post('/v1/responses', { input: [{ role: 'user', content: 'forever' }] });
      expect(r.status, r.text).toBe(200);
      expect(modelCalls()).toHaveLength(2);
      expect(resources.context.state.calls).toHaveLength(2);
      expect(r.json.output.map((o: { type: string }) => o.type)).toEqual(['function_call', 'function_call_output', 'function_call', 'function_call_output']);
    } finally {
      await limited.close();
    }
  });

  it('malformed tool-call arguments become the tool output; the tool is not called and the loop goes on', async () => {
    scripted(modelResponse([functionCall('get_weather', '{"city": "Par', 'bad')]), textResponse('Sorry.'));
    const r = await agent.post('/v1/responses', { input: 'Paris?' });
    expect(r.status, r.text).toBe(200);
    expect(resources.context.state.calls).toHaveLength(0);
    const out = r.json.output.find((o: { type: string }) => o.type === 'function_call_output');
    expect(out.call_id).toBe('call_bad');
    expect(out.output).toMatch(/^\{"error": "Invalid tool call arguments: SyntaxError\(\\".+\\"\)"\}$/);
    expect(modelCalls()).toHaveLength(2);
    expect((modelCalls()[1]!.body.input as unknown[]).at(-1)).toEqual({ type: 'function_call_output', call_id: 'call_bad', output: out.output });
  });

  it('tool HTTP errors (500, unknown tool, bad arguments) become the tool output, each call sent once', async () => {
    scripted(
      modelResponse([functionCall('station_down', {}, 'e1'), functionCall('no_such_tool', {}, 'e2'), functionCall('get_weather', { city: 7 }, 'e3')]),
      textResponse('The tools failed.'),
    );
    const r = await agent.post('/v1/responses', { input: 'weather?' });
    expect(r.status, r.text).toBe(200);
    const outputs = r.json.output.filter((o: { type: string }) => o.type === 'function_call_output').map((o: { output: string }) => o.output);
    expect(outputs[0]).toBe('"Error: the weather station is down"');
    expect(JSON.parse(outputs[1])).toEqual({ detail: 'Not Found', path: '/no_such_tool' });
    expect(JSON.parse(outputs[2]).detail[0]).toMatchObject({ loc: ['body', 'city'] });
    expect(resources.context.state.calls.map((c) => c.tool)).toEqual(['station_down']);
  });
});

describe('/run: one rollout', () => {
  const row = { responses_create_params: { input: [{ role: 'user', content: 'Paris and Rome?' }] }, task_id: 7 };

  it('forwards cookies so seed_session, every tool call and verify share one resources session', async () => {
    scripted(modelResponse([functionCall('get_weather', { city: 'Paris' }, 'p')]), modelResponse([functionCall('get_weather', { city: 'Rome' }, 'r')]), textResponse('Cold.'));
    const r = await agent.post('/run', row);
    expect(r.status, r.text).toBe(200);
    // reward counts the calls made in the seeded session that verify ran in: both, and it was seeded
    expect(r.json.reward).toBe(2);
    expect(r.json.task_id).toBe(7);
    const sessions = new Set(resources.context.state.calls.map((c) => c.session));
    expect([...sessions]).toEqual([r.json.verified_session]);

    // the model session: no cookie on the first call, then the cookie the model set, on every later call
    const calls = modelCalls();
    expect(calls).toHaveLength(3);
    expect(calls[0]!.headers.cookie).toBeUndefined();
    expect(calls[1]!.headers.cookie).toContain(`${MODEL_COOKIE}=turn`);
    expect(calls[2]!.headers.cookie).toContain(`${MODEL_COOKIE}=turn`);
    // the caller gets both sessions back
    expect(Object.keys(r.cookies)).toEqual(expect.arrayContaining(['AgentTestResources___weather', MODEL_COOKIE, agent.cookieName]));
  });

  it('a model rate limit after a tool ran ends /run with 429, Retry-After and the no-resend header; the model server is asked once', async () => {
    const limited = new RawAnswer({ status: 429, headers: { 'retry-after': '0', 'x-nemo-gym-no-resend': '1' }, json: { error: { message: 'rate limited' } } });
    scripted(modelResponse([functionCall('get_weather', { city: 'Paris' }, 'p')]), limited);
    const r = await agent.post('/run', row);
    expect(r.status, r.text).toBe(429);
    expect(r.headers['retry-after']).toBe('0');
    // The rollout had started (a session seeded, a tool run): the collector must record it, not resend it.
    expect(r.headers['x-nemo-gym-no-resend']).toBe('1');
    expect(r.json.detail).toContain('model server `policy_model` answered HTTP 429');
    // The model server had spent its own retries (it said so): one call for the second step.
    expect(modelCalls()).toHaveLength(2);
    expect(resources.context.state.calls.map((c) => c.tool)).toEqual(['get_weather']);
  });

  it('two rollouts get two resources sessions', async () => {
    scripted(modelResponse([functionCall('get_weather', { city: 'Lima' }, 'l')]), textResponse('Cold.'));
    const first = await agent.post('/run', row);
    scripted(modelResponse([functionCall('get_weather', { city: 'Quito' }, 'q')]), textResponse('Cold.'));
    const second = await agent.post('/run', row);
    expect([first.json.reward, second.json.reward]).toEqual([1, 1]);
    expect(first.json.verified_session).not.toBe(second.json.verified_session);
  });
});

describe('a row without tools', () => {
  const bare = { responses_create_params: { input: [{ role: 'user', content: 'Weather in Oslo?' }] } };
  const offered = (i: number) => (modelCalls()[i]!.body.tools as { name: string }[] | undefined)?.map((t) => t.name) ?? [];

  it("is offered the resources server's tools (GET /ng_tools) with offer_server_tools, on every step", async () => {
    const offering = await buildAgent({ offer_server_tools: true });
    try {
      scripted(modelResponse([functionCall('get_weather', { city: 'Oslo' }, 'o')]), textResponse('Cold.'));
      const r = await offering.post('/run', bare);
      expect(r.status, r.text).toBe(200);
      expect(r.json.reward).toBe(1);
      expect(offered(0)).toEqual(['get_weather', 'station_down']);
      expect(offered(1)).toEqual(['get_weather', 'station_down']);
      expect(modelCalls()[0]!.body.tools).toContainEqual({
        type: 'function',
        name: 'get_weather',
        description: 'The weather in a city.',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        strict: false,
      });
    } finally {
      await offering.close();
    }
  });

  it('keeps its own tools when it lists some', async () => {
    const offering = await buildAgent({ offer_server_tools: true });
    try {
      scripted(textResponse('Cold.'));
      const own = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: true }];
      const r = await offering.post('/run', { responses_create_params: { ...bare.responses_create_params, tools: own } });
      expect(r.status, r.text).toBe(200);
      expect(modelCalls()[0]!.body.tools).toEqual([expect.objectContaining({ name: 'get_weather', strict: true })]);
    } finally {
      await offering.close();
    }
  });

  it('is offered none by default (upstream sends the row as it is), nor when the setting is off globally', async () => {
    scripted(textResponse('No idea.'));
    expect((await agent.post('/run', bare)).status).toBe(200);
    expect(offered(0)).toEqual([]);
  });
});
