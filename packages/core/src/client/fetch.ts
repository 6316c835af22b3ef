/**
 * A `fetch` for SDK clients (the openai package) on top of a shared undici keep-alive pool
 * (see dispatch.ts). It skips WHATWG fetch's stream machinery, which costs more CPU per call than
 * the rest of a proxy hop; the SDK sees an ordinary `Response`.
 */
import { Agent } from 'undici';
import { dispatchRequest, splitUrl } from './dispatch.js';

export interface PooledFetchOptions {
  connections?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
}

export function createPooledFetch(options: PooledFetchOptions = {}): typeof fetch {
  const dispatcher = new Agent({
    connections: options.connections ?? 1024,
    keepAliveTimeout: 15_000,
    headersTimeout: options.headersTimeoutMs ?? 3_600_000,
    bodyTimeout: options.bodyTimeoutMs ?? 3_600_000,
    connect: { keepAlive: true, keepAliveInitialDelay: 60_000 },
  });
  const pooled = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (typeof input !== 'string' && !(input instanceof URL)) return fetch(input, init);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => {
      headers[k] = v;
    });
    let body: string | Buffer | undefined;
    if (typeof init.body === 'string') body = init.body;
    else if (init.body instanceof ArrayBuffer || ArrayBuffer.isView(init.body)) body = Buffer.from(init.body as ArrayBuffer);
    else if (init.body !== undefined && init.body !== null) return fetch(input, init);
    const [origin, path] = splitUrl(String(input));
    const res = await dispatchRequest(dispatcher, origin, path, {
      method: (init.method ?? 'GET') as 'GET',
      headers,
      body,
      signal: init.signal,
    });
    const outHeaders: [string, string][] = [];
    for (const [k, v] of Object.entries(res.headers)) {
      for (const one of Array.isArray(v) ? v : [v]) outHeaders.push([k, one]);
    }
    const nullBody = res.status === 204 || res.status === 304;
    return new Response(nullBody ? null : res.body, { status: res.status, headers: outHeaders });
  };
  return pooled as typeof fetch;
}
