/**
 * Serving a resources server's tools over MCP (Streamable HTTP) at `/mcp` on the server's own
 * port, switched on by `mcp: {enabled: true}` in the instance config.
 *
 * Sessions: one MCP session is one rollout session of this server. The binding is made when the
 * client sends `initialize`: if that request carries this server's session cookie (for example
 * one a harness got from `POST /seed_session`), the MCP session joins that session; otherwise it
 * gets a fresh one. Every MCP answer sets the session cookie, so a harness can also call
 * `/seed_session` and `/verify` over plain HTTP for the same session. With `session_tools: true`
 * those two routes are listed as MCP tools as well, for clients that speak only MCP.
 *
 * A tool call runs the same validation and handler as `POST /<tool>`: the tool's text content is
 * the exact JSON body the HTTP route answers, and an answer with status >= 400 (a 422 for bad
 * arguments, say) is a tool result with `isError: true` holding that same body.
 *
 * Errors on `/mcp` itself are JSON-RPC errors (`{jsonrpc, error: {code, message}, id: null}`), as
 * an MCP client expects, never the FastAPI-shaped 422 of the tool routes: a body that is not JSON
 * is -32700 (parse error, HTTP 400); a body over `mcp.max_body_bytes` is refused with -32600
 * (invalid request, HTTP 413) before it is read in full, so a huge argument cannot drive the
 * server's memory up; a body nested too deep or of another content type is -32600 too.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Server as McpServer } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { errorMessage, HttpError, NgError } from '@nemo-gym/core/errors';
import { SessionStore, type McpMountOptions, type McpServeConfig, type RawJson, type Session } from '@nemo-gym/core/server';

export const MCP_PATH = '/mcp';

interface McpTool {
  name: string;
  description?: string;
  inputSchema: { type: 'object'; [k: string]: unknown };
}

/** The JSON Schema (draft 2020-12) of what a route accepts, as an MCP tool input schema. */
export function toolInputSchema(body: z.ZodType): McpTool['inputSchema'] {
  const schema = z.toJSONSchema(body, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete schema.$schema;
  if (schema.type !== 'object') {
    // MCP requires an object; a route whose body is not described as one accepts any object here.
    return { type: 'object', additionalProperties: true };
  }
  return schema as McpTool['inputSchema'];
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]', '::1'];

function isLoopback(host: string): boolean {
  return LOOPBACK_NAMES.includes(host) || host.startsWith('127.');
}

/** The host name of a Host header (`name:port` or `[v6]:port`). */
function hostName(header: string): string {
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1);
  const colon = header.lastIndexOf(':');
  return colon === -1 ? header : header.slice(0, colon);
}

/** JSON-RPC 2.0 error codes used on /mcp. */
export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_INVALID_REQUEST = -32600;
export const JSONRPC_INTERNAL_ERROR = -32603;
const JSONRPC_SERVER_ERROR = -32000;

function jsonRpcError(reply: FastifyReply, status: number, message: string, code = JSONRPC_SERVER_ERROR): FastifyReply {
  return reply.status(status).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * The JSON-RPC answer for a request /mcp could not take: its body could not be read or parsed
 * (the errors the body parser raises), or the handler failed.
 */
export function mcpRequestError(err: unknown, maxBodyBytes: number, configName: string): { status: number; code: number; message: string } {
  const e = err as { code?: unknown; statusCode?: unknown; message?: unknown };
  if (e?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e?.statusCode === 413) {
    return {
      status: 413,
      code: JSONRPC_INVALID_REQUEST,
      message: `${errorMessage('NG_ERR_BODY_TOO_LARGE', maxBodyBytes)}; the limit of /mcp is mcp.max_body_bytes in the ${configName} config`,
    };
  }
  if (err instanceof HttpError && Array.isArray(err.detail) && (err.detail[0] as { type?: unknown } | undefined)?.type === 'json_invalid') {
    const msg = String((err.detail[0] as { msg?: unknown }).msg ?? 'JSON decode error');
    return { status: 400, code: JSONRPC_PARSE_ERROR, message: `Parse error: the body is not valid JSON (${msg})` };
  }
  if (e?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || e?.statusCode === 415) {
    return { status: 415, code: JSONRPC_INVALID_REQUEST, message: 'Invalid request: send the JSON-RPC message with Content-Type: application/json' };
  }
  if (err instanceof NgError && err.code === 'NG_ERR_BODY_TOO_DEEP') return { status: 400, code: JSONRPC_INVALID_REQUEST, message: `Invalid request: ${err.message}` };
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return { status: e.statusCode, code: JSONRPC_INVALID_REQUEST, message: `Invalid request: ${String(e.message ?? 'bad request')}` };
  }
  return { status: 500, code: JSONRPC_INTERNAL_ERROR, message: `Internal error: ${err instanceof Error ? err.message : String(err)}` };
}

interface LiveSession {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  session: Session;
}

/**
 * Adds `/mcp` to `app`, serving the routes of `options` as MCP tools (the hook the core's
 * defineServer calls when the instance config switches MCP on).
 */
export async function mountMcp<R>(app: FastifyInstance, options: McpMountOptions<R>, mcp: McpServeConfig): Promise<void> {
  const [{ Server }, { StreamableHTTPServerTransport }, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const { className, config, routes, bodyOf, sessions, execute, failure, log } = options;

  const listed = new Map<string, R>();
  for (const [path, r] of routes) {
    const name = path.slice(1);
    if ((name === 'seed_session' || name === 'verify') && !mcp.session_tools) continue;
    listed.set(name, r);
  }
  const tools: McpTool[] = [...listed].map(([name, r]) => {
    const body = bodyOf(r);
    const inputSchema = toolInputSchema(body);
    const description = typeof inputSchema.description === 'string' ? inputSchema.description : undefined;
    return description === undefined ? { name, inputSchema } : { name, description, inputSchema };
  });

  const allowed = mcp.allowed_hosts ?? (isLoopback(String(config.host ?? '127.0.0.1')) ? LOOPBACK_NAMES : null);

  const live = new SessionStore<LiveSession>({
    idleTtlMs: mcp.idle_ttl_s * 1000,
    maxSessions: mcp.max_sessions,
    onDrop: (id, s, reason) => {
      log.info(`MCP session ${id} closed (${reason === 'idle' ? `idle for ${mcp.idle_ttl_s} s` : `more than ${mcp.max_sessions} sessions open`})`);
      void s.transport.close().catch(() => undefined);
    },
  }).startSweeping();

  const openServer = (session: Session): McpServer => {
    const server = new Server({ name: `${className}/${config.name}`, version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(types.ListToolsRequestSchema, () => ({ tools }));
    server.setRequestHandler(types.CallToolRequestSchema, async (request) => {
      const name = request.params.name;
      const r = listed.get(name);
      if (r === undefined) {
        return { isError: true, content: [{ type: 'text' as const, text: `Unknown tool \`${name}\`; this server offers: ${[...listed.keys()].join(', ')}.` }] };
      }
      const call: Session = { id: session.id, cookies: session.cookies, extra: null };
      let out: RawJson;
      try {
        out = await execute(r, request.params.arguments ?? {}, call);
      } catch (err) {
        out = failure(err, 'MCP tools/call', name);
      }
      return { isError: out.status >= 400, content: [{ type: 'text' as const, text: out.text }] };
    });
    return server;
  };

  const handle = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const host = request.headers.host;
    if (allowed !== null && (host === undefined || !allowed.includes(hostName(host)))) {
      return jsonRpcError(reply, 403, `Host \`${host ?? ''}\` is not allowed on ${MCP_PATH}; add it to mcp.allowed_hosts in the ${config.name} config.`);
    }
    const header = request.headers['mcp-session-id'];
    const mcpSessionId = Array.isArray(header) ? header[0] : header;
    let entry: LiveSession | undefined;
    if (mcpSessionId !== undefined) {
      entry = live.get(mcpSessionId);
      if (entry === undefined) {
        const why = live.droppedReason(mcpSessionId);
        return jsonRpcError(reply, 404, `MCP session not found${why ? ` (closed: ${why === 'idle' ? 'idle too long' : 'too many open sessions'})` : ''}; send initialize again.`);
      }
    } else if (request.method === 'POST' && !/^application\/json\s*(;|$)/i.test(String(request.headers['content-type'] ?? ''))) {
      return jsonRpcError(reply, 415, 'Invalid request: send the JSON-RPC message with Content-Type: application/json', JSONRPC_INVALID_REQUEST);
    } else if (request.method === 'POST' && (request.body === undefined || request.body === null)) {
      return jsonRpcError(reply, 400, 'Parse error: the body is empty; send a JSON-RPC message', JSONRPC_PARSE_ERROR);
    } else if (request.method === 'POST' && types.isInitializeRequest(request.body)) {
      const session = (request as unknown as { ngSession: Session }).ngSession;
      const server = openServer(session);
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => live.set(id, { transport, server, session }),
      });
      transport.onclose = () => {
        // A session closed by its client is forgotten; one dropped as idle keeps its reason.
        if (transport.sessionId !== undefined && live.has(transport.sessionId)) live.delete(transport.sessionId);
      };
      await server.connect(transport);
      entry = { transport, server, session };
    } else {
      return jsonRpcError(reply, 400, `Invalid request: no Mcp-Session-Id header, and the body is not an initialize request.`, JSONRPC_INVALID_REQUEST);
    }
    reply.hijack();
    reply.raw.setHeader('set-cookie', sessions.setCookieValues(entry.session));
    await entry.transport.handleRequest(request.raw, reply.raw, request.body);
    return undefined;
  };

  // JSON-RPC errors, not the tool routes' FastAPI shape, for what the body parser or the handler raise.
  const route = {
    bodyLimit: mcp.max_body_bytes,
    errorHandler: (err: unknown, request: FastifyRequest, reply: FastifyReply) => {
      const out = mcpRequestError(err, mcp.max_body_bytes, config.name);
      if (out.status >= 500) log.error(`${request.method} ${MCP_PATH} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      // A refused body is not read to its end: the connection is closed after the answer.
      if (out.status === 413) void reply.header('connection', 'close');
      return jsonRpcError(reply, out.status, out.message, out.code);
    },
  };
  app.post(MCP_PATH, route, handle);
  app.get(MCP_PATH, route, handle);
  app.delete(MCP_PATH, route, handle);
  // Before the listener closes: an open SSE stream would otherwise hold the close up.
  app.addHook('preClose', async () => {
    await Promise.all(live.close().map((s) => s.transport.close().catch(() => undefined)));
  });
}
