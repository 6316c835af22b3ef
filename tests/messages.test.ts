/**
 * `POST /v1/messages` (Anthropic Messages) on the model servers, driven by Anthropic's own
 * TypeScript client (`@anthropic-ai/sdk`): plain and streamed answers, tool use over two turns,
 * thinking blocks, stop sequences, training fields and the error shape. Backends are stubs on
 * 127.0.0.1: the fake vLLM (with its tokenizer), an OpenAI stand-in that speaks Responses, and
 * replay_model's recordings.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { messagesToResponsesParams, responseEvents, type MessagesCreateParams } from '@nemo-gym/core/openai';
import { functionCall, messageItem, modelResponse, startTestServer, type TestServer } from '@nemo-gym/core/testing';
import { server as azureModel } from '../responses_api_models/azure_openai_model/app.js';
import { server as openaiModel } from '../responses_api_models/openai_model/app.js';
import { server as replayModel } from '../responses_api_models/replay_model/app.js';
import { server as vllmModel } from '../responses_api_models/vllm_model/app.js';
import { FakeVLLM, HttpStub, type Recorded, type ScriptedTurn } from '../responses_api_models/vllm_model/tests/stub.js';

type Json = Record<string, any>;

const dir = mkdtempSync(join(tmpdir(), 'messages-'));
let vllm: FakeVLLM;
let openaiBackend: HttpStub;
let vllmServer: TestServer;
let openaiServer: TestServer;
let replayServer: TestServer;
let azureServer: TestServer;
/** What the OpenAI stand-in answers next (a Response, or an error status with its body). */
let nextAnswer: { response?: Json; status?: number; body?: Json } = {};

/** Sampling fields: the wire format takes them (Claude Code sends `temperature`), the current SDK types no longer list them. */
const sampling = (fields: { temperature?: number; top_p?: number; top_k?: number }): object => fields;

const tokenFields = (x: Json) => ({ prompt_token_ids: x.prompt_token_ids, generation_token_ids: x.generation_token_ids, generation_log_probs: x.generation_log_probs });

const client = (server: TestServer) => new Anthropic({ baseURL: server.url, apiKey: 'sk-ant-dummy', maxRetries: 0 });

const countTool = { name: 'count', description: 'Counts shapes.', input_schema: { type: 'object' as const, properties: { shape: { type: 'string' } }, required: ['shape'] } };
const toolTurn: ScriptedTurn = { reasoning: 'Need data.', content: null, tool_calls: [{ id: 'call_1', name: 'count', arguments: '{"shape":"square"}' }] };
const answerTurn: ScriptedTurn = { reasoning: 'Got it.', content: 'There are four squares.' };

const stubResponse = (output: Json[], extra: Json = {}): Json => ({
  id: 'resp_stub', object: 'response', created_at: 1730000000, status: 'completed', model: 'gpt-stub', parallel_tool_calls: true, tool_choice: 'auto', tools: [],
  output, usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 2 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 17 },
  ...extra,
});
const textItem = (text: string) => ({ id: 'msg_stub', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] });

// replay_model: a recorded two-turn conversation whose input is what /v1/messages makes of the first request.
const replayFirst: MessagesCreateParams = { model: 'claude-test', max_tokens: 100, system: 'You count shapes.', messages: [{ role: 'user', content: 'How many squares?' }], tools: [countTool] };
const replayCall = functionCall('count', { shape: 'square' }, 'r1');
const replayOutput = { type: 'function_call_output', call_id: replayCall.call_id, output: '4' };
const replayAnswer = messageItem('Four squares.', { id: 'msg_final' });

beforeAll(async () => {
  vllm = await new FakeVLLM().start();
  openaiBackend = await new HttpStub((req: Recorded) => {
    if (nextAnswer.status) return { status: nextAnswer.status, json: nextAnswer.body ?? {} };
    const response = nextAnswer.response ?? stubResponse([textItem('Hello from the stub.')]);
    if (!req.body?.stream) return { json: response };
    return { sse: responseEvents(response).map((e) => e.data) };
  }).start();
  vllmServer = await startTestServer(vllmModel, {
    config: { name: 'policy_model', base_url: `${vllm.url}/v1`, api_key: 'k', model: 'served', return_token_id_information: true, uses_reasoning_parser: true, request_inline_token_ids: true, retry_sleep_s: 0, health_check_interval_s: 0 },
    listen: true,
  });
  openaiServer = await startTestServer(openaiModel, {
    config: { name: 'openai', openai_base_url: `${openaiBackend.url}/v1`, openai_api_key: 'sk-test-0000', openai_model: 'gpt-stub', max_retries: 0 },
    listen: true,
  });
  azureServer = await startTestServer(azureModel, {
    config: { name: 'azure', openai_base_url: openaiBackend.url, openai_api_key: 'az-key', openai_model: 'my-deployment', default_query: { 'api-version': '2024-10-21' }, max_retries: 0 },
    listen: true,
  });
  const recording = {
    responses_create_params: { input: messagesToResponsesParams(replayFirst).params.input },
    response: modelResponse([replayCall, replayOutput, replayAnswer], { id: 'resp_recorded', model: 'gpt-recorded', usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } }),
    reward: 1,
  };
  writeFileSync(join(dir, 'rollouts.jsonl'), `${JSON.stringify(recording)}\n`);
  replayServer = await startTestServer(replayModel, { config: { name: 'replay', recordings_jsonl_fpaths: join(dir, 'rollouts.jsonl') }, listen: true });
});

afterAll(async () => {
  for (const s of [vllmServer, openaiServer, azureServer, replayServer]) await s?.close();
  await vllm?.stop();
  await openaiBackend?.stop();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  vllm.calls = 0;
  vllm.requests.length = 0;
  openaiBackend.requests.length = 0;
  nextAnswer = {};
});

const chatRequests = () => vllm.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as Json);

describe('/v1/messages on vllm_model (Anthropic SDK)', () => {
  it('tool use over two turns: thinking + tool_use, then the tool result and a text answer, with training fields', async () => {
    vllm.script = [toolTurn, answerTurn];
    const anthropic = client(vllmServer);
    const user = { role: 'user' as const, content: 'How many squares?' };
    const first = await anthropic.messages.create({ model: 'claude-test', max_tokens: 200, system: 'You count shapes.', messages: [user], tools: [countTool], ...sampling({ temperature: 0.5 }) });
    expect(first.type).toBe('message');
    expect(first.role).toBe('assistant');
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content.map((b) => b.type)).toEqual(['thinking', 'tool_use']);
    expect(first.content[0]).toMatchObject({ type: 'thinking', thinking: 'Need data.' });
    expect(first.content[1]).toEqual({ type: 'tool_use', id: 'call_1', name: 'count', input: { shape: 'square' } });
    expect(first.usage.input_tokens).toBeGreaterThan(3);
    expect(first.usage.output_tokens).toBe(vllm.generation(toolTurn).length);
    const firstFields = first as unknown as Json;
    expect(firstFields.generation_token_ids).toEqual(vllm.generation(toolTurn));
    expect(firstFields.prompt_token_ids.length).toBeGreaterThan(3);
    expect(firstFields.generation_log_probs).toHaveLength(vllm.generation(toolTurn).length);

    // What vLLM was asked: the system prompt first, the tool as a function, the sampling fields.
    const [req1] = chatRequests();
    expect(req1!.messages[0]).toEqual({ role: 'system', content: 'You count shapes.' });
    expect(req1!.messages[1]).toMatchObject({ role: 'user', content: 'How many squares?' });
    expect(req1!.tools[0].function).toMatchObject({ name: 'count', description: 'Counts shapes.', parameters: countTool.input_schema });
    expect(req1!.temperature).toBe(0.5);
    expect(req1!.max_tokens ?? req1!.max_completion_tokens).toBe(200);

    // Turn two: the assistant turn as it came back (thinking block included), then the tool result.
    const second = await anthropic.messages.create({
      model: 'claude-test', max_tokens: 200, system: 'You count shapes.', tools: [countTool],
      messages: [
        user,
        // The training fields of the turn go back on it (as a trainer's client sends them).
        { role: 'assistant', content: first.content, ...tokenFields(firstFields) } as Anthropic.MessageParam,
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: '4' }] }] },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(second.content[1]).toMatchObject({ type: 'text', text: 'There are four squares.' });
    const req2 = chatRequests()[1]!;
    const assistant = req2.messages[2];
    expect(assistant.role).toBe('assistant');
    expect(assistant.tool_calls).toEqual([{ id: 'call_1', type: 'function', function: { name: 'count', arguments: '{"shape":"square"}' } }]);
    expect(assistant.reasoning_content ?? assistant.content).toContain('Need data.');
    expect(req2.messages[3]).toEqual({ role: 'tool', content: '4', tool_call_id: 'call_1' });
    expect(tokenFields(assistant)).toEqual(tokenFields(firstFields));
  });

  it('streams: the Messages event sequence, text and thinking live, final message equal to the plain answer', async () => {
    vllm.script = [answerTurn];
    const anthropic = client(vllmServer);
    const params = { model: 'claude-test', max_tokens: 200, messages: [{ role: 'user' as const, content: 'How many?' }] };
    const plain = await anthropic.messages.create(params);
    vllm.calls = 0;
    const stream = anthropic.messages.stream(params);
    const types: string[] = [];
    const textDeltas: string[] = [];
    for await (const e of stream) {
      types.push(e.type === 'content_block_delta' ? `delta:${e.delta.type}` : e.type);
      if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') textDeltas.push(e.delta.text);
    }
    const final = await stream.finalMessage();
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types).toContain('delta:thinking_delta');
    expect(types.filter((t) => t === 'content_block_start')).toHaveLength(2);
    expect(types.filter((t) => t === 'content_block_stop')).toHaveLength(2);
    expect(textDeltas.length).toBeGreaterThan(1);
    expect(textDeltas.join('')).toBe('There are four squares.');
    expect(final.content.map(({ type }) => type)).toEqual(plain.content.map(({ type }) => type));
    expect(final.content[1]).toEqual(plain.content[1]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBe(plain.usage.output_tokens);
    expect(final.usage.input_tokens).toBe(plain.usage.input_tokens);
    expect(chatRequests().map((r) => r.stream)).toEqual([undefined, true]);
  });

  it('streams a tool call as input_json_delta and the training fields on message_delta', async () => {
    vllm.script = [toolTurn];
    const anthropic = client(vllmServer);
    const raw = await anthropic.messages.create({ model: 'claude-test', max_tokens: 200, messages: [{ role: 'user', content: 'Count' }], tools: [countTool], stream: true });
    const events: Json[] = [];
    for await (const e of raw) events.push(e as unknown as Json);
    const start = events.find((e) => e.type === 'content_block_start' && e.content_block.type === 'tool_use')!;
    expect(start.content_block).toEqual({ type: 'tool_use', id: 'call_1', name: 'count', input: {} });
    const json = events.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'input_json_delta').map((e) => e.delta.partial_json).join('');
    expect(JSON.parse(json)).toEqual({ shape: 'square' });
    const delta = events.find((e) => e.type === 'message_delta')!;
    expect(delta.delta.stop_reason).toBe('tool_use');
    expect(delta.generation_token_ids).toEqual(vllm.generation(toolTurn));
  });
  it('a client that leaves mid-stream cancels the vLLM request', async () => {
    vllm.script = [{ content: Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ') }];
    vllm.streamDelayMs = 30;
    try {
      const stream = client(vllmServer).messages.stream({ model: 'claude-test', max_tokens: 200, messages: [{ role: 'user', content: 'Talk' }] });
      for await (const e of stream) if (e.type === 'content_block_delta') break;
      const rec = vllm.requests.find((r) => r.path === '/v1/chat/completions');
      expect(rec?.ended).toBeDefined();
      await Promise.race([rec!.ended, new Promise((_, reject) => setTimeout(() => reject(new Error('the vLLM request was still open 3 s after the client left')), 3000))]);
      expect(rec!.closedEarly).toBe(true);
    } finally {
      vllm.streamDelayMs = 0;
    }
  });

  it('count_tokens: the /tokenize count of vLLM is the prompt the generation gets', async () => {
    vllm.script = [answerTurn];
    const anthropic = client(vllmServer);
    const params = { model: 'claude-test', system: 'You count shapes.', messages: [{ role: 'user' as const, content: 'How many squares?' }], tools: [countTool] };
    const counted = await anthropic.messages.countTokens(params);
    expect(vllm.requests.map((r) => r.path)).toEqual(['/tokenize']);
    const generated = await anthropic.messages.create({ ...params, max_tokens: 20 });
    expect(counted.input_tokens).toBe(generated.usage.input_tokens);
    expect(counted.input_tokens).toBe(vllm.tokenizer.prompt(chatRequests()[0]!.messages, chatRequests()[0]!.tools).length);
  });
});

describe('/v1/messages on openai_model (Anthropic SDK, Responses stand-in)', () => {
  it('maps the request onto the Responses call: tools, tool_choice, max_tokens, sampling; usage without cached tokens', async () => {
    const anthropic = client(openaiServer);
    const msg = await anthropic.messages.create({
      model: 'claude-test', max_tokens: 64, ...sampling({ top_p: 0.9, top_k: 5 }), system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }] }],
      tools: [countTool], tool_choice: { type: 'any', disable_parallel_tool_use: true },
    });
    expect(msg.content).toEqual([{ type: 'text', text: 'Hello from the stub.', citations: null }]);
    expect(msg.model).toBe('gpt-stub');
    expect(msg.usage).toMatchObject({ input_tokens: 10, cache_read_input_tokens: 2, output_tokens: 5 });
    const sent = openaiBackend.requests[0]!.body as Json;
    expect(openaiBackend.requests[0]!.path).toBe('/v1/responses');
    expect(sent.input).toEqual([
      { type: 'message', role: 'system', content: 'Be brief.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' }] },
    ]);
    expect(sent).toMatchObject({ model: 'gpt-stub', max_output_tokens: 64, top_p: 0.9, tool_choice: 'required', parallel_tool_calls: false });
    expect(sent.tools).toEqual([{ type: 'function', name: 'count', description: 'Counts shapes.', parameters: countTool.input_schema, strict: false }]);
    expect(sent.top_k).toBeUndefined();
  });

  it('stream: true relays the backend stream as Messages events', async () => {
    nextAnswer = { response: stubResponse([{ id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking hard.' }] }, textItem('Streamed reply.')]) };
    const stream = client(openaiServer).messages.stream({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([
      { type: 'thinking', thinking: 'Thinking hard.', signature: 'rs_1' },
      { type: 'text', text: 'Streamed reply.', citations: null },
    ]);
    expect(final.stop_reason).toBe('end_turn');
    expect(openaiBackend.requests[0]!.body.stream).toBe(true);
  });

  it('a thinking block sent back becomes the reasoning item its signature names', async () => {
    await client(openaiServer).messages.create({
      model: 'claude-test', max_tokens: 64,
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'Thinking hard.', signature: 'rs_1' }, { type: 'text', text: 'Hello.' }] },
        { role: 'user', content: 'Again' },
      ],
    });
    expect((openaiBackend.requests[0]!.body as Json).input.slice(1, 3)).toEqual([
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Thinking hard.' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello.', annotations: [] }] },
    ]);
  });

  it('stop_sequences end the text (plain and streamed) with stop_reason stop_sequence', async () => {
    nextAnswer = { response: stubResponse([textItem('Answer: 42 END and more')]) };
    const params = { model: 'claude-test', max_tokens: 64, stop_sequences: ['END'], messages: [{ role: 'user' as const, content: 'Q' }] };
    const plain = await client(openaiServer).messages.create(params);
    expect(plain.content).toEqual([{ type: 'text', text: 'Answer: 42 ', citations: null }]);
    expect([plain.stop_reason, plain.stop_sequence]).toEqual(['stop_sequence', 'END']);
    const streamed = await client(openaiServer).messages.stream(params).finalMessage();
    expect(streamed.content).toEqual(plain.content);
    expect([streamed.stop_reason, streamed.stop_sequence]).toEqual(['stop_sequence', 'END']);
  });

  it('an incomplete response is stop_reason max_tokens', async () => {
    nextAnswer = { response: stubResponse([textItem('Cut')], { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }) };
    const msg = await client(openaiServer).messages.create({ model: 'claude-test', max_tokens: 1, messages: [{ role: 'user', content: 'Q' }] });
    expect(msg.stop_reason).toBe('max_tokens');
  });

  it('errors come in Anthropic shape: a backend 429 and 400, a malformed body, count_tokens without a tokenizer', async () => {
    const anthropic = client(openaiServer);
    nextAnswer = { status: 429, body: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } } };
    const limited = await anthropic.messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'Q' }] }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: expect.stringContaining('Rate limit reached') } });
    nextAnswer = { status: 400, body: { error: { message: 'Invalid schema for function', type: 'invalid_request_error' } } };
    const bad = await anthropic.messages.stream({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'Q' }] }).finalMessage().catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect((bad as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('Invalid schema') } });

    const noMax = await fetch(`${openaiServer.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [] }) });
    expect(noMax.status).toBe(400);
    expect(await noMax.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens') } });
    const badBlock = await fetch(`${openaiServer.url}/v1/messages?beta=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'tool_result' }] }] }) });
    expect(badBlock.status).toBe(400);
    expect(((await badBlock.json()) as Json).error.message).toContain('tool_use_id');

    const count = await anthropic.messages.countTokens({ model: 'm', messages: [{ role: 'user', content: 'Q' }] }).catch((e: unknown) => e);
    expect(count).toBeInstanceOf(Anthropic.NotFoundError);
    expect((count as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(openaiBackend.requests).toHaveLength(2);
  });
});

describe('/v1/messages on replay_model and azure_openai_model', () => {
  it('replay: a recorded conversation replays through the Anthropic client over two turns, plain and streamed', async () => {
    const anthropic = client(replayServer);
    const first = await anthropic.messages.create(replayFirst as Anthropic.MessageCreateParamsNonStreaming);
    expect(first.content).toEqual([{ type: 'tool_use', id: replayCall.call_id, name: 'count', input: { shape: 'square' } }]);
    expect(first.stop_reason).toBe('tool_use');
    const second = anthropic.messages.stream({
      ...(replayFirst as Anthropic.MessageCreateParamsNonStreaming),
      messages: [...(replayFirst.messages as Anthropic.MessageParam[]), { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: String(replayCall.call_id), content: '4' }] }],
    });
    const final = await second.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Four squares.', citations: null }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: 10, output_tokens: 5 });
  });

  it('replay: a conversation that was not recorded is a 404 not_found_error', async () => {
    const err = await client(replayServer).messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'Unrecorded' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: expect.stringContaining('no recorded conversation') } });
  });

  it('azure_openai_model answers /v1/messages through its Chat Completions deployment', async () => {
    const azureBackend = openaiBackend;
    const before = azureBackend.handler;
    azureBackend.handler = (req) => ({
      json: { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `Azure saw ${String(req.body.messages.at(-1).content)}` } }], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } },
    });
    const msg = await client(azureServer).messages.create({ model: 'claude-test', max_tokens: 20, messages: [{ role: 'user', content: 'ping' }] }).finally(() => (azureBackend.handler = before));
    expect(msg.content).toEqual([{ type: 'text', text: 'Azure saw ping', citations: null }]);
    expect(msg.usage).toMatchObject({ input_tokens: 7, output_tokens: 3 });
    expect(azureBackend.requests[0]!.path).toContain('/openai/deployments/my-deployment/chat/completions');
  });
});
