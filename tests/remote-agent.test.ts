/**
 * remote_agent through ng-run + ng-collect-rollouts, as a user runs it: simple_weather and the
 * agent from responses_api_agents/remote_agent/configs/remote_agent.yaml, in front of a stub agent
 * service (a real HTTP server here) that asks for get_weather and then answers. The official
 * `openai` client checks that the stub is a faithful `/v1/responses` endpoint, and that
 * remote_agent's own `/v1/responses` is one too. A service that errors, hangs or answers a
 * malformed item is a recorded failure with its class; nothing private reaches the service.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { functionCall, messageItem, modelResponse, readJsonl, startStubServer, startTestServer, textResponse, type StubAnswer, type StubRequest, type StubServer } from '@nemo-gym/core/testing';
import { server as remoteAgent } from '../responses_api_agents/remote_agent/app.js';
import { parseDocBlocks } from './helpers/doc-blocks.js';
import { ROOT, runCommand, startStack, type Stack } from './helpers/stack.js';

type Json = Record<string, any>;

const CONFIG = 'responses_api_agents/remote_agent/configs/remote_agent.yaml';
const EXAMPLES = 'responses_api_agents/remote_agent/data/example.jsonl';
const AGENT = 'simple_weather_remote_agent';
const KEY = 'sk-remote-agent-E2E-S3CRET';
const CITIES = ['Oslo', 'Lisbon', 'Nairobi', 'Madrid', 'Rome', 'Montreal', 'Paris'];

/** The rows of a JSONL file ([] when the collection wrote none). */
const rowsOf = (p: string): Json[] => (existsSync(p) ? readJsonl(p) : []);

const textOf = (item: Json): string => (typeof item.content === 'string' ? item.content : (item.content ?? []).map((p: Json) => p.text ?? '').join(''));

/** Pending hangs of the service, released when the test ends. */
const hanging: (() => void)[] = [];

/**
 * The user's agent, as a service: on the first call it asks for the weather of every city the
 * user names (in parallel), on the next it answers from the tool outputs. A user text with
 * SERVICE-500, SERVICE-HANG or SERVICE-MALFORMED makes it fail that way.
 */
function weatherService(req: StubRequest): StubAnswer | Promise<StubAnswer> {
  const input = req.body.input as Json[];
  const user = textOf(input.find((i) => i.role === 'user')!);
  if (user.includes('SERVICE-500')) return { status: 500, json: { error: 'the agent crashed' } };
  if (user.includes('SERVICE-HANG')) return new Promise((resolve) => hanging.push(() => resolve({ status: 500, json: {} })));
  if (user.includes('SERVICE-MALFORMED')) return { json: modelResponse([{ type: 'function_call', name: 'get_weather', arguments: '{"city": "Oslo"}' }]) };
  const outputs = input.filter((i) => i.type === 'function_call_output');
  const usage = { input_tokens: 20, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 25 };
  if (outputs.length === 0) {
    const asks = CITIES.filter((c) => user.includes(c)).map((city, i) => functionCall('get_weather', { city }, `w${i}`));
    return { json: modelResponse(asks, { model: 'my-own-model', usage }) };
  }
  const said = outputs.map((o) => JSON.parse(o.output).weather_description).join(' ');
  return { json: modelResponse([messageItem(`${said} Wear a coat.`)], { model: 'my-own-model', usage }) };
}

let service: StubServer;
let stack: Stack;
const dir = mkdtempSync(join(tmpdir(), 'ng-remote-agent-'));

interface Collected {
  rows: Json[];
  failures: Json[];
  code: number | null;
  ms: number;
}

async function collect(name: string, input: string): Promise<Collected> {
  const output = join(dir, `${name}.jsonl`);
  const started = Date.now();
  const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, `+agent_name=${AGENT}`, `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${output}`]);
  return { rows: rowsOf(output), failures: rowsOf(output.replace(/\.jsonl$/, '_failures.jsonl')), code: r.code, ms: Date.now() - started };
}

const runs = new Map<string, Collected>();
/** Service calls made by the two collections. */
let collectedCalls = 0;
const savedKey = process.env.REMOTE_AGENT_API_KEY;

beforeAll(async () => {
  service = await startStubServer({ '/v1/responses': weatherService });
  // The key reaches ng-run the way the config reads it: from the environment.
  process.env.REMOTE_AGENT_API_KEY = KEY;
  try {
    stack = await startStack([`+config_paths=[${CONFIG}]`, `+remote_agent_base_url=${service.url}`, `++${AGENT}.responses_api_agents.remote_agent.remote_responses_timeout_secs=2`], 90_000);
  } finally {
    if (savedKey === undefined) delete process.env.REMOTE_AGENT_API_KEY;
    else process.env.REMOTE_AGENT_API_KEY = savedKey;
  }
  runs.set('examples', await collect('examples', join(process.cwd(), EXAMPLES)));
  const example = readJsonl(EXAMPLES)[0]!;
  const failing = (word: string, task: string): Json => ({
    ...example,
    task_id: task,
    responses_create_params: { ...example.responses_create_params, input: [{ role: 'user', content: `Weather in Oslo? ${word}` }] },
  });
  const input = join(dir, 'failing.in.jsonl');
  writeFileSync(input, [failing('SERVICE-500', 'errors'), failing('SERVICE-HANG', 'hangs'), failing('SERVICE-MALFORMED', 'malformed')].map((r) => JSON.stringify(r)).join('\n') + '\n');
  runs.set('failing', await collect('failing', input));
  collectedCalls = service.requestsTo('/v1/responses').length;
}, 240_000);

afterAll(async () => {
  for (const release of hanging) release();
  await stack?.stop();
  await service?.close();
});

describe('the stub service and remote_agent speak /v1/responses as the openai client expects', () => {
  it('the openai client reads the stub\'s answers (an ask, then a final message) as Responses', async () => {
    const client = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const ask = await client.responses.create({ model: 'm', input: [{ role: 'user', content: 'Weather in Paris?' }] });
    expect(ask.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather', call_id: 'call_w0' });
    const done = await client.responses.create({
      model: 'm',
      input: [{ role: 'user', content: 'Weather in Paris?' }, ask.output[0] as OpenAI.Responses.ResponseFunctionToolCall, { type: 'function_call_output', call_id: 'call_w0', output: '{"weather_description": "Cold."}' }],
    });
    expect(done.output_text).toBe('Cold. Wear a coat.');
  });

  it('the openai client against remote_agent\'s own /v1/responses gets the whole trajectory', async () => {
    const gym = await ServerClient.fromHeadServer({ host: '127.0.0.1', port: stack.headPort });
    try {
      const client = new OpenAI({ baseURL: `${gym.baseUrl(AGENT)}/v1`, apiKey: 'unused', maxRetries: 0 });
      const r = await client.responses.create({ model: 'm', input: 'Weather in Rome and Paris?' });
      expect(r.output.map((o) => o.type)).toEqual(['function_call', 'function_call', 'function_call_output', 'function_call_output', 'message']);
      expect(r.output_text).toBe('The weather in Rome is cold. The weather in Paris is cold. Wear a coat.');
    } finally {
      await gym.close();
    }
  });
});

describe('remote_agent through ng-run and ng-collect-rollouts', () => {
  it('scores every example: tool asks run on simple_weather, results fed back, final answer verified', () => {
    const { rows, failures, code } = runs.get('examples')!;
    expect(code, JSON.stringify(failures)).toBe(0);
    expect(rows).toHaveLength(5);
    // simple_weather's verify echoes the create params, not the row's other fields: the task is its question.
    const cities = new Map(readJsonl(EXAMPLES).map((e) => [textOf(e.responses_create_params.input[1]), e.verifier_metadata.cities as string[]]));
    for (const r of rows) {
      const expected = cities.get(textOf(r.responses_create_params.input[1]))!;
      expect(r.reward).toBe(1);
      const output = r.response.output as Json[];
      expect(output.filter((o) => o.type === 'function_call').map((o) => JSON.parse(o.arguments).city)).toEqual(expected);
      expect(output.filter((o) => o.type === 'function_call_output').map((o) => JSON.parse(o.output).weather_description)).toEqual(expected.map((c) => `The weather in ${c} is cold.`));
      expect(output.at(-1)).toMatchObject({ type: 'message', role: 'assistant' });
      expect(r.response.model).toBe('my-own-model');
      expect(r.response.usage).toMatchObject({ input_tokens: 40, output_tokens: 10, total_tokens: 50 });
    }
    expect(rows.filter((r) => r.response.output.length === 5)).toHaveLength(1);
  });

  it('the service saw only the create params and the conversation, with its key: no verifier metadata, no row field, no cookie of ours', () => {
    // The calls of the two collections (the openai client's tests come later).
    const calls = service.requestsTo('/v1/responses').slice(0, collectedCalls);
    expect(calls.length).toBe(5 * 2 + 3);
    for (const call of calls) {
      expect(Object.keys(call.body).sort()).toEqual(['input', 'tools']);
      expect(call.text).not.toContain('verifier_metadata');
      expect(call.text).not.toContain('task_id');
      expect(call.text).not.toContain('agent_ref');
      expect(call.headers.cookie).toBeUndefined();
      expect(call.headers.authorization).toBe(`Bearer ${KEY}`);
    }
  });

  it('a service that errors, hangs or answers a malformed item: recorded failures with their class, no reward, within the call timeout', () => {
    const { rows, failures, code, ms } = runs.get('failing')!;
    expect(code).not.toBe(0);
    expect(rows).toHaveLength(0);
    expect(failures).toHaveLength(3);
    const cls = (f: Json) => [f.reason_class, f.reason];
    const all = failures.map(cls);
    expect(all.find(([, reason]) => reason.includes('NG_ERR_REMOTE_AGENT_FAILED'))).toEqual(['agent_unreachable', expect.stringMatching(/\(step 1\) answered HTTP 500: .*the agent crashed/)]);
    expect(all.find(([, reason]) => reason.includes('NG_ERR_REMOTE_AGENT_TIMEOUT'))).toEqual(['timeout', expect.stringContaining('gave no answer within remote_responses_timeout_secs = 2 s')]);
    expect(all.find(([, reason]) => reason.includes('NG_ERR_REMOTE_AGENT_BAD_RESPONSE'))).toEqual(['bad_result', expect.stringContaining('output.0.call_id')]);
    expect(failures.map((f) => f.line).sort()).toEqual([1, 2, 3]);
    // 2 s for the hung call plus the collector's start-up.
    expect(ms).toBeLessThan(20_000);
  });

  it('the key is in no log line, rollout or failure record', () => {
    expect(stack.output()).not.toContain(KEY);
    for (const run of runs.values()) expect(JSON.stringify([run.rows, run.failures])).not.toContain(KEY);
  });
});

describe('the service in docs/remote-agents.md', () => {
  let model: StubServer;
  let proc: ChildProcess | undefined;

  afterAll(async () => {
    proc?.kill();
    await model?.close();
  });

  it('runs as written: its own tool paired, the environment\'s tool run by remote_agent, the answer scored', async () => {
    const block = parseDocBlocks(readFileSync(join(ROOT, 'docs/remote-agents.md'), 'utf8'), 'docs/remote-agents.md').find((b) => b.kind === 'file' && b.path === 'service.mjs');
    if (block?.kind !== 'file') throw new Error('docs/remote-agents.md has no service.mjs block');
    const home = join(dir, 'doc-service');
    mkdirSync(join(home, 'node_modules'), { recursive: true });
    writeFileSync(join(home, 'service.mjs'), block.code);
    // `npm i openai` as the page says: the copy this repository's lockfile pins.
    symlinkSync(realpathSync(join(ROOT, 'tests/node_modules/openai')), join(home, 'node_modules/openai'));
    // The service's model: its own tool first, then the environment's, then the answer.
    model = await startStubServer({
      '/v1/responses': (_req, index) => ({
        json: [modelResponse([functionCall('clock', {}, 'c')]), modelResponse([functionCall('get_weather', { city: 'Oslo' }, 'g')]), textResponse('Cold in Oslo: wear a scarf.')][Math.min(index, 2)],
      }),
    });
    const serviceKey = 'doc-service-key';
    proc = spawn(process.execPath, ['service.mjs'], { cwd: home, env: { ...process.env, MODEL_BASE_URL: `${model.url}/v1`, MODEL_NAME: 'policy', PORT: '0', SERVICE_API_KEY: serviceKey }, stdio: ['ignore', 'pipe', 'pipe'] });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`service.mjs did not start: ${out}`)), 20_000);
      const read = (d: Buffer) => {
        out += d.toString();
        const m = /agent service on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      };
      proc!.stdout!.on('data', read);
      proc!.stderr!.on('data', read);
    });
    const gym = await ServerClient.fromHeadServer({ host: '127.0.0.1', port: stack.headPort });
    const agent = await startTestServer(remoteAgent, {
      config: { name: 'doc_remote_agent', agent_base_url: url, agent_api_key: serviceKey, resources_server: { type: 'resources_servers', name: 'simple_weather' } },
      globalConfig: gym.globalConfig,
    });
    try {
      const r = await agent.post('/run', readJsonl(EXAMPLES)[0]);
      expect(r.status, r.text).toBe(200);
      expect(r.json.reward).toBe(1);
      const output = r.json.response.output as Json[];
      expect(output.map((o) => [o.type, o.name ?? o.call_id ?? null])).toEqual([
        ['function_call', 'clock'],
        ['function_call_output', 'call_c'],
        ['function_call', 'get_weather'],
        ['function_call_output', 'call_g'],
        ['message', null],
      ]);
      expect(JSON.parse(output[3]!.output)).toEqual({ city: 'Oslo', weather_description: 'The weather in Oslo is cold.' });
      // The model saw one growing conversation, and the service's tools besides the row's.
      const calls = model.requestsTo('/v1/responses');
      expect(calls).toHaveLength(3);
      expect(calls[2]!.body.input.map((i: Json) => i.type ?? i.role)).toEqual(['developer', 'user', 'function_call', 'function_call_output', 'function_call', 'function_call_output']);
      expect(calls[0]!.body.tools.map((t: Json) => t.name)).toEqual(['get_weather', 'clock']);
      expect(calls[0]!.body.model).toBe('policy');
    } finally {
      await agent.close();
      await gym.close();
    }
  });
});
