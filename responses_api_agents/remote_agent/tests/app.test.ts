/**
 * remote_agent against real servers on 127.0.0.1: a resources server defined here (it records each
 * tool call with its session, and what /verify received) and a stub agent service (a real HTTP
 * server) whose answers each test scripts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BaseVerifyRequestSchema, defineResourcesServer, ResourcesServerConfigSchema } from '@nemo-gym/core/server';
import { functionCall, globalConfigFor, messageItem, modelResponse, startStubServer, startTestServer, textResponse, type StubAnswer, type StubRequest, type StubServer, type TestServer } from '@nemo-gym/core/testing';
import { agentBaseUrl, RemoteAgentConfigSchema, server as agentServer } from '../app.js';

type Json = Record<string, any>;

interface ToolCall {
  tool: string;
  session: string;
  args: unknown;
}

const resourcesServer = defineResourcesServer({
  className: 'RemoteTestResources',
  configSchema: ResourcesServerConfigSchema,
  setup: () => ({ seeded: new Set<string>(), calls: [] as ToolCall[], verified: [] as Json[] }),
  seedSession: {
    body: z.object({}).loose(),
    handler: (_body, ctx) => {
      ctx.state.seeded.add(ctx.sessionId);
      return {};
    },
  },
  tools: {
    get_weather: {
      body: z.object({ city: z.string() }),
      handler: ({ city }, ctx) => {
        ctx.state.calls.push({ tool: 'get_weather', session: ctx.sessionId, args: { city } });
        return { city, weather_description: `The weather in ${city} is cold.` };
      },
    },
  },
  verify: {
    body: BaseVerifyRequestSchema.loose(),
    handler: (body, ctx) => {
      ctx.state.verified.push(body);
      const own = ctx.state.calls.filter((c) => c.session === ctx.sessionId).length;
      return { ...body, reward: ctx.state.seeded.has(ctx.sessionId) ? own : -1, verified_session: ctx.sessionId };
    },
  },
});

const SERVICE_COOKIE = 'svc_session';
const KEY = 'sk-remote-S3CRET-key';

/** What the stub service answers next; each test sets it. */
let script: (req: StubRequest, index: number) => unknown = () => textResponse('nothing scripted');
let resources: TestServer<unknown, { seeded: Set<string>; calls: ToolCall[]; verified: Json[] }>;
let service: StubServer;
let agent: TestServer;
let seen = 0;
/** Hung service calls, released when the test file ends. */
const hanging: (() => void)[] = [];

/** A scripted answer sent as it is (status, headers, text), not as a Response body. */
class Raw {
  constructor(readonly answer: StubAnswer) {}
}
const HANG = Symbol('hang');

async function buildAgent(extra: Record<string, unknown> = {}): Promise<TestServer> {
  return startTestServer(agentServer, {
    config: { name: 'remote', agent_base_url: `${service.url}/`, agent_api_key: KEY, resources_server: { type: 'resources_servers', name: 'weather' }, ...extra },
    globalConfig: globalConfigFor({ weather: { kind: 'resources_servers', impl: 'remote_test_resources', port: resources.port } }),
    listen: true,
  });
}

/** Service calls since the current test began. */
const serviceCalls = () => service.requestsTo('/v1/responses').slice(seen);

/** Answers the next service calls in order (the last answer repeats). */
function scripted(...answers: unknown[]): void {
  const base = service.requestsTo('/v1/responses').length;
  script = (_req, index) => answers[Math.min(index - base, answers.length - 1)];
}

beforeAll(async () => {
  resources = (await startTestServer(resourcesServer, { config: { name: 'weather', domain: 'agent' }, listen: true })) as typeof resources;
  service = await startStubServer({
    '/v1/responses': (req, index): StubAnswer | Promise<StubAnswer> => {
      const out = script(req, index);
      if (out === HANG) return new Promise((resolve) => hanging.push(() => resolve({ json: textResponse('too late') })));
      if (out instanceof Raw) return out.answer;
      return { json: out, headers: { 'set-cookie': `${SERVICE_COOKIE}=turn${index}; Path=/` } };
    },
  });
  agent = await buildAgent();
});
afterAll(async () => {
  for (const release of hanging) release();
  await agent?.close();
  await resources?.close();
  await service?.close();
});
beforeEach(() => {
  seen = service.requestsTo('/v1/responses').length;
  resources.context.state.calls.length = 0;
  resources.context.state.verified.length = 0;
});

const TOOLS = [{ type: 'function', name: 'get_weather', description: 'Weather', strict: true, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } }];
const row = {
  responses_create_params: { input: [{ role: 'user', content: 'Paris and Rome?' }], tools: TOOLS, temperature: 0.5 },
  task_id: 7,
  verifier_metadata: { expected: 'ANSWER-KEY-42' },
};
const types = (r: { json: Json }) => (r.json.response?.output ?? r.json.output).map((o: Json) => o.type);

describe('config', () => {
  it('agent_base_url: a trailing slash goes; a query, a fragment, credentials or another scheme are refused, credentials never echoed', () => {
    expect(agentBaseUrl(' http://h:9000/ ')).toEqual({ url: 'http://h:9000' });
    expect(agentBaseUrl('https://h/agents/x')).toEqual({ url: 'https://h/agents/x' });
    for (const bad of ['h:9000', 'ftp://h/x', 'http://h:1?token=abc', 'http://h:1#f', 'http://user:hunter2@h:1', 'not a url']) {
      const r = agentBaseUrl(bad);
      expect('problem' in r, bad).toBe(true);
      expect(JSON.stringify(r)).not.toContain('hunter2');
    }
    const parsed = RemoteAgentConfigSchema.safeParse({ name: 'x', agent_base_url: 'http://u:hunter2@h', resources_server: { type: 'resources_servers', name: 'r' } });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error!.issues)).toContain('agent_api_key');
    expect(JSON.stringify(parsed.error!.issues)).not.toContain('hunter2');
  });
});

describe('/run: the loop', () => {
  it('runs an unpaired call on the resources server, feeds its output back, and verifies on the final answer', async () => {
    scripted(modelResponse([functionCall('get_weather', { city: 'Paris' }, 'p')]), modelResponse([functionCall('get_weather', { city: 'Rome' }, 'r')]), textResponse('Cold in both.'));
    const r = await agent.post('/run', row);
    expect(r.status, r.text).toBe(200);
    expect(r.json.reward).toBe(2);
    expect(r.json.task_id).toBe(7);
    expect(resources.context.state.calls.map((c) => c.args)).toEqual([{ city: 'Paris' }, { city: 'Rome' }]);
    // seed, tools and verify share one resources session
    expect(new Set(resources.context.state.calls.map((c) => c.session))).toEqual(new Set([r.json.verified_session]));
    const calls = serviceCalls();
    expect(calls).toHaveLength(3);
    // Each call carries the whole conversation: the task's input, then every item so far.
    expect(calls[1]!.body.input.slice(1)).toEqual([
      functionCall('get_weather', { city: 'Paris' }, 'p'),
      { type: 'function_call_output', call_id: 'call_p', output: '{"city":"Paris","weather_description":"The weather in Paris is cold."}' },
    ]);
    expect(calls[2]!.body.input).toHaveLength(5);
    expect(types(r)).toEqual(['function_call', 'function_call_output', 'function_call', 'function_call_output', 'message']);
    expect(r.json.response.output[4].content[0].text).toBe('Cold in both.');
  });

  it('runs parallel unpaired calls in order, all fed back on the next call', async () => {
    scripted(modelResponse([functionCall('get_weather', { city: 'Oslo' }, 'a'), functionCall('get_weather', { city: 'Bergen' }, 'b')]), textResponse('Cold.'));
    const r = await agent.post('/run', row);
    expect(r.status, r.text).toBe(200);
    expect(resources.context.state.calls.map((c) => c.args)).toEqual([{ city: 'Oslo' }, { city: 'Bergen' }]);
    const fed = serviceCalls()[1]!.body.input.slice(1).map((i: Json) => [i.type, i.call_id]);
    expect(fed).toEqual([['function_call', 'call_a'], ['function_call', 'call_b'], ['function_call_output', 'call_a'], ['function_call_output', 'call_b']]);
  });

  it('paired calls are the service\'s own records: they pass into the trajectory untouched and are not run', async () => {
    scripted(
      modelResponse([
        functionCall('web_search', { q: 'weather sites' }, 'own'),
        { type: 'function_call_output', call_id: 'call_own', output: '{"results": []}' },
        functionCall('get_weather', { city: 'Lima' }, 'ask'),
      ]),
      textResponse('Cold in Lima.'),
    );
    const r = await agent.post('/run', row);
    expect(r.status, r.text).toBe(200);
    expect(resources.context.state.calls.map((c) => c.tool)).toEqual(['get_weather']);
    expect(r.json.reward).toBe(1);
    const output = r.json.response.output as Json[];
    expect(output.map((o) => [o.type, o.call_id ?? null])).toEqual([
      ['function_call', 'call_own'],
      ['function_call_output', 'call_own'],
      ['function_call', 'call_ask'],
      ['function_call_output', 'call_ask'],
      ['message', null],
    ]);
    expect(output[1]!.output).toBe('{"results": []}');
  });

  it('an answer with no assistant message and no ask is followed by another call; max_steps bounds the loop', async () => {
    const limited = await buildAgent({ max_steps: 3 });
    try {
      scripted(modelResponse([functionCall('get_weather', { city: 'Quito' }, 'q')]));
      const r = await limited.post('/run', row);
      expect(r.status, r.text).toBe(200);
      expect(serviceCalls()).toHaveLength(3);
      expect(resources.context.state.calls).toHaveLength(3);
      expect(types(r).slice(-2)).toEqual(['function_call', 'function_call_output']);
      scripted(modelResponse([{ type: 'reasoning', id: 'rs_1', summary: [] }]), textResponse('Done.'));
      const again = await limited.post('/run', row);
      expect(again.status, again.text).toBe(200);
      expect(types(again)).toEqual(['reasoning', 'message']);
    } finally {
      await limited.close();
    }
  });

  it('concurrency bounds the rollouts in flight against the service; the others wait for a slot', async () => {
    const single = await buildAgent({ concurrency: 1, run_timeout_secs: 1 });
    try {
      scripted(HANG, textResponse('Second.'));
      const first = single.post('/run', row);
      await waitFor(() => serviceCalls().length === 1);
      const second = single.post('/run', row);
      await new Promise((r) => setTimeout(r, 700));
      // The second rollout has not reached the service while the first holds the slot.
      expect(serviceCalls()).toHaveLength(1);
      const [a, b] = await Promise.all([first, second]);
      expect(a.json.code).toBe('NG_ERR_TIMEOUT');
      // Its clock started when it got the slot: 700 ms of waiting did not count against its 1 s.
      expect(b.status, b.text).toBe(200);
      expect(serviceCalls()).toHaveLength(2);
    } finally {
      await single.close();
    }
  });

  it('usage is summed over the service\'s calls; an incomplete answer ends the loop and is verified', async () => {
    const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 13 };
    scripted(modelResponse([functionCall('get_weather', { city: 'Lima' }, 'l')], { usage }), modelResponse([messageItem('Cold')], { usage, incomplete_details: { reason: 'max_output_tokens' } }));
    const r = await agent.post('/run', row);
    expect(r.status, r.text).toBe(200);
    expect(r.json.response.usage).toMatchObject({ input_tokens: 20, output_tokens: 6, total_tokens: 26 });
    expect(r.json.response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });
});

describe('/run: training fields', () => {
  it('token ids the service puts on its items reach the verified trajectory unchanged', async () => {
    const bundle = { prompt_token_ids: [1, 2, 3], generation_token_ids: [4, 5], generation_log_probs: [-0.5, -0.25] };
    scripted(modelResponse([functionCall('get_weather', { city: 'Oslo' }, 'o', bundle)]), textResponse('Cold.', { output: [messageItem('Cold.', { prompt_token_ids: [1, 2, 3, 4, 5, 6], generation_token_ids: [7], generation_log_probs: [-1] })] }));
    const r = await agent.post('/run', row);
    expect(r.status, r.text).toBe(200);
    const output = r.json.response.output as Json[];
    expect(output[0]).toMatchObject(bundle);
    expect(output[2]).toMatchObject({ prompt_token_ids: [1, 2, 3, 4, 5, 6], generation_token_ids: [7], generation_log_probs: [-1] });
  });
});

describe('/run: what the service sees', () => {
  it('the task\'s create params and the conversation only: no verifier metadata, no other row field, none of our cookies; its own cookies come back', async () => {
    scripted(modelResponse([functionCall('get_weather', { city: 'Paris' }, 'p')]), textResponse('Cold.'));
    const caller = `${agent.cookieName}=caller-session; RemoteTestResources___weather=stale`;
    const r = await agent.post('/run', { ...row, responses_create_params: { ...row.responses_create_params, stream: true } }, { cookie: caller });
    expect(r.status, r.text).toBe(200);
    const [first, second] = serviceCalls();
    expect(first!.body).toEqual(row.responses_create_params);
    for (const call of [first!, second!]) {
      expect(call.text).not.toContain('ANSWER-KEY-42');
      expect(call.text).not.toContain('task_id');
      expect(call.headers.authorization).toBe(`Bearer ${KEY}`);
    }
    expect(first!.headers.cookie).toBeUndefined();
    // The service's own session cookie, and nothing of ours.
    expect(second!.headers.cookie).toBe(`${SERVICE_COOKIE}=turn${seen}`);
    // The verifier does get the row's fields, and the service's cookie is not handed to our caller.
    expect(resources.context.state.verified[0]!.verifier_metadata).toEqual({ expected: 'ANSWER-KEY-42' });
    expect(Object.keys(r.cookies)).not.toContain(SERVICE_COOKIE);
  });
});

/** The coded error answer of a /run that failed, and what it left undone. */
async function failedRun(body: Json = row) {
  const r = await agent.post('/run', body);
  expect(r.json.reward, r.text).toBeUndefined();
  expect(resources.context.state.verified).toHaveLength(0);
  return r;
}

describe('/run: a service that fails is a coded failure, never a reward', () => {
  it('an HTTP error after a tool ran: 502 NG_ERR_REMOTE_AGENT_FAILED naming the URL, the step and the body; the key never shown', async () => {
    scripted(modelResponse([functionCall('get_weather', { city: 'Paris' }, 'p')]), new Raw({ status: 500, json: { error: `boom with ${KEY}` } }));
    const r = await failedRun();
    expect(r.status).toBe(502);
    expect(r.json.code).toBe('NG_ERR_REMOTE_AGENT_FAILED');
    expect(r.json.detail).toContain(`the remote agent service at ${service.url}/v1/responses (step 2) answered HTTP 500`);
    expect(r.json.detail).toContain('boom with');
    expect(r.text).not.toContain(KEY);
    // 500 is never resent: the service may have acted on it.
    expect(serviceCalls()).toHaveLength(2);
  });

  it('a Response that reports its own failure (an error, status failed) is NG_ERR_REMOTE_AGENT_FAILED, not called again', async () => {
    scripted(modelResponse([], { status: 'failed', error: { code: 'server_error', message: 'my model backend is down' } }));
    const r = await failedRun();
    expect(r.status).toBe(502);
    expect(r.json.code).toBe('NG_ERR_REMOTE_AGENT_FAILED');
    expect(r.json.detail).toContain('(step 1) answered a Response that reports a failure (status "failed"): {"code":"server_error","message":"my model backend is down"}');
    expect(serviceCalls()).toHaveLength(1);
  });

  it('a rate limit stays a rate limit (429, Retry-After) and says not to resend the rollout', async () => {
    scripted(new Raw({ status: 429, headers: { 'retry-after': '0' }, json: { error: 'slow down' } }));
    const r = await failedRun();
    expect(r.status).toBe(429);
    expect(r.headers['x-nemo-gym-no-resend']).toBe('1');
    expect(r.json.code).toBe('NG_ERR_REMOTE_AGENT_FAILED');
  });

  it('a redirect is not followed', async () => {
    scripted(new Raw({ status: 307, headers: { location: `${service.url}/elsewhere` }, json: {} }));
    const r = await failedRun();
    expect(r.status).toBe(502);
    expect(r.json.detail).toContain(`HTTP 307 (a redirect to ${service.url}/elsewhere, which is not followed: set agent_base_url to the final address)`);
    expect(service.requestsTo('/elsewhere')).toHaveLength(0);
  });

  it('a service that is not running: 502 NG_ERR_REMOTE_AGENT_FAILED saying so', async () => {
    const gone = await startStubServer({});
    await gone.close();
    const down = await buildAgent({ agent_base_url: gone.url });
    try {
      const r = await down.post('/run', row);
      expect(r.status, r.text).toBe(502);
      expect(r.json.code).toBe('NG_ERR_REMOTE_AGENT_FAILED');
      expect(r.json.detail).toContain(`could not reach the remote agent service at ${gone.url}/v1/responses (step 1)`);
      expect(r.json.detail).toContain('ECONNREFUSED');
    } finally {
      await down.close();
    }
  });

  it('a call that hangs: 504 NG_ERR_REMOTE_AGENT_TIMEOUT within remote_responses_timeout_secs', async () => {
    const quick = await buildAgent({ remote_responses_timeout_secs: 0.5 });
    try {
      scripted(modelResponse([functionCall('get_weather', { city: 'Paris' }, 'p')]), HANG);
      const started = Date.now();
      const r = await quick.post('/run', row);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(r.status, r.text).toBe(504);
      expect(r.json.code).toBe('NG_ERR_REMOTE_AGENT_TIMEOUT');
      expect(r.json.detail).toContain('(step 2) gave no answer within remote_responses_timeout_secs = 0.5 s');
      expect(resources.context.state.verified).toHaveLength(0);
    } finally {
      await quick.close();
    }
  });

  it('a rollout past run_timeout_secs: 504 NG_ERR_TIMEOUT, the loop stopped', async () => {
    const bounded = await buildAgent({ run_timeout_secs: 0.6 });
    try {
      scripted(HANG);
      const started = Date.now();
      const r = await bounded.post('/run', row);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(r.status, r.text).toBe(504);
      expect(r.json.code).toBe('NG_ERR_TIMEOUT');
      expect(r.json.detail).toContain('took longer than run_timeout_secs = 0.6 s');
    } finally {
      await bounded.close();
    }
  });

  it('a caller that goes away cancels the rollout: no further tool, service call or verify', async () => {
    scripted(HANG, modelResponse([functionCall('get_weather', { city: 'Paris' }, 'p')]));
    const controller = new AbortController();
    const pending = fetch(`${agent.url}/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(row), signal: controller.signal }).catch((e: unknown) => e);
    await waitFor(() => serviceCalls().length === 1);
    controller.abort();
    await pending;
    hanging.shift()!();
    await new Promise((r) => setTimeout(r, 300));
    expect(serviceCalls()).toHaveLength(1);
    expect(resources.context.state.calls).toHaveLength(0);
    expect(resources.context.state.verified).toHaveLength(0);
  });
});

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('/run: malformed answers are NG_ERR_REMOTE_AGENT_BAD_RESPONSE with what is wrong and where', () => {
  const cases: [string, unknown, RegExp][] = [
    ['a body that is not JSON', new Raw({ text: 'Internal thinking...' }), /\(step 1\) answered HTTP 200 with a body that is not JSON .*: Internal thinking\.\.\./],
    ['JSON that is not a Response', new Raw({ json: { choices: [] } }), /\(step 1\) answered with something that is not a Responses API object: id: .*; created_at: /],
    ['a function_call without call_id', modelResponse([{ type: 'function_call', name: 'get_weather', arguments: '{}' }]), /not a Responses API object: output\.0\.call_id: /],
    ['a function_call without name', modelResponse([{ type: 'function_call', call_id: 'c1', arguments: '{}' }]), /not a Responses API object: output\.0\.name: /],
    ['a call of a built-in route', modelResponse([functionCall('verify', {}, 'v')]), /output\.0 \(function_call "verify", call_id "call_v"\) names no tool route \(\/verify is a built-in route/],
    ['a call of a path', modelResponse([functionCall('../seed_session', {}, 'v')]), /names no tool route \(a tool name is one path segment/],
    ['two asks with one call_id', modelResponse([functionCall('get_weather', { city: 'A' }, 'd'), functionCall('get_weather', { city: 'B' }, 'd')]), /output\.0 and output\.1 are two unpaired function_call items with call_id "call_d"/],
  ];
  for (const [what, answer, message] of cases) {
    it(what, async () => {
      scripted(answer);
      const r = await failedRun();
      expect(r.status, r.text).toBe(502);
      expect(r.json.code).toBe('NG_ERR_REMOTE_AGENT_BAD_RESPONSE');
      expect(r.json.detail).toMatch(message);
      expect(resources.context.state.calls).toHaveLength(0);
    });
  }
});

describe('/run: tool arguments the tool cannot take are the model\'s mistake, scored, never a failure', () => {
  it('arguments that are not JSON are answered with simple_agent\'s error output; non-object JSON goes to the tool, whose 422 is the output', async () => {
    scripted(modelResponse([functionCall('get_weather', '{"city": "Par', 'x'), functionCall('get_weather', '["Paris"]', 'y')]), textResponse('Sorry.'));
    const r = await agent.post('/run', { responses_create_params: { input: 'Paris?', tools: TOOLS }, verifier_metadata: {} });
    expect(r.status, r.text).toBe(200);
    const second = serviceCalls().at(-1)!.body.input as { type?: string; call_id?: string; output?: string }[];
    const outputs = second.filter((i) => i.type === 'function_call_output');
    expect(outputs.map((o) => o.call_id)).toEqual(['call_x', 'call_y']);
    expect(outputs[0]!.output).toMatch(/^\{"error": "Invalid tool call arguments: SyntaxError\(/);
    expect(outputs[1]!.output).toMatch(/"code":"NG_ERR_|422|detail/);
    expect(resources.context.state.verified).toHaveLength(1);
  });
});

describe('/v1/responses: the loop alone', () => {
  it('runs the loop in the caller\'s resources session and returns the trajectory (streamed when asked)', async () => {
    const seed = await resources.post('/seed_session', {});
    scripted(modelResponse([functionCall('get_weather', { city: 'Paris' }, 'p')]), textResponse('Cold.'));
    const r = await agent.post('/v1/responses', { input: 'Paris?', tools: TOOLS }, { cookie: seed.cookie });
    expect(r.status, r.text).toBe(200);
    expect(types(r)).toEqual(['function_call', 'function_call_output', 'message']);
    expect(resources.context.state.calls[0]!.session).toBe(seed.cookie.split('=')[1]!.split('.')[0]);
    expect(serviceCalls()[0]!.body.input).toEqual([{ role: 'user', content: 'Paris?' }]);
    scripted(textResponse('Streamed.'));
    const s = await agent.post('/v1/responses', { input: 'Hi', stream: true });
    expect(s.status).toBe(200);
    expect(s.text).toContain('event: response.completed');
    expect(serviceCalls().at(-1)!.body.stream).toBeUndefined();
  });
});
