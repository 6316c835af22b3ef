/**
 * A `fetch` for SDK clients (the openai package) on top of undici's `request` and a shared
 * keep-alive pool. It skips WHATWG fetch's stream machinery, which costs more CPU per call than
 * the rest of a proxy hop; the SDK sees an ordinary `Response`.
 */
import { Agent, request } from 'undici';

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
    const res = await request(input, {
      method: (init.method ?? 'GET') as 'GET',
      headers,
      body,
      signal: init.signal ?? undefined,
      dispatcher,
    });
    const text = await res.body.arrayBuffer();
    const outHeaders: [string, string][] = [];
    for (const [k, v] of Object.entries(res.headers)) {
      if (v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) outHeaders.push([k, one]);
    }
    const nullBody = res.statusCode === 204 || res.statusCode === 304;
    return new Response(nullBody ? null : text, { status: res.statusCode, headers: outHeaders });
  };
  return pooled as typeof fetch;
}
