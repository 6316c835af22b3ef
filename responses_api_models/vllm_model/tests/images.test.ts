import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { encodePng, pngDataUrl } from '../../../resources_servers/vision_shapes/src/png.js';
import { serveVllmModel } from './serve.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function setup(config: Record<string, unknown> = {}) {
  return serveVllmModel(cleanups, { model: 'served-vlm', ...config });
}

const red = pngDataUrl(encodePng(2, 2, new Uint8Array(12).fill(200)));

describe('vllm_model image inputs', () => {
  it('sends input_image parts to vLLM as Chat image_url parts and keeps the token fields vLLM returns', async () => {
    const { vllm, client } = await setup();
    vllm.script = [{ content: 'Two squares.' }];
    const resp = await client.responses.create({
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'How many squares?' },
            { type: 'input_image', image_url: red, detail: 'high' },
            { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'auto' },
          ],
        },
      ],
    });
    const sent = vllm.requests.find((r) => r.path === '/v1/chat/completions')!;
    expect(sent.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'How many squares?' },
          { type: 'image_url', image_url: { url: red, detail: 'high' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'auto' } },
        ],
      },
    ]);
    // The prompt ids are vLLM's own (the stub expands each image to three image tokens).
    const expectedPrompt = vllm.tokenizer.prompt(sent.body.messages);
    const item = resp.output[0] as unknown as Record<string, unknown>;
    expect(item.prompt_token_ids).toEqual(expectedPrompt);
    expect(expectedPrompt.filter((t) => t === expectedPrompt[expectedPrompt.length - 2]).length).toBeGreaterThan(0);
    expect((item.prompt_token_ids as number[]).length).toBeGreaterThan(vllm.tokenizer.prompt([{ role: 'user', content: 'How many squares?' }]).length + 5);
    expect(item.generation_token_ids).toEqual(vllm.generation({ content: 'Two squares.' }));
    expect((item.generation_log_probs as number[]).length).toBe((item.generation_token_ids as number[]).length);
    expect(resp.output_text).toBe('Two squares.');

    // The recorded turn goes back into the next request unchanged; its image stays an image_url part.
    vllm.script = [{ content: 'Still two.' }];
    await client.responses.create({ input: [...(resp.output as never[]), { role: 'user', content: [{ type: 'input_text', text: 'Sure?' }, { type: 'input_image', image_url: red }] } as never] });
    const second = vllm.requests.filter((r) => r.path === '/v1/chat/completions')[1]!;
    expect(second.body.messages).toEqual([
      // The assistant turn carries its own token bundle back (the trainer's server repairs the prompt from it).
      { role: 'assistant', content: 'Two squares.', prompt_token_ids: item.prompt_token_ids, generation_token_ids: item.generation_token_ids, generation_log_probs: item.generation_log_probs },
      { role: 'user', content: [{ type: 'text', text: 'Sure?' }, { type: 'image_url', image_url: { url: red } }] },
    ]);
  });

  it('passes Chat Completions image_url parts through /v1/chat/completions', async () => {
    const { vllm, client } = await setup({ return_token_id_information: false });
    const messages = [{ role: 'user' as const, content: [{ type: 'image_url' as const, image_url: { url: red, detail: 'low' as const } }, { type: 'text' as const, text: 'what?' }] }];
    const out = await client.chat.completions.create({ model: 'm', messages });
    expect(out.choices[0]!.message.content).toBe('ok');
    expect(vllm.requests.find((r) => r.path === '/v1/chat/completions')!.body.messages).toEqual(messages);
  });

  it('answers unreadable, oversized and non-image inputs with a 4xx naming the item, and stays healthy', async () => {
    const { vllm, client, url } = await setup({ max_image_bytes: 1024 * 1024 });
    const ask = (image_url: string) =>
      client.responses
        .create({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'see' }, { type: 'input_image', image_url, detail: 'auto' }] }] })
        .then(() => null, (e: { status: number; error: { detail: string } }) => ({ status: e.status, detail: e.error.detail }));
    expect(await ask('data:image/png;base64,iVBORw0K!!!not-base64')).toEqual({ status: 400, detail: 'input[0].content[1]: the image has a payload that is not valid base64' });
    expect(await ask('data:image/png,rawbytes')).toMatchObject({ status: 400, detail: expect.stringContaining('input[0].content[1]: the image is not a readable data URL') });
    expect(await ask(`data:image/png;base64,${Buffer.from('GIF89a-not-a-png!').toString('base64')}`)).toMatchObject({
      status: 400,
      detail: expect.stringContaining('declared as image/png but its bytes do not start like one'),
    });
    expect(await ask(`data:application/pdf;base64,${Buffer.from('%PDF-1.7').toString('base64')}`)).toMatchObject({
      status: 415,
      detail: expect.stringContaining('declares the type "application/pdf", which is not an allowed image type'),
    });
    expect(await ask('file:///etc/passwd')).toMatchObject({ status: 400, detail: expect.stringContaining('has the scheme "file:"') });
    // A 50 MB image: refused from its size alone.
    const big = `data:image/png;base64,${'A'.repeat(Math.ceil((50 * 1024 * 1024 * 4) / 3 / 4) * 4)}`;
    expect(await ask(big)).toMatchObject({ status: 413, detail: expect.stringContaining('is 50.0 MiB, over the limit of 1.0 MiB per image (max_image_bytes)') });
    expect(vllm.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0);
    // Still healthy: a good request goes through.
    expect((await fetch(`${url}/`)).status).toBe(200);
    expect((await client.responses.create({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: red, detail: 'auto' }] }] })).output_text).toBe('ok');
  });

  it('names the request cap when the images add up to more than max_request_image_bytes', async () => {
    const { vllm, client } = await setup({ max_image_bytes: 1024 * 1024, max_request_image_bytes: 1024 * 1024 });
    const half = pngDataUrl(Buffer.concat([encodePng(1, 1, new Uint8Array(3)), Buffer.alloc(600 * 1024)]));
    const err = await client.responses
      .create({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: half, detail: 'auto' }, { type: 'input_image', image_url: half, detail: 'auto' }] }] })
      .catch((e) => e);
    expect(err.status).toBe(413);
    expect(err.error.detail).toMatch(/^input\[0\]\.content\[1\]: the request's images add up to 1\.2 MiB, over the limit of 1\.0 MiB per request/);
    expect(vllm.requests).toHaveLength(0);
  });

  it('accepts the current Responses fields and leaves out of the vLLM request those vLLM does not take', async () => {
    const { vllm, client } = await setup({ return_token_id_information: false });
    const resp = await client.responses.create({
      input: 'hi', prompt_cache_key: 'user-7', safety_identifier: 'sid', conversation: 'conv_1', reasoning: { effort: 'xhigh' },
      prompt_cache_retention: '24h', text: { verbosity: 'low' }, truncation: 'disabled',
    });
    expect(resp.output_text).toBe('ok');
    const sent = vllm.requests.find((r) => r.path === '/v1/chat/completions')!.body;
    expect(sent).toEqual({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], model: 'served-vlm' });
    // A genuinely unknown field is still refused, by name.
    const err = await client.responses.create({ input: 'hi', prompt_cache_keys: 'x' } as never).catch((e) => e);
    expect(err.status).toBe(422);
    expect(err.error.detail).toMatchObject([{ type: 'extra_forbidden', loc: ['body', 'prompt_cache_keys'], msg: 'Extra inputs are not permitted' }]);
    const bad = await client.responses.create({ input: 'hi', reasoning: { effort: 'maximal' } } as never).catch((e) => e);
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.error.detail)).toContain('reasoning');
  });
});

describe('vllm_model with fetch_remote_images', () => {
  /** An image host on 127.0.0.1: /ok.png (a PNG), /page (HTML), /moved (302), /huge (2 MB PNG). */
  async function imageHost() {
    const png = encodePng(3, 3, new Uint8Array(27).fill(90));
    const hits: string[] = [];
    const host = createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/ok.png') res.writeHead(200, { 'content-type': 'image/png' }).end(png);
      else if (req.url === '/page') res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
      else if (req.url === '/moved') res.writeHead(302, { location: '/ok.png' }).end();
      else if (req.url === '/huge') res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.concat([png, Buffer.alloc(2 * 1024 * 1024)]));
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise((r) => host.close(r)));
    return { url: `http://127.0.0.1:${(host.address() as AddressInfo).port}`, hits, png };
  }
  const ask = (client: OpenAI, image_url: string) =>
    client.responses
      .create({ input: [{ role: 'user', content: [{ type: 'input_image', image_url, detail: 'auto' }] }] })
      .then((r) => ({ status: 200, detail: r.output_text }), (e: { status: number; error: { detail: string } }) => ({ status: e.status, detail: e.error.detail }));

  it('refuses loopback and private addresses unless allow-listed, naming the item', async () => {
    const host = await imageHost();
    const { vllm, client } = await setup({ return_token_id_information: false, fetch_remote_images: true });
    const r = await ask(client, `${host.url}/ok.png`);
    expect(r.status).toBe(400);
    expect(r.detail).toBe(`input[0].content[0]: the image at ${host.url}/ok.png could not be fetched: 127.0.0.1 is a loopback address; this server fetches images from public addresses only (image_fetch_allowed_networks opens more)`);
    expect((await ask(client, 'http://169.254.169.254/latest/meta-data')).detail).toContain('169.254.169.254 is a cloud metadata address');
    expect(host.hits).toEqual([]);
    expect(vllm.requests).toHaveLength(0);
  });

  it('fetches an allowed image and sends it inline; wrong type, redirect and oversize are 4xx', async () => {
    const host = await imageHost();
    const { vllm, client } = await setup({ return_token_id_information: false, fetch_remote_images: true, image_fetch_allowed_networks: ['127.0.0.1/32'], max_image_bytes: 1024 * 1024 });
    expect(await ask(client, `${host.url}/ok.png`)).toEqual({ status: 200, detail: 'ok' });
    const sent = vllm.requests.find((q) => q.path === '/v1/chat/completions')!.body.messages[0].content[0];
    expect(sent).toEqual({ type: 'image_url', image_url: { url: pngDataUrl(host.png), detail: 'auto' } });
    expect(await ask(client, `${host.url}/page`)).toMatchObject({ status: 415, detail: expect.stringContaining('its content type is "text/html"') });
    expect(await ask(client, `${host.url}/moved`)).toMatchObject({ status: 400, detail: expect.stringContaining('HTTP 302 (redirects are not followed)') });
    expect(await ask(client, `${host.url}/huge`)).toMatchObject({ status: 413, detail: expect.stringContaining('larger than the limit of 1048576 bytes') });
    expect(host.hits).toEqual(['/ok.png', '/page', '/moved', '/huge']);
  });
});
