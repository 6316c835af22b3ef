import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodePng, pngDataUrl } from '../../../resources_servers/vision_shapes/src/png.js';
import { server } from '../app.js';
import { HttpStub, type StubHandler } from '../../vllm_model/tests/stub.js';

const API_KEY = 'azure-test-secret-0123456789';
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const completion = (message: Record<string, unknown>, finish = 'stop') => ({
  id: 'chatcmpl-az', object: 'chat.completion', created: 1731000000, model: 'gpt-4o',
  choices: [{ index: 0, finish_reason: finish, logprobs: null, message: { role: 'assistant', refusal: null, ...message }, content_filter_results: {} }],
  usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14, completion_tokens_details: { reasoning_tokens: 0 } },
  prompt_filter_results: [],
});

async function setup(handler: StubHandler, extra: Record<string, unknown> = {}) {
  const stub = await new HttpStub(handler).start();
  cleanups.push(() => stub.stop());
  const app = await server.build({
    config: {
      name: 'policy_model', openai_base_url: stub.url, openai_api_key: API_KEY, openai_model: 'my-gpt4o-deployment',
      default_query: { 'api-version': '2024-10-21' }, num_concurrent_requests: 8, max_retries: 0, ...extra,
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${(app.server.address() as { port: number }).port}/v1`, apiKey: 'unused', maxRetries: 0 });
  return { stub, client, app };
}

const tool = { type: 'function' as const, name: 'lookup', strict: true, parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false } };

describe('azure_openai_model', () => {
  it('serves /v1/responses through the deployment chat endpoint and converts back', async () => {
    const { stub, client } = await setup(() => ({
      json: completion({ content: 'Let me look.', tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }] }, 'tool_calls'),
    }));
    const resp = await client.responses.create({
      model: 'ignored', instructions: 'Be helpful.', input: 'Find x', tools: [tool], tool_choice: 'auto', temperature: 0,
    });
    const sent = stub.requests[0]!;
    expect(sent.path).toBe('/openai/deployments/my-gpt4o-deployment/chat/completions?api-version=2024-10-21');
    expect(sent.headers['api-key']).toBe(API_KEY);
    expect(sent.body).toEqual({
      messages: [{ role: 'system', content: 'Be helpful.' }, { role: 'user', content: [{ type: 'text', text: 'Find x' }] }],
      model: 'my-gpt4o-deployment',
      temperature: 0,
      tool_choice: 'auto',
      tools: [{ type: 'function', function: { name: 'lookup', strict: true, parameters: tool.parameters } }],
    });
    expect(resp.model).toBe('my-gpt4o-deployment');
    expect(resp.created_at).toBe(1731000000);
    expect(resp.output.map((o) => o.type)).toEqual(['message', 'function_call']);
    expect(resp.output_text).toBe('Let me look.');
    expect(resp.usage).toEqual({ input_tokens: 11, input_tokens_details: { cached_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 14 });
    expect(resp.status).toBe('completed');
  });

  it('marks a length-truncated completion incomplete', async () => {
    const { client } = await setup(() => ({ json: completion({ content: 'partial' }, 'length') }));
    const resp = await client.responses.create({ input: 'x', max_output_tokens: 3 });
    expect(resp.status).toBe('incomplete');
    expect(resp.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('passes /v1/chat/completions through with the deployment as model', async () => {
    const answer = completion({ content: 'pong' });
    const { stub, client } = await setup(() => ({ json: answer }));
    const c = await client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'ping' }] });
    expect(stub.requests[0]!.body).toEqual({ messages: [{ role: 'user', content: 'ping' }], model: 'my-gpt4o-deployment' });
    expect(c).toEqual(answer);
  });

  it('keeps at most num_concurrent_requests calls in flight to Azure', async () => {
    let inFlight = 0;
    let peak = 0;
    const { stub, client } = await setup(
      async () => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setTimeout(r, 30));
        inFlight--;
        return { json: completion({ content: 'ok' }) };
      },
      { num_concurrent_requests: 2 },
    );
    await Promise.all(Array.from({ length: 6 }, (_, i) => client.responses.create({ input: `q${i}` })));
    expect(stub.requests).toHaveLength(6);
    expect(peak).toBe(2);
  });

  it('keeps the status and error of an Azure error, without the key', async () => {
    const { client } = await setup((req) => ({
      status: 400,
      json: { error: { code: 'content_filter', message: `The response was filtered (api-key ${String(req.headers['api-key'])})`, param: 'prompt', status: 400 } },
    }));
    const err = await client.responses.create({ input: 'x' }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.code).toBe('content_filter');
    expect(JSON.stringify(err.error)).not.toContain(API_KEY);
  });

  it('answers 504 on timeout and 502 on refused connections', async () => {
    const { client } = await setup(() => ({ hang: true }), { request_timeout_s: 0.3 });
    const e1 = await client.responses.create({ input: 'x' }).catch((e) => e);
    expect(e1.status).toBe(504);
    expect(e1.message).toContain('/openai/deployments/my-gpt4o-deployment/chat/completions');

    const dead = await new HttpStub(() => ({})).start();
    const deadUrl = dead.url;
    await dead.stop();
    const { client: c2 } = await setup(() => ({}), { openai_base_url: deadUrl });
    const e2 = await c2.responses.create({ input: 'x' }).catch((e) => e);
    expect(e2.status).toBe(502);
    expect(e2.message).toContain(deadUrl);
  });

  it('keeps a 5xx status and answers 502 for malformed JSON or a completion without choices', async () => {
    const { client } = await setup((req) =>
      req.body.messages[0].content === 'five'
        ? { status: 500, json: { error: { message: 'internal', code: 'server_error' } } }
        : req.body.messages[0].content === 'bad'
          ? { raw: '{"id": "chatcmpl", "choices": [{' }
          : { json: { id: 'c', object: 'chat.completion', created: 1, model: 'x', choices: [] } },
    );
    const e1 = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'five' }] }).catch((e) => e);
    expect(e1.status).toBe(500);
    expect(e1.code).toBe('server_error');
    const e2 = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'bad' }] }).catch((e) => e);
    expect(e2.status).toBe(502);
    expect(e2.message).toMatch(/JSON/);
    const e3 = await client.responses.create({ input: [{ role: 'user', content: 'empty' }] }).catch((e) => e);
    expect(e3.status).toBe(502);
    expect(e3.message).toContain('no choices');
  });

  it('refuses to start without an api-version', async () => {
    await expect(
      server.build({ config: { name: 'p', openai_base_url: 'http://127.0.0.1:1', openai_api_key: 'k', openai_model: 'd', default_query: {} } }),
    ).rejects.toThrow(/api-version/);
  });

  it('with fetch_remote_images, inlines an allowed image and refuses a loopback one that is not allow-listed', async () => {
    const png = encodePng(2, 2, new Uint8Array(12).fill(77));
    const hits: string[] = [];
    const host = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    });
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise((r) => host.close(r)));
    const imageUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}/cat.png`;
    const ask = (client: OpenAI) =>
      client.responses
        .create({ model: 'x', input: [{ role: 'user', content: [{ type: 'input_image', image_url: imageUrl, detail: 'low' }] }] })
        .then((r) => ({ status: 200, text: r.output_text }), (e: { status: number; error: { detail: string } }) => ({ status: e.status, text: e.error.detail }));

    const closed = await setup(() => ({ json: completion({ content: 'a cat' }) }), { fetch_remote_images: true });
    const refused = await ask(closed.client);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('127.0.0.1 is a loopback address');
    expect(hits).toEqual([]);
    expect(closed.stub.requests).toHaveLength(0);

    const open = await setup(() => ({ json: completion({ content: 'a cat' }) }), { fetch_remote_images: true, image_fetch_allowed_networks: ['127.0.0.1/32'] });
    expect(await ask(open.client)).toEqual({ status: 200, text: 'a cat' });
    expect(hits).toEqual(['/cat.png']);
    const sent = (open.stub.requests[0]!.body as { messages: { content: unknown[] }[] }).messages[0]!.content[0];
    expect(sent).toEqual({ type: 'image_url', image_url: { url: pngDataUrl(png), detail: 'low' } });
  });
});
