/**
 * vllm_model's capture: a call through /ng-rollout/<id>/… records the ids read from vLLM before
 * the answer is streamed or converted — the same ids the non-streamed answer carries — for Chat
 * Completions and Responses, streamed or not; with token ids off, the entry says why there are none.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { CaptureEntry, Trajectory } from '@nemo-gym/core/capture';
import { ChatChunkAccumulator, parseSseStream } from '@nemo-gym/core/openai';
import { server } from '../app.js';
import { FakeVLLM, type ScriptedTurn } from './stub.js';

type Json = Record<string, any>;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const script: ScriptedTurn[] = [
  { reasoning: 'Weather first.', content: null, tool_calls: [{ id: 'call_a', name: 'get_weather', arguments: '{"city": "Paris"}' }] },
  { reasoning: 'Done.', content: 'Sunny in Paris.' },
];
const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

async function setup(returnIds: boolean, answerTokenIds = true) {
  const vllm = await new FakeVLLM().start();
  vllm.script = script;
  cleanups.push(() => vllm.stop());
  const app = await server.build({
    config: { name: 'policy_model', base_url: `${vllm.url}/v1`, api_key: 'k', model: 'm', return_token_id_information: returnIds, uses_reasoning_parser: true, request_inline_token_ids: true, health_check_interval_s: 0, rollout_capture: { answer_token_ids: answerTokenIds } },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const post = (path: string, body: unknown) => fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { vllm, base, post };
}

async function streamedChat(r: Response): Promise<Json> {
  const acc = new ChatChunkAccumulator();
  let tokens: Json = {};
  for await (const e of parseSseStream(r.body!)) {
    if (e.data === '[DONE]') continue;
    const chunk = JSON.parse(e.data) as Json;
    const delta = chunk.choices?.[0]?.delta ?? {};
    if (delta.generation_token_ids) tokens = { prompt_token_ids: delta.prompt_token_ids, generation_token_ids: delta.generation_token_ids, generation_log_probs: delta.generation_log_probs };
    acc.add(chunk);
  }
  return { ...(acc.completion() as Json), tokens };
}

describe('vllm_model capture', () => {
  it('streamed and non-streamed calls (chat and Responses) record the ids vLLM gave, before the stream is relayed', async () => {
    const { base, post } = await setup(true);
    const messages: Json[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = (await (await post('/ng-rollout/r-1/v1/chat/completions', { messages, tools })).json()) as Json;
    const m1 = first.choices[0].message;
    messages.push({ role: 'assistant', content: m1.content, tool_calls: m1.tool_calls }, { role: 'tool', tool_call_id: m1.tool_calls[0].id, content: 'sunny' });
    const second = await streamedChat(await post('/ng-rollout/r-1/v1/chat/completions', { messages, tools, stream: true }));
    const capture = (await (await fetch(`${base}/ng-rollout/r-1/capture`)).json()) as { calls: CaptureEntry[] };
    expect(capture.calls).toHaveLength(2);
    const [c1, c2] = capture.calls as [CaptureEntry, CaptureEntry];
    expect(c1).toMatchObject({ has_token_ids: true, stream: false, prompt_token_ids: m1.prompt_token_ids, generation_token_ids: m1.generation_token_ids, generation_log_probs: m1.generation_log_probs, finish_reason: 'tool_calls' });
    expect(c2).toMatchObject({ has_token_ids: true, stream: true, ...second.tokens, finish_reason: 'stop' });
    expect(c2.chat_message).toMatchObject({ role: 'assistant' });
    expect(c2.chat_message).not.toHaveProperty('generation_token_ids');

    // Responses, streamed: the final response's last item carries the same ids as the capture.
    const r = await post('/ng-rollout/r-2/v1/responses', { input: 'Weather in Paris?', tools: [{ type: 'function', name: 'get_weather', parameters: tools[0]!.function.parameters }], stream: true });
    let completed: Json | null = null;
    for await (const e of parseSseStream(r.body!)) if (e.event === 'response.completed') completed = (JSON.parse(e.data) as Json).response;
    const last = completed!.output.at(-1);
    const rc = ((await (await fetch(`${base}/ng-rollout/r-2/capture`)).json()) as { calls: CaptureEntry[] }).calls;
    expect(rc).toHaveLength(1);
    expect(rc[0]).toMatchObject({ route: '/v1/responses', stream: true, prompt_token_ids: last.prompt_token_ids, generation_token_ids: last.generation_token_ids });

    const t = (await (await fetch(`${base}/ng-rollout/r-1/trajectory`)).json()) as Trajectory;
    expect(t.mask_sample).toBe(false);
    expect(t.chains).toHaveLength(1);
    // The rebuilt items keep the content: a reasoning item and the function call of call 1, the answer of call 2.
    expect(t.output.map((i) => i.type)).toEqual(['reasoning', 'function_call', 'reasoning', 'message']);
  });

  it('by default a captured call answers without token ids (the capture and the trajectory hold them); calls without the prefix keep them', async () => {
    const { base, post } = await setup(true, false);
    const body = { messages: [{ role: 'user', content: 'Weather in Paris?' }], tools };
    const captured = (await (await post('/ng-rollout/d-1/v1/chat/completions', body)).json()) as Json;
    expect(captured.choices[0].message).not.toHaveProperty('prompt_token_ids');
    expect(captured.choices[0].message.tool_calls).toHaveLength(1);
    const streamed = await streamedChat(await post('/ng-rollout/d-1/v1/chat/completions', { ...body, stream: true }));
    expect(streamed.tokens).toEqual({});
    const plain = (await (await post('/v1/chat/completions', body)).json()) as Json;
    expect(plain.choices[0].message.prompt_token_ids.length).toBeGreaterThan(0);
    const c = ((await (await fetch(`${base}/ng-rollout/d-1/capture`)).json()) as { calls: CaptureEntry[] }).calls;
    expect(c.map((e) => e.has_token_ids)).toEqual([true, true]);
    expect(c[0]!.prompt_token_ids).toEqual(plain.choices[0].message.prompt_token_ids);
  });

  it('with return_token_id_information off, each entry says why it has no ids, and the trajectory is masked', async () => {
    const { base, post } = await setup(false);
    await post('/ng-rollout/n-1/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] });
    const c = ((await (await fetch(`${base}/ng-rollout/n-1/capture`)).json()) as { calls: CaptureEntry[] }).calls;
    expect(c[0]).toMatchObject({ has_token_ids: false, missing_ids_reason: expect.stringMatching(/return_token_id_information: false/) });
    const strict = await fetch(`${base}/ng-rollout/n-1/trajectory?require_token_ids=true`);
    expect(strict.status).toBe(422);
    const t = (await (await fetch(`${base}/ng-rollout/n-1/trajectory`)).json()) as Trajectory;
    expect(t).toMatchObject({ mask_sample: true, output: [] });
    expect(t.failure_reason).toMatch(/no token ids/);
  });
});
