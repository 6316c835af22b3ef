import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { server } from '../app.js';
import { FakeVLLM, HttpStub, sessionClient } from './stub.js';

const API_KEY = 'sk-test-secret-key-0123456789';

type App = Awaited<ReturnType<typeof server.build>>;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function startModel(config: Record<string, unknown>): Promise<{ app: App; url: string }> {
  const app = (await server.build({
    config: {
      name: 'policy_model', api_key: API_KEY, model: 'served-model', return_token_id_information: false, uses_reasoning_parser: true,
      retry_sleep_s: 0, health_check_interval_s: 0, ...config,
    },
  })) as App;
  await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  const port = (app.server.address() as { port: number }).port;
  return { app, url: `http://127.0.0.1:${port}/v1` };
}

async function startVLLM(): Promise<FakeVLLM> {
  const stub = await new FakeVLLM().start();
  cleanups.push(() => stub.stop());
  return stub;
}

async function startStub(handler: ConstructorParameters<typeof HttpStub>[0]): Promise<HttpStub> {
  const stub = await new HttpStub(handler).start();
  cleanups.push(() => stub.stop());
  return stub;
}

const weatherTool = {
  type: 'function' as const, name: 'get_weather', description: 'Weather for a city', strict: true,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
};

describe('vllm_model /v1/responses', () => {
  it('converts the request to Chat Completions, sends it to vLLM and converts the answer back', async () => {
    const vllm = await startVLLM();
    vllm.script = [{ reasoning: 'Need weather.', content: null, tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] }];
    const { url } = await startModel({ base_url: `${vllm.url}/v1`, replace_developer_role_with_system: true });
    const client = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    const resp = await client.responses.create({
      model: 'caller-model-ignored',
      instructions: 'You are terse.',
      input: [
        { role: 'developer', content: 'Use tools.' },
        { role: 'user', content: 'Weather in Paris?' },
      ],
      tools: [weatherTool],
      tool_choice: 'required',
      max_output_tokens: 100,
      temperature: 0.7,
    });
    const sent = vllm.requests.find((r) => r.path === '/v1/chat/completions')!;
    expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.body).toEqual({
      messages: [
        { role: 'system', content: 'You are terse.\n\nUse tools.' },
        { role: 'user', content: 'Weather in Paris?' },
      ],
      model: 'served-model',
      max_tokens: 100,
      temperature: 0.7,
      tool_choice: 'required',
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', strict: true, parameters: weatherTool.parameters } }],
    });
    expect(resp.model).toBe('served-model');
    expect(resp.tool_choice).toBe('required');
    expect(resp.status).toBe('completed');
    expect(resp.created_at).toBe(1700000001);
    expect(resp.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
    expect(resp.output.map((o) => o.type)).toEqual(['reasoning', 'function_call']);
    expect(resp.output[0]).toMatchObject({ summary: [{ type: 'summary_text', text: 'Need weather.' }] });
    expect(resp.output[1]).toMatchObject({ call_id: 'call_1', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' });
  });

  it('sends earlier reasoning back as reasoning_content and omits empty tool_calls', async () => {
    const vllm = await startVLLM();
    const { url } = await startModel({ base_url: `${vllm.url}/v1` });
    const client = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    await client.responses.create({
      input: [
        { role: 'user', content: 'hi' },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'think first' }] },
        { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'hello', annotations: [] }] },
        { role: 'user', content: 'again' },
      ],
    });
    expect(vllm.requests[0]!.body.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello', reasoning_content: 'think first' },
      { role: 'user', content: 'again' },
    ]);
  });

  it('answers a context-length error from vLLM with an incomplete, empty response', async () => {
    const stub = await startStub(() => ({
      status: 400,
      json: { object: 'error', message: "This model's maximum context length is 32768 tokens. However, you requested 32818 tokens", type: 'BadRequestError', code: 400 },
    }));
    const { url } = await startModel({ base_url: `${stub.url}/v1` });
    const client = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    const resp = await client.responses.create({ input: 'very long' });
    expect(resp.status).toBe('incomplete');
    expect(resp.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(resp.output).toHaveLength(1);
    expect(resp.output[0]).toMatchObject({ type: 'message', content: [{ type: 'output_text', text: '' }] });
    expect(stub.requests).toHaveLength(1);
  });

  it('answers bad client input with 422 (unknown key) or 400 (no chat equivalent), naming the problem', async () => {
    const vllm = await startVLLM();
    const { url } = await startModel({ base_url: `${vllm.url}/v1` });
    const client = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    const e1 = await client.responses.create({ input: 'x', seed: 3 } as any).catch((e) => e);
    expect(e1.status).toBe(422);
    expect(JSON.stringify(e1.error ?? e1.message)).toContain('seed');
    const e2 = await client.responses
      .create({ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }] })
      .catch((e) => e);
    expect(e2.status).toBe(400);
    expect(e2.error.detail).toContain('input[0].content[0] has type "input_file"');
    expect(vllm.requests).toHaveLength(0);
  });

  it('refuses separate reasoning from vLLM when uses_reasoning_parser is false', async () => {
    const vllm = await startVLLM();
    vllm.script = [{ reasoning: 'hidden', content: 'x' }];
    const { url } = await startModel({ base_url: `${vllm.url}/v1`, uses_reasoning_parser: false });
    const client = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    const err = await client.responses.create({ input: 'x' }).catch((e) => e);
    expect(err.status).toBe(502);
    expect(err.message).toContain('uses_reasoning_parser');
  });
});

describe('vllm_model /v1/chat/completions', () => {
  it('passes chat requests through with the configured model and wraps reasoning in think tags', async () => {
    const vllm = await startVLLM();
    vllm.script = [{ reasoning: 'r', content: 'answer' }];
    const { url } = await startModel({ base_url: `${vllm.url}/v1` });
    const client = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    const c = await client.chat.completions.create({ model: 'other', messages: [{ role: 'user', content: 'q' }], top_p: 0.5 });
    expect(vllm.requests[0]!.body).toEqual({ messages: [{ role: 'user', content: 'q' }], model: 'served-model', top_p: 0.5 });
    expect(c.choices[0]!.message.content).toBe('<think>r</think>answer');
    expect((c.choices[0]!.message as any).reasoning_content).toBeUndefined();
  });
});

describe('vllm_model /v1/chat/completions with token ids', () => {
  it('returns integer token ids and log-probs on the message and drops the raw logprobs', async () => {
    const vllm = await startVLLM();
    vllm.script = [{ content: 'four' }];
    const { url } = await startModel({ base_url: `${vllm.url}/v1`, return_token_id_information: true, replace_developer_role_with_system: true });
    const client = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    const c = await client.chat.completions.create({ model: 'm', messages: [{ role: 'developer', content: 'Be exact.' }, { role: 'user', content: '2+2?' }] });
    const msg = c.choices[0]!.message as any;
    const sent = vllm.requests.find((r) => r.path === '/v1/chat/completions')!.body;
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'Be exact.' });
    expect(msg.prompt_token_ids).toEqual(vllm.tokenizer.prompt(sent.messages));
    expect(msg.generation_token_ids).toEqual(vllm.generation({ content: 'four' }));
    expect(msg.generation_log_probs).toHaveLength(msg.generation_token_ids.length);
    expect(c.choices[0]!.logprobs).toBeUndefined();
    const tk = vllm.requests.find((r) => r.path === '/tokenize')!;
    expect(tk.body).toEqual({ messages: sent.messages, model: 'served-model', add_generation_prompt: true });
  });

  it('answers 502 for partial inline token data and 400 for n > 1', async () => {
    const stub = await startStub(() => ({
      json: {
        id: 'c', object: 'chat.completion', created: 1, model: 'm', prompt_token_ids: [1, 2],
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'x' }, logprobs: { content: [{ token: 'token_id:7', logprob: -1 }] } }],
      },
    }));
    const { url } = await startModel({ base_url: `${stub.url}/v1`, return_token_id_information: true });
    const client = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    const e1 = await client.responses.create({ input: 'x' }).catch((e) => e);
    expect(e1.status).toBe(502);
    expect(e1.message).toContain('prompt_token_ids without choices[0].token_ids');
    const e2 = await client.chat.completions.create({ model: 'm', n: 2, messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(e2.status).toBe(400);
    expect(e2.message).toContain('n=2');
  });
});

describe('vllm_model backend failures', () => {
  async function failWith(reply: Parameters<typeof startStub>[0], extra: Record<string, unknown> = {}) {
    const stub = await startStub(reply);
    const { url } = await startModel({ base_url: `${stub.url}/v1`, ...extra });
    const client = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    const err = await client.responses.create({ input: 'x' }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.message).not.toContain(API_KEY);
    return { err, stub };
  }

  it('retries 503 answers, then answers 503 (overloaded, not processed) naming the backend URL', async () => {
    const { err, stub } = await failWith((req) => ({ status: 503, json: { error: `overloaded; saw ${req.headers.authorization}` } }), { max_attempts: 3 });
    expect(err.status).toBe(503);
    expect(err.message).toContain(`${stub.url}/v1/chat/completions`);
    expect(err.message).toContain('HTTP 503');
    expect(err.message).toContain('****');
    expect(stub.requests).toHaveLength(3);
  });

  it('keeps a 4xx status from the backend with its body', async () => {
    const { err, stub } = await failWith(() => ({ status: 404, json: { message: 'The model `served-model` does not exist.' } }));
    expect(err.status).toBe(404);
    expect(err.message).toContain('does not exist');
    expect(stub.requests).toHaveLength(1);
  });

  it('answers 504 when the backend does not answer in time', async () => {
    const { err } = await failWith(() => ({ hang: true }), { request_timeout_s: 0.3 });
    expect(err.status).toBe(504);
    expect(err.message).toContain('did not answer');
  });

  it('answers 502 with the URL when the backend refuses connections', async () => {
    const stub = await new HttpStub(() => ({ json: {} })).start();
    const deadUrl = stub.url;
    await stub.stop();
    const { url } = await startModel({ base_url: `${deadUrl}/v1` });
    const client = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    const err = await client.responses.create({ input: 'x' }).catch((e) => e);
    expect(err.status).toBe(502);
    expect(err.message).toContain(`could not reach the model backend at ${deadUrl}/v1/chat/completions`);
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('answers 502 when the backend sends malformed JSON', async () => {
    const { err } = await failWith(() => ({ raw: '{"id": "chatcmpl-1", "choices": [' }));
    expect(err.status).toBe(502);
    expect(err.message).toContain('not valid JSON');
  });
});
