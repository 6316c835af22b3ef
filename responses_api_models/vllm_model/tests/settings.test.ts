/**
 * The settings that shape what vllm_model sends to vLLM for training: which earlier assistant
 * messages carry their token bundle, chat-template switches (server-wide and per row), extra body
 * fields, pinned sampling, the inline-ids switch under both its names, the order of token sources,
 * and the check that refuses unknown config keys.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { server } from '../app.js';
import { FakeVLLM, HttpStub, sessionClient } from './stub.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const tools = [{ type: 'function' as const, name: 'step', strict: false, parameters: { type: 'object', properties: { n: { type: 'integer' } } } }];

async function setup(extra: Record<string, unknown>, backend?: HttpStub) {
  const vllm = backend ?? new FakeVLLM();
  await vllm.start();
  cleanups.push(() => vllm.stop());
  const app = await server.build({
    config: {
      name: 'policy_model', base_url: `${vllm.url}/v1`, api_key: 'k', model: 'served', return_token_id_information: true,
      uses_reasoning_parser: true, health_check_interval_s: 0, ...extra,
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  return { vllm, url, client: await sessionClient(`${url}/v1`) };
}

/** An agent loop of `turns` tool calls then an answer; returns the chat bodies vLLM received. */
async function multiTurn(vllm: FakeVLLM, client: Awaited<ReturnType<typeof setup>>['client'], turns: number, metadata?: Record<string, string>) {
  vllm.script = [
    ...Array.from({ length: turns }, (_, k) => ({ content: null, tool_calls: [{ id: `call_${k}`, name: 'step', arguments: `{"n": ${k}}` }] })),
    { content: 'done' },
  ];
  const input: any[] = [{ role: 'user', content: 'count' }];
  for (let k = 0; k <= turns; k++) {
    const resp = await client.responses.create({ input, tools, temperature: 0.3, ...(metadata ? { metadata } : {}) });
    input.push(...resp.output);
    for (const item of resp.output as any[]) if (item.type === 'function_call') input.push({ type: 'function_call_output', call_id: item.call_id, output: `ok ${k}` });
  }
  return vllm.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body);
}

const carriers = (body: any) => body.messages.filter((m: any) => m.prompt_token_ids !== undefined);

describe('token_id_forwarding', () => {
  it('last (default): each call carries exactly the previous generation\'s bundle, on the last assistant message', async () => {
    const { vllm, client } = await setup({});
    const bodies = await multiTurn(vllm as FakeVLLM, client, 4);
    expect(bodies.map((b) => carriers(b).length)).toEqual([0, 1, 1, 1, 1]);
    for (const b of bodies.slice(1)) expect(carriers(b)[0]).toBe(b.messages.filter((m: any) => m.role === 'assistant').at(-1));
  });

  it('all: every earlier assistant message keeps its bundle (upstream\'s bytes)', async () => {
    const { vllm, client } = await setup({ token_id_forwarding: 'all' });
    const bodies = await multiTurn(vllm as FakeVLLM, client, 4);
    expect(bodies.map((b) => carriers(b).length)).toEqual([0, 1, 2, 3, 4]);
  });

  it('none: no bundle reaches the backend', async () => {
    const { vllm, client } = await setup({ token_id_forwarding: 'none' });
    const bodies = await multiTurn(vllm as FakeVLLM, client, 3);
    expect(bodies.map((b) => carriers(b).length)).toEqual([0, 0, 0, 0]);
  });

  it('without return_token_id_information bundles a caller sends on /v1/chat/completions are not forwarded', async () => {
    const { vllm, url } = await setup({ return_token_id_information: false });
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b', prompt_token_ids: [1], generation_token_ids: [2], generation_log_probs: [-1] }, { role: 'user', content: 'c' }] }),
    });
    expect(res.status).toBe(200);
    expect(carriers(vllm.requests.find((r) => r.path === '/v1/chat/completions')!.body)).toHaveLength(0);
  });

  it('an unknown mode stops the server at start', async () => {
    await expect(setup({ token_id_forwarding: 'some' })).rejects.toThrow(/token_id_forwarding/);
  });
});

describe('chat_template_kwargs, extra_body and sampling_overrides', () => {
  it('merges extra_body\'s, the config\'s and the row\'s chat_template_kwargs, and sends the same to /tokenize', async () => {
    const { vllm, client } = await setup({
      chat_template_kwargs: { enable_thinking: true, custom: 'server' },
      extra_body: { chat_template_kwargs: { from_extra: 1 }, top_k: 20, temperature: 0.9 },
    });
    (vllm as FakeVLLM).inline = false;
    await client.responses.create({ input: 'hi', temperature: 0.5, metadata: { chat_template_kwargs: '{"enable_thinking": false}' } });
    const chat = vllm.requests.find((r) => r.path === '/v1/chat/completions')!.body;
    expect(chat.chat_template_kwargs).toEqual({ from_extra: 1, enable_thinking: false, custom: 'server' });
    expect(chat.top_k).toBe(20);
    // The request's own temperature wins over extra_body's.
    expect(chat.temperature).toBe(0.5);
    const tk = vllm.requests.find((r) => r.path === '/tokenize')!.body;
    expect(tk.chat_template_kwargs).toEqual(chat.chat_template_kwargs);
    expect(tk.add_generation_prompt).toBe(true);
    expect(tk).not.toHaveProperty('top_k');
  });

  it('a row\'s metadata.extra_body is merged over the config\'s', async () => {
    const { vllm, client } = await setup({ extra_body: { top_k: 20, min_p: 0.1 } });
    await client.responses.create({ input: 'hi', metadata: { extra_body: '{"top_k": 5}' } });
    expect(vllm.requests.find((r) => r.path === '/v1/chat/completions')!.body).toMatchObject({ top_k: 5, min_p: 0.1 });
  });

  it('sampling_overrides hold against a row that sets other values, on every path', async () => {
    const { vllm, client, url } = await setup({ sampling_overrides: { temperature: 1, top_p: 1, top_k: -1 }, extra_body: { top_k: 5 } });
    await client.responses.create({ input: 'hi', temperature: 0.2, top_p: 0.5 });
    await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }], temperature: 0 }) });
    const streamed = await client.responses.create({ input: 'hi', temperature: 0.1, stream: true });
    for await (const _ of streamed) void _;
    const chats = vllm.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body);
    expect(chats).toHaveLength(3);
    for (const c of chats) expect(c).toMatchObject({ temperature: 1, top_p: 1, top_k: -1 });
  });

  it('answers 400 naming the field for a row whose metadata.chat_template_kwargs is not a JSON object', async () => {
    const { client } = await setup({});
    await expect(client.responses.create({ input: 'hi', metadata: { chat_template_kwargs: '{enable_thinking: false' } })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('metadata.chat_template_kwargs') });
    await expect(client.responses.create({ input: 'hi', metadata: { chat_template_kwargs: '[1]' } })).rejects.toMatchObject({ status: 400 });
  });

  it('preserve_reasoning_in_assistant_content keeps <think> blocks in the history byte for byte', async () => {
    const { vllm, client } = await setup({ preserve_reasoning_in_assistant_content: true });
    (vllm as FakeVLLM).script = [{ reasoning: ' plan\n', content: 'a' }, { content: 'b' }];
    const first = await client.responses.create({ input: 'q' });
    await client.responses.create({ input: [{ role: 'user', content: 'q' }, ...(first.output as any[]), { role: 'user', content: 'again' }] as never });
    const second = vllm.requests.filter((r) => r.path === '/v1/chat/completions')[1]!.body;
    const assistant = second.messages.find((m: any) => m.role === 'assistant');
    expect(assistant.content).toBe('<think> plan\n</think>a');
    expect(assistant).not.toHaveProperty('reasoning_content');
  });
});

describe('inline token ids and token sources', () => {
  it('request_prompt_and_generation_token_ids (upstream\'s key) and request_inline_token_ids (alias) both ask vLLM for inline ids', async () => {
    for (const key of ['request_prompt_and_generation_token_ids', 'request_inline_token_ids']) {
      const { vllm, client } = await setup({ [key]: true });
      await client.responses.create({ input: 'hi' });
      expect(vllm.requests.find((r) => r.path === '/v1/chat/completions')!.body.return_token_ids).toBe(true);
      expect(vllm.requests.filter((r) => r.path === '/tokenize')).toHaveLength(0);
    }
    await expect(setup({ request_prompt_and_generation_token_ids: true, request_inline_token_ids: false })).rejects.toThrow(/same setting and disagree/);
  });

  const completion = (extra: { message?: object; top?: object; choice?: object }) => ({
    id: 'c', object: 'chat.completion', created: 1, model: 'm', ...extra.top,
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'x', ...extra.message }, logprobs: { content: [{ token: 'token_id:7', logprob: -1 }, { token: 'token_id:8', logprob: -2 }] }, ...extra.choice }],
  });

  it.each([
    ['inline token_ids that disagree with the log-prob tokens', { top: { prompt_token_ids: [1, 2] }, choice: { token_ids: [7, 9] } }, /choices\[0\]\.token_ids disagree with the log-prob tokens.*index 1 \(9 vs 8\)/],
    ['a message bundle that disagrees with inline ids', { message: { prompt_token_ids: [1, 2], generation_token_ids: [7, 8], generation_log_probs: [-1, -2] }, top: { prompt_token_ids: [1, 3] }, choice: { token_ids: [7, 8] } }, /message\.prompt_token_ids disagree with the top-level prompt_token_ids/],
    ['a partial bundle on the message', { message: { prompt_token_ids: [1, 2], generation_token_ids: [7, 8] } }, /has prompt_token_ids, generation_token_ids but not generation_log_probs/],
    ['prompt ids without generation ids', { top: { prompt_token_ids: [1, 2] } }, /prompt_token_ids without choices\[0\]\.token_ids/],
  ])('%s is a 502 that names both sources', async (_label, extra, message) => {
    const stub = new HttpStub(() => ({ json: completion(extra as never) }));
    const { client } = await setup({}, stub);
    await expect(client.responses.create({ input: 'hi' })).rejects.toMatchObject({ status: 502, message: expect.stringMatching(message) });
  });

  it('a complete bundle on the message is used as it is, without /tokenize', async () => {
    const stub = new HttpStub((r) => (r.path === '/tokenize' ? { status: 500, json: {} } : { json: completion({ message: { prompt_token_ids: [1, 2], generation_token_ids: [7, 8], generation_log_probs: [-1, -2] } }) }));
    const { client } = await setup({}, stub);
    const resp = await client.responses.create({ input: 'hi' });
    expect(resp.output.at(-1)).toMatchObject({ prompt_token_ids: [1, 2], generation_token_ids: [7, 8], generation_log_probs: [-1, -2] });
    expect(stub.requests.filter((r) => r.path === '/tokenize')).toHaveLength(0);
  });
});

describe('config keys', () => {
  it('an unknown key stops the start naming it, a near miss and the known keys', async () => {
    const err = await setup({ chat_template_kwarg: { enable_thinking: false } }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/unknown key in its block:\n {2}- `chat_template_kwarg` \(did you mean `chat_template_kwargs`\?\)/);
    expect((err as Error).message).toMatch(/Known keys: .*sampling_overrides/);
  });

  it('upstream\'s training config keys are accepted as they are', async () => {
    const { vllm, client } = await setup({
      request_prompt_and_generation_token_ids: false, uses_interleaved_reasoning: true, sequential_reasoning_allowed: true,
      chat_template_kwargs: { enable_thinking: true }, extra_body: { skip_special_tokens: false }, sampling_overrides: { temperature: 1 },
      default_headers: { 'x-trace': 'on' }, replace_developer_role_with_system: false,
    });
    await client.responses.create({ input: 'hi' });
    const chat = vllm.requests.find((r) => r.path === '/v1/chat/completions')!;
    expect(chat.headers['x-trace']).toBe('on');
    expect(chat.body).toMatchObject({ skip_special_tokens: false, temperature: 1, chat_template_kwargs: { enable_thinking: true } });
  });
});
