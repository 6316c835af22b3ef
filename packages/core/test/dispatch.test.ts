import { createServer, type Server } from 'node:http';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPooledFetch } from '@nemo-gym/core/client';
import { dispatchRequest, splitUrl } from '@nemo-gym/core/internal';

let http: Server;
let origin: string;
const dispatcher = new Agent({ connections: 4 });

beforeAll(async () => {
  http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/hang') return; // never answers
      if (req.url === '/empty') {
        res.writeHead(204);
        res.end();
        return;
      }
      const body = JSON.stringify({ method: req.method, url: req.url, got: Buffer.concat(chunks).toString(), auth: req.headers.authorization ?? null });
      res.writeHead(req.url === '/teapot' ? 418 : 200, [['content-type', 'application/json'], ['set-cookie', 'a=1; Path=/'], ['set-cookie', 'b=2; Path=/'], ['x-request-id', 'req_1']]);
      // Two writes, so the body arrives in more than one chunk.
      res.write(body.slice(0, 5));
      res.end(body.slice(5));
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
});
afterAll(async () => {
  await dispatcher.close();
  await new Promise<void>((r) => http.close(() => r()));
});

describe('splitUrl', () => {
  it('splits origin and path, keeping the query', () => {
    expect(splitUrl('http://h:1/a/b?c=1')).toEqual(['http://h:1', '/a/b?c=1']);
    expect(splitUrl('http://h:1')).toEqual(['http://h:1', '/']);
    expect(splitUrl('http://h:1?x=1')).toEqual(['http://h:1', '/?x=1']);
    expect(() => splitUrl('/relative')).toThrow(/absolute/);
  });
});

describe('dispatchRequest', () => {
  it('collects status, headers (repeated ones as a list) and the whole body', async () => {
    const res = await dispatchRequest(dispatcher, origin, '/x?y=1', { method: 'POST', body: '{"k":1}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
    expect(res.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    expect(res.headers['x-request-id']).toBe('req_1');
    expect(JSON.parse(res.body.toString())).toMatchObject({ method: 'POST', url: '/x?y=1', got: '{"k":1}' });
  });

  it('rejects with the abort reason when the signal fires, and on a refused connection', async () => {
    const ac = new AbortController();
    const pending = dispatchRequest(dispatcher, origin, '/hang', { method: 'POST', body: '{}', signal: ac.signal });
    setTimeout(() => ac.abort(new Error('stop now')), 30);
    await expect(pending).rejects.toThrow('stop now');
    const refused = new Agent({ connect: { timeout: 1000 } });
    await expect(dispatchRequest(refused, 'http://127.0.0.1:1', '/')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await refused.close();
  });

  it('times out on headers with undici\'s error code', async () => {
    await expect(dispatchRequest(dispatcher, origin, '/hang', { method: 'POST', body: '{}', headersTimeout: 50 })).rejects.toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT' });
  });
});

describe('createPooledFetch', () => {
  const f = createPooledFetch({ connections: 2 });
  it('answers like fetch: status, ok, headers, text and json; the body is read once', async () => {
    const res = await f(`${origin}/v1/responses`, { method: 'POST', headers: new Headers({ authorization: 'Bearer k', 'content-type': 'application/json' }), body: '{"a":1}' });
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(res.headers.get('Content-Type')).toBe('application/json');
    expect(res.headers.get('set-cookie')).toBe('a=1; Path=/, b=2; Path=/');
    expect(res.headers.has('x-request-id')).toBe(true);
    expect(res.headers.get('missing')).toBeNull();
    const body = (await res.json()) as { auth: string; got: string };
    expect(body).toMatchObject({ auth: 'Bearer k', got: '{"a":1}' });
    await expect(res.text()).rejects.toThrow(/already been read/);
  });

  it('streams the body when asked for it, and has no body for 204', async () => {
    const res = await f(`${origin}/teapot`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(418);
    expect(res.ok).toBe(false);
    const text = await new Response(res.body).text();
    expect(JSON.parse(text).url).toBe('/teapot');
    // Looking at `body` (as the SDK does when a caller passes a signal) leaves it readable.
    const peeked = await f(`${origin}/peek`, { method: 'POST', body: '{}' });
    expect(peeked.body).not.toBeNull();
    expect(((await peeked.json()) as { url: string }).url).toBe('/peek');
    await expect(peeked.text()).rejects.toThrow(/already been read/);
    const empty = await f(`${origin}/empty`, { method: 'POST', body: '{}' });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });
});
