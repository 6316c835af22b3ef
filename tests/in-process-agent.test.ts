/**
 * defineInProcessAgent: agents written as a function, run by ng-collect-rollouts' engine against
 * vllm_model in front of the trainer's vLLM stand-in (real Qwen3 tokenizer). An agent that keeps
 * its history append-only gives one contiguous chain; one that rewrites its history is scored and
 * masked with the builder's reason; a function that throws, returns no text, outlives `timeout_s`,
 * or carries on after a tool call that timed out is a recorded failure with its code — never a
 * reward — and its capture is dropped at once.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { collectRollouts } from '@nemo-gym/core/rollouts';
import { BaseSeedSessionRequestSchema, BaseVerifyRequestSchema, defineInProcessAgent, defineResourcesServer, InProcessAgentConfigSchema, ResourcesServerConfigSchema, type AgentFunction, type AgentRunContext } from '@nemo-gym/core/server';
import { globalConfigFor, startTestServer, type TestServer } from '@nemo-gym/core/testing';
import { nemoRlContiguity, startTrainerVllm, type Json as StandinJson, type TrainerVllm } from '@nemo-gym/trainer-vllm';
import { pyJsonDumps } from '@nemo-gym/core/py';
import { server as vllmModel } from '../responses_api_models/vllm_model/app.js';

type Json = Record<string, any>;

const ANY_OBJECT = BaseSeedSessionRequestSchema.loose();

/** A weather environment with one more tool that never answers in time. */
const weather = defineResourcesServer({
  className: 'InProcessWeather',
  configSchema: ResourcesServerConfigSchema,
  tools: {
    get_weather: { body: ANY_OBJECT, handler: (body: Json) => ({ city: body.city, weather_description: `The weather in ${body.city} is cold.` }) },
    slow: { body: ANY_OBJECT, handler: () => new Promise((r) => setTimeout(() => r({ late: true }), 3000)) },
  },
  verify: { body: BaseVerifyRequestSchema, handler: (body) => ({ ...body, reward: 1.0 }) },
});

const TOOLS = [{ type: 'function', name: 'get_weather', description: 'Current weather for a city', strict: true, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } }];

/** A chat completions tool loop written by hand with the openai client (append-only unless `compact`). */
async function chatLoop(ctx: AgentRunContext, compact: boolean): Promise<string> {
  const client = new OpenAI({ baseURL: ctx.modelBaseUrl, apiKey: ctx.apiKey, maxRetries: 0 });
  const tools = ctx.tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } }));
  let messages: Json[] = ctx.input.map((i) => ({ role: i.role, content: i.content }));
  for (let step = 0; step < 5; step++) {
    const res = await client.chat.completions.create({ model: ctx.model, messages: messages as never, tools }, { signal: ctx.signal });
    const msg = res.choices[0]!.message;
    if (!msg.tool_calls?.length) return msg.content ?? '';
    messages.push({ role: 'assistant', content: msg.content, tool_calls: msg.tool_calls });
    for (const c of msg.tool_calls) {
      if (c.type !== 'function') continue;
      const out = await ctx.tools.find((t) => t.name === c.function.name)!.call(c.function.arguments);
      messages.push({ role: 'tool', tool_call_id: c.id, content: out });
    }
    // A framework that summarises its history: the tool round becomes one user message.
    if (compact) messages = [...messages.slice(0, ctx.input.length), { role: 'user', content: `[compacted] tool results: ${messages.filter((m) => m.role === 'tool').map((m) => m.content).join(' ')}` }];
  }
  return 'gave up';
}

const AGENTS: Record<string, AgentFunction> = {
  append_only: (ctx) => chatLoop(ctx, false),
  rewriting: (ctx) => chatLoop(ctx, true),
  throwing: async (ctx) => {
    const client = new OpenAI({ baseURL: ctx.modelBaseUrl, apiKey: ctx.apiKey, maxRetries: 0 });
    await client.chat.completions.create({ model: ctx.model, messages: [{ role: 'user', content: 'hi' }] });
    throw new Error('the framework gave up: output parser failed');
  },
  // Arguments that are not JSON: the tool is not called, the answer says why (as simple_agent's loop does).
  bad_arguments: async (ctx) => ctx.tools.find((t) => t.name === 'get_weather')!.call('{"city": Oslo'),
  not_text: async () => ({ answer: 42 }) as unknown as string,
  hanging: () => new Promise<string>(() => undefined),
  swallowing: async (ctx) => {
    // A framework that reports a tool error to the model and carries on.
    try {
      await ctx.tools.find((t) => t.name === 'slow')!.call({});
    } catch {
      return 'the tool failed, so I answered anyway';
    }
    return 'done';
  },
};

/** The JSON lines of a file (none when it was never written). */
function readRows(path: string): Json[] {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json);
  } catch {
    return [];
  }
}

/** Rollouts whose agent saw its signal abort (the caller went away). */
const cancelled: string[] = [];
/** Makes one model call, then waits for its signal. */
const waiting: AgentFunction = async (ctx) => {
  const client = new OpenAI({ baseURL: ctx.modelBaseUrl, apiKey: ctx.apiKey, maxRetries: 0 });
  await client.chat.completions.create({ model: ctx.model, messages: [{ role: 'user', content: 'hi' }] });
  return new Promise<string>((_, reject) =>
    ctx.signal.addEventListener('abort', () => {
      cancelled.push(ctx.rolloutId);
      reject(ctx.signal.reason);
    }),
  );
};
let waitingUrl = '';

let standin: TrainerVllm;
let closeModel: () => Promise<void>;
let env: TestServer;
const agents: TestServer[] = [];
let modelUrl = '';
let dir = '';
const out = new Map<string, { rows: Json[]; failures: Json[] }>();

beforeAll(async () => {
  standin = await startTrainerVllm({
    reasoningParser: true,
    policy: (ctx) => {
      const messages = ctx.messages as Json[];
      const done = messages.filter((m) => m.role === 'tool' || String(m.content).includes('[compacted]')).length;
      return done === 0 ? { toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' }, argumentsText: pyJsonDumps({ city: 'Oslo' }) }] } : { content: 'It is cold in Oslo.' };
    },
  });
  const model = await vllmModel.build({
    config: { name: 'policy_model', base_url: standin.url, api_key: 'dummy', model: 'Qwen/Qwen3-8B', return_token_id_information: true, uses_reasoning_parser: true, request_prompt_and_generation_token_ids: false, health_check_interval_s: 0 },
  });
  await model.listen({ host: '127.0.0.1', port: 0 });
  const modelPort = (model.server.address() as AddressInfo).port;
  modelUrl = `http://127.0.0.1:${modelPort}`;
  closeModel = () => model.close();
  env = await startTestServer(weather, { config: { name: 'weather', domain: 'agent' }, listen: true });
  const global = globalConfigFor({ policy_model: { kind: 'responses_api_models', impl: 'vllm_model', port: modelPort }, weather: { kind: 'resources_servers', impl: 'weather', port: env.port } }) as never;
  const instances: Record<string, { kind: string; impl: string; port: number }> = {};
  for (const [name, fn] of Object.entries(AGENTS)) {
    const server = defineInProcessAgent({ className: `Agent_${name}`, configSchema: InProcessAgentConfigSchema, agent: fn });
    const agent = await startTestServer(server, {
      config: { name, resources_server: { type: 'resources_servers', name: 'weather' }, model_server: { type: 'responses_api_models', name: 'policy_model' }, model: 'Qwen/Qwen3-8B', timeout_s: name === 'hanging' ? 0.5 : 30, tool_timeout_s: 0.3 },
      globalConfig: global,
      listen: true,
    });
    agents.push(agent);
    instances[name] = { kind: 'responses_api_agents', impl: 'in_process', port: agent.port };
  }
  const waitingAgent = await startTestServer(defineInProcessAgent({ className: 'Agent_waiting', agent: waiting }), {
    config: { name: 'waiting', resources_server: { type: 'resources_servers', name: 'weather' }, model_server: { type: 'responses_api_models', name: 'policy_model' } },
    globalConfig: global,
    listen: true,
  });
  agents.push(waitingAgent);
  waitingUrl = waitingAgent.url;
  const client = new ServerClient({ globalConfig: globalConfigFor(instances) });
  dir = mkdtempSync(join(tmpdir(), 'ng-in-process-'));
  const input = join(dir, 'in.jsonl');
  writeFileSync(input, `${JSON.stringify({ responses_create_params: { input: [{ role: 'user', content: 'Weather in Oslo?' }], tools: [...TOOLS, { type: 'function', name: 'slow', description: 'Never answers in time', parameters: { type: 'object', properties: {} } }] } })}\n`);
  try {
    // One collection at a time: each names its rollouts 0-0 and 0-1 on the one model server.
    for (const name of Object.keys(AGENTS)) {
      const output = join(dir, `${name}.jsonl`);
      const summary = await collectRollouts({ client, inputPath: input, outputPath: output, agentName: name, concurrency: 2, numRepeats: 2 });
      out.set(name, { rows: readRows(output), failures: readRows(summary.failuresPath) });
    }
  } finally {
    await client.close();
  }
}, 60_000);

afterAll(async () => {
  for (const a of agents) await a.close();
  await env?.close();
  await closeModel?.();
  await standin?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('defineInProcessAgent', () => {
  /** The two scored rows of an agent (no failure), with reward 1. */
  const scored = (name: string): Json[] => {
    const { rows, failures } = out.get(name)!;
    expect(failures).toEqual([]);
    expect(rows.map((r) => r.reward)).toEqual([1, 1]);
    return rows;
  };

  it('an append-only agent: scored, token ids from the capture, one chain, contiguous for NeMo-RL', () => {
    for (const r of scored('append_only')) {
      expect(r.mask_sample, r.failure_reason).toBeUndefined();
      expect(r.response.metadata).toEqual({ rollout_id: `0-${r._ng_rollout_index}`, trajectory_source: 'capture_prefix_merging' });
      expect(r.agent_run).toMatchObject({ final_answer: 'It is cold in Oslo.', tool_calls: 1, trajectory: { chains: 1, metrics: { calls: 2, calls_without_token_ids: 0 } } });
      expect(nemoRlContiguity(r.response.output as StandinJson[])).toEqual({ ok: true, turns: 2 });
      expect((r.response.output as Json[]).map((i) => i.type)).toEqual(['function_call', 'message']);
    }
  });

  it('an agent that rewrites its history: scored, kept, masked with the reason', () => {
    for (const r of scored('rewriting')) {
      expect(r.mask_sample).toBe(true);
      expect(r.failure_reason).toMatch(/2 chains from 2 root\(s\)/);
    }
  });

  it('arguments that are not JSON: the tool is not called, the agent gets simple_agent\'s answer', () => {
    for (const r of scored('bad_arguments')) {
      expect(r.agent_run.final_answer).toMatch(/^\{"error": "Invalid tool call arguments: SyntaxError\(/);
      expect(r.response.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city": Oslo' });
    }
  });

  it.each([
    ['throwing', /NG_ERR_AGENT_FUNCTION[\s\S]*the agent function failed: .*output parser failed/, 'http_5xx'],
    ['not_text', /NG_ERR_AGENT_FUNCTION[\s\S]*resolved to object, not the final answer text/, 'http_5xx'],
    ['hanging', /timeout_s\) gave no answer within 0.5 s/, 'timeout'],
    ['swallowing', /tool `slow` of resources server `weather` gave no answer within 0.3 s/, 'timeout'],
  ] as const)('%s: a recorded failure with its code and reason, never a reward', (name, reason, cls) => {
    const { rows, failures } = out.get(name)!;
    expect(rows).toEqual([]);
    expect(failures).toHaveLength(2);
    for (const f of failures) {
      expect(f.reason).toMatch(reason);
      expect(f.reason_class, f.reason).toBe(cls);
    }
  });

  it('a caller that goes away cancels the run: the agent\'s signal aborts and the capture is dropped', async () => {
    const row = { _ng_rollout_id: 'cancel-1', responses_create_params: { input: [{ role: 'user', content: 'Weather in Oslo?' }], tools: TOOLS } };
    const sent = fetch(`${waitingUrl}/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(row), signal: AbortSignal.timeout(500) });
    await expect(sent).rejects.toThrow();
    for (let i = 0; i < 40 && !cancelled.includes('cancel-1'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(cancelled).toEqual(['cancel-1']);
    expect((await fetch(`${modelUrl}/ng-rollout/cancel-1/capture`)).status).toBe(404);
  });

  it('a failed rollout\'s capture is dropped at once, as is every scored one\'s', async () => {
    for (const id of ['0-0', '0-1']) expect((await fetch(`${modelUrl}/ng-rollout/${id}/capture`)).status).toBe(404);
  });
});
