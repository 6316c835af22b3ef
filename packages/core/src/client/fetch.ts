/**
 * A `fetch` for SDK clients (the openai package) on top of a shared undici keep-alive pool
 * (see dispatch.ts). It skips WHATWG fetch's stream machinery, which costs more CPU per call than
 * the rest of a proxy hop: the answer is read whole and handed over as a Response-shaped object
 * whose stream is only built if someone asks for `body`.
 */
import { createPool } from './agent.js';
import { dispatchWithRetries, splitUrl, type ResponseHeaders } from './dispatch.js';
import { classifyRequest, NO_RETRY, retryPolicy, type RetryPolicy } from './retry.js';

export interface PooledFetchOptions {
  connections?: number;
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /**
   * The retries of this hop (default: none). An SDK on top of this fetch is configured with
   * `maxRetries: 0`, so this is the one layer that retries; a POST is resent only when it
   * provably did not reach the server (see retry.ts).
   */
  retry?: Partial<RetryPolicy>;
}

/** The read-only part of `Headers` an SDK reads from an answer, over the parsed header object. */
class AnswerHeaders {
  readonly #map: ResponseHeaders;
  constructor(map: ResponseHeaders) {
    this.#map = map;
  }
  get(name: string): string | null {
    const v = this.#map[name.toLowerCase()];
    if (v === undefined) return null;
    return Array.isArray(v) ? v.join(', ') : v;
  }
  has(name: string): boolean {
    return this.#map[name.toLowerCase()] !== undefined;
  }
  getSetCookie(): string[] {
    const v = this.#map['set-cookie'];
    return v === undefined ? [] : Array.isArray(v) ? [...v] : [v];
  }
  forEach(fn: (value: string, key: string, parent: AnswerHeaders) => void): void {
    for (const [k, v] of this.entries()) fn(v, k, this);
  }
  *entries(): IterableIterator<[string, string]> {
    for (const k of Object.keys(this.#map)) yield [k, this.get(k)!];
  }
  *keys(): IterableIterator<string> {
    for (const [k] of this.entries()) yield k;
  }
  *values(): IterableIterator<string> {
    for (const [, v] of this.entries()) yield v;
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

/**
 * A complete answer already in memory, shaped like a fetch `Response`. Building a real Response
 * around a buffer sets up a web stream per call; this one creates it only if `body` is read.
 */
class BufferedResponse {
  readonly ok: boolean;
  readonly statusText = '';
  readonly redirected = false;
  readonly type = 'basic';
  readonly headers: AnswerHeaders;
  #buffer: Buffer | null;
  #stream: ReadableStream<Uint8Array> | null = null;
  bodyUsed = false;

  constructor(
    readonly url: string,
    readonly status: number,
    headers: ResponseHeaders,
    buffer: Buffer | null,
  ) {
    this.ok = status >= 200 && status < 300;
    this.headers = new AnswerHeaders(headers);
    this.#buffer = buffer;
  }

  /** A stream over the buffer, made on first access; reading it (or any reader below) uses the body up. */
  get body(): ReadableStream<Uint8Array> | null {
    if (this.#buffer === null) return null;
    if (this.#stream === null) {
      const buffer = this.#buffer;
      this.#stream = new ReadableStream<Uint8Array>({
        start: (controller) => {
          controller.enqueue(new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength));
          controller.close();
        },
      });
    }
    return this.#stream;
  }

  async #read(): Promise<Buffer> {
    if (this.bodyUsed || this.#stream?.locked) throw new TypeError('Body is unusable: Body has already been read');
    this.bodyUsed = true;
    if (this.#stream === null) return this.#buffer ?? Buffer.alloc(0);
    const chunks: Uint8Array[] = [];
    for await (const chunk of this.#stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    return Buffer.concat(chunks);
  }

  async text(): Promise<string> {
    return (await this.#read()).toString('utf8');
  }
  async json(): Promise<unknown> {
    return JSON.parse((await this.#read()).toString('utf8'));
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = await this.#read();
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }
  async bytes(): Promise<Uint8Array> {
    return new Uint8Array(await this.#read());
  }
  async blob(): Promise<Blob> {
    return new Blob([await this.#read()], { type: this.headers.get('content-type') ?? '' });
  }
  clone(): BufferedResponse {
    if (this.bodyUsed || this.#stream !== null) throw new TypeError('Response.clone: Body has already been consumed');
    const raw: ResponseHeaders = Object.create(null) as ResponseHeaders;
    for (const [k, v] of this.headers.entries()) raw[k] = v;
    return new BufferedResponse(this.url, this.status, raw, this.#buffer);
  }
}

export function createPooledFetch(options: PooledFetchOptions = {}): typeof fetch {
  const dispatcher = createPool({
    connections: options.connections,
    connectTimeoutMs: options.connectTimeoutMs,
    headersTimeoutMs: options.headersTimeoutMs,
    bodyTimeoutMs: options.bodyTimeoutMs,
  });
  const policy = retryPolicy(options.retry, NO_RETRY);
  const pooled = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (typeof input !== 'string' && !(input instanceof URL)) return fetch(input, init);
    const headers: Record<string, string> = {};
    const given = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
    given.forEach((v, k) => {
      headers[k] = v;
    });
    let body: string | Buffer | undefined;
    if (typeof init.body === 'string') body = init.body;
    else if (init.body instanceof ArrayBuffer || ArrayBuffer.isView(init.body)) body = Buffer.from(init.body as ArrayBuffer);
    else if (init.body !== undefined && init.body !== null) return fetch(input, init);
    const [origin, path] = splitUrl(String(input));
    const method = init.method ?? 'GET';
    const requestClass = classifyRequest(method);
    const signal = init.signal ?? null;
    const result = await dispatchWithRetries(policy, requestClass, dispatcher, origin, path, { method, headers, body, signal }, { signal });
    if (!result.ok) throw result.error;
    const res = result.response;
    const nullBody = res.status === 204 || res.status === 304 || init.method === 'HEAD';
    return new BufferedResponse(String(input), res.status, res.headers, nullBody ? null : res.body) as unknown as Response;
  };
  return pooled as typeof fetch;
}
