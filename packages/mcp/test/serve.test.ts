/**
 * A resources server's tools over MCP, driven by the SDK's own client over Streamable HTTP on
 * 127.0.0.1: the tool list and its schemas, calls in a session, verify over HTTP and over MCP.
 */
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BaseVerifyRequestSchema, decodeSession, defineResourcesServer, ResourcesServerConfigSchema, SessionStore } from '@nemo-gym/core/server';
import { toolInputSchema } from '../src/serve.js';
import { startTestServer, textResponse, type TestServer } from '@nemo-gym/core/testing';

const AddBody = z.object({ amount: z.number().int().describe('how much to add') });
const SeedBody = z.object({ start: z.number().int().default(0) }).loose();

/** A counter per session: seed sets it, `add` adds, verify rewards the expected total. */
const counter = defineResourcesServer({
  className: 'McpCounterServer',
  configSchema: ResourcesServerConfigSchema,
  setup: () => new SessionStore<number>({ idleTtlMs: 60_000, maxSessions: 100 }),
  seedSession: {
    body: SeedBody,
    handler: (body, ctx) => {
      ctx.state.set(ctx.sessionId, body.start);
      return {};
    },
  },
  tools: {
    add: {
      body: AddBody.describe('Adds to the counter of this rollout and answers the new total.'),
      handler: ({ amount }, ctx) => {
        const total = (ctx.state.get(ctx.sessionId) ?? 0) + amount;
        ctx.state.set(ctx.sessionId, total);
        return { total };
      },
    },
    reset: { body: z.object({}), handler: (_b, ctx) => (ctx.state.set(ctx.sessionId, 0), { total: 0 }) },
  },
  verify: {
    body: BaseVerifyRequestSchema.extend({ expected: z.number() }).loose(),
    handler: (body, ctx) => ({ ...body, reward: ctx.state.take(ctx.sessionId) === body.expected ? 1 : 0 }),
  },
});

const cookieName = 'McpCounterServer___counter';
const base = { name: 'counter', domain: 'other' };
const verifyBody = (expected: number) => ({ responses_create_params: { input: [] }, response: textResponse('done'), expected });

async function connect(url: string, headers: Record<string, string> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'test-client', version: '0.0.1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}

const text = (r: unknown) => (r as { content: { type: string; text: string }[] }).content[0]!.text;

describe('serving tools over MCP', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer(counter, { config: { ...base, mcp: { enabled: true } }, listen: true });
  });
  afterAll(async () => srv.close());

  it('lists the tools with input schemas derived from their zod schemas', async () => {
    const { client } = await connect(srv.url);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['add', 'reset']);
      const add = tools.find((t) => t.name === 'add')!;
      expect(add.description).toBe('Adds to the counter of this rollout and answers the new total.');
      expect(add.inputSchema).toEqual({ ...toolInputSchema(AddBody), description: add.description });
      expect(add.inputSchema).toMatchObject({ type: 'object', properties: { amount: { type: 'integer', description: 'how much to add' } }, required: ['amount'] });
      expect(tools.find((t) => t.name === 'reset')!.inputSchema).toMatchObject({ type: 'object', properties: {} });
    } finally {
      await client.close();
    }
  });

  it('seed over HTTP, tools over MCP with the session cookie, verify over HTTP: one session', async () => {
    const seeded = await srv.post('/seed_session', { start: 10 });
    const cookie = `${cookieName}=${seeded.cookies[cookieName]}`;
    const { client } = await connect(srv.url, { cookie });
    try {
      expect(text(await client.callTool({ name: 'add', arguments: { amount: 5 } }))).toBe('{"total":15}');
      const second = await client.callTool({ name: 'add', arguments: { amount: 2 } });
      expect([second.isError, text(second)]).toEqual([false, '{"total":17}']);
      // A second MCP client without the cookie has a session of its own.
      const other = await connect(srv.url);
      expect(text(await other.client.callTool({ name: 'add', arguments: { amount: 1 } }))).toBe('{"total":1}');
      await other.client.close();
      const v = await srv.post('/verify', verifyBody(17), { headers: { cookie } });
      expect(v.json.reward).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('bad arguments are a tool error holding the same 422 detail the HTTP route answers', async () => {
    const { client } = await connect(srv.url);
    try {
      const r = await client.callTool({ name: 'add', arguments: { amount: 'x' } });
      expect(r.isError).toBe(true);
      const http = await srv.post('/add', { amount: 'x' });
      expect(http.status).toBe(422);
      expect(text(r)).toBe(http.text);
      const unknown = await client.callTool({ name: 'verify', arguments: {} });
      expect(unknown.isError).toBe(true);
      expect(text(unknown)).toMatch(/Unknown tool `verify`.*add, reset/);
    } finally {
      await client.close();
    }
  });

  it('the MCP answers set the session cookie; the MCP session id is bound to it', async () => {
    const res = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }),
    });
    expect(res.status).toBe(200);
    const mcpId = res.headers.get('mcp-session-id')!;
    expect(mcpId).toMatch(/^[0-9a-f-]{36}$/);
    const set = res.headers.getSetCookie().find((c) => c.startsWith(`${cookieName}=`))!;
    const sessionId = decodeSession(set.slice(cookieName.length + 1).split(';')[0], cookieName);
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const call = (id: number, method: string, params: unknown, session = mcpId) =>
      fetch(`${srv.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      });
    await call(2, 'notifications/initialized', undefined);
    const added = await call(3, 'tools/call', { name: 'add', arguments: { amount: 4 } });
    expect(((await added.json()) as { result: { content: { text: string }[] } }).result.content[0]!.text).toBe('{"total":4}');
    // The same session over HTTP, through the cookie the MCP answer set.
    const v = await srv.post('/verify', verifyBody(4), { headers: { cookie: set.split(';')[0]! } });
    expect(v.json.reward).toBe(1);
    const gone = await call(4, 'tools/list', {}, crypto.randomUUID());
    expect(gone.status).toBe(404);
    expect(await gone.text()).toMatch(/MCP session not found; send initialize again/);
  });

  it('a request for another host name is refused (DNS rebinding)', async () => {
    // fetch does not let a caller set Host; undici's request does.
    const res = await request(`${srv.url}/mcp`, { method: 'POST', headers: { host: 'evil.example:80', 'content-type': 'application/json' }, body: '{}' });
    expect(res.statusCode).toBe(403);
    expect(await res.body.text()).toMatch(/Host `evil.example:80` is not allowed.*mcp.allowed_hosts/);
  });
});

describe('MCP-only clients', () => {
  it('with session_tools, seed_session and verify are MCP tools and the whole rollout runs over MCP', async () => {
    const srv = await startTestServer(counter, { config: { ...base, mcp: { enabled: true, session_tools: true } }, listen: true });
    const { client } = await connect(srv.url);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['add', 'reset', 'seed_session', 'verify']);
      expect(tools.find((t) => t.name === 'verify')!.inputSchema.required).toEqual(expect.arrayContaining(['responses_create_params', 'response', 'expected']));
      await client.callTool({ name: 'seed_session', arguments: { start: 100 } });
      await client.callTool({ name: 'add', arguments: { amount: -1 } });
      const v = await client.callTool({ name: 'verify', arguments: verifyBody(99) });
      expect(JSON.parse(text(v)).reward).toBe(1);
    } finally {
      await client.close();
      await srv.close();
    }
  });

  it('without mcp in the config there is no /mcp route; a bad mcp block names the key', async () => {
    const off = await startTestServer(counter, { config: base, listen: true });
    try {
      expect((await fetch(`${off.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(404);
    } finally {
      await off.close();
    }
    await expect(startTestServer(counter, { config: { ...base, mcp: { enabled: true, idle_ttl_s: -1 } } })).rejects.toThrow(/mcp\.idle_ttl_s/);
    await expect(startTestServer(counter, { config: { ...base, mcp: { enabeld: true } } })).rejects.toThrow(/mcp\.\(root\).*enabeld/s);
  });

  it('closing the server ends the open MCP sessions (their SSE streams do not hold the close up)', async () => {
    const srv = await startTestServer(counter, { config: { ...base, mcp: { enabled: true } }, listen: true });
    const { client } = await connect(srv.url);
    await client.listTools();
    const started = Date.now();
    await srv.close();
    expect(Date.now() - started).toBeLessThan(4000);
    await client.close().catch(() => undefined);
  });

  it('an idle MCP session is closed and a late request is told why', async () => {
    // 1 s: longer than any pause between the requests of connect and callTool on a busy machine.
    const srv = await startTestServer(counter, { config: { ...base, mcp: { enabled: true, idle_ttl_s: 1 } }, listen: true });
    const { client, transport } = await connect(srv.url);
    try {
      await client.callTool({ name: 'add', arguments: { amount: 1 } });
      await new Promise((r) => setTimeout(r, 1300));
      const res = await fetch(`${srv.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId! },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }),
      });
      expect(res.status).toBe(404);
      expect(await res.text()).toMatch(/closed: idle too long/);
    } finally {
      await client.close().catch(() => undefined);
      await srv.close();
    }
  });
});

describe('malformed and oversized requests on /mcp', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer(counter, { config: { ...base, mcp: { enabled: true, max_body_bytes: 1024 * 1024 } }, listen: true });
  });
  afterAll(async () => srv.close());

  const post = (body: string | Readable, headers: Record<string, string> = {}) =>
    request(`${srv.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });

  it('a body that is not JSON is a JSON-RPC parse error (-32700), not a FastAPI 422', async () => {
    for (const body of ['{"jsonrpc": "2.0", "id": 1, "method": "initialize"', 'not json', '']) {
      const res = await post(body);
      const json = (await res.body.json()) as { jsonrpc: string; id: null; error: { code: number; message: string } };
      expect(res.statusCode, body).toBe(400);
      expect(json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      expect(json.error.message).toMatch(/^Parse error: the body is (not valid JSON|empty)/);
    }
    const deep = await post(`${'['.repeat(600)}${']'.repeat(600)}`);
    expect(deep.statusCode).toBe(400);
    expect(((await deep.body.json()) as { error: { code: number } }).error.code).toBe(-32600);
    const notRpc = await post('{"hello": "world"}');
    expect(notRpc.statusCode).toBe(400);
    expect((await notRpc.body.json()) as unknown).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request: no Mcp-Session-Id header, and the body is not an initialize request.' } });
    const text = await post('{}', { 'content-type': 'text/plain' });
    expect(text.statusCode).toBe(415);
    expect((await text.body.json()) as unknown).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  it('a 200 MB argument is refused with a JSON-RPC 413 before it is read, with no memory blow-up; the server goes on', async () => {
    const total = 200 * 1024 * 1024;
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    /** A tools/call whose argument is `total` bytes, produced as it is sent (never held whole here). */
    let produced = 0;
    async function* huge(): AsyncGenerator<Buffer> {
      produced = 0;
      yield Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"amount":"');
      for (; produced < total; produced += chunk.length) yield chunk;
      yield Buffer.from('"}}}');
    }
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    try {
      const variants: Record<string, string>[] = [{ 'content-length': String(total + 97) }, {}];
      for (const headers of variants) {
        const t0 = performance.now();
        const res = await post(Readable.from(huge()), headers).catch((err: Error) => err);
        const ms = performance.now() - t0;
        if (res instanceof Error) throw res;
        const json = (await res.body.json()) as { error: { code: number; message: string } };
        console.log(`200 MB body ${headers['content-length'] ? 'with Content-Length' : 'chunked'}: ${res.statusCode} in ${ms.toFixed(0)} ms, ${(produced / 2 ** 20).toFixed(0)} MB of it produced`);
        expect(res.statusCode).toBe(413);
        expect(produced).toBeLessThan(total / 4);
        expect(json.error.code).toBe(-32600);
        expect(json.error.message).toBe(
          'the request body is larger than the limit of 1048576 bytes; send less data per request; the limit of /mcp is mcp.max_body_bytes in the counter config',
        );
      }
    } finally {
      clearInterval(sampler);
    }
    console.log(`RSS before ${(rssBefore / 2 ** 20).toFixed(0)} MB, peak ${(peak / 2 ** 20).toFixed(0)} MB`);
    expect(peak - rssBefore).toBeLessThan(100 * 1024 * 1024);
    // The server still answers MCP.
    const { client } = await connect(srv.url);
    try {
      expect(text(await client.callTool({ name: 'add', arguments: { amount: 2 } }))).toBe('{"total":2}');
    } finally {
      await client.close();
    }
  });
});
