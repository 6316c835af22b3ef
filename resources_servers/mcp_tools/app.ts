/**
 * mcp_tools: an environment whose tools are the tools of configured MCP servers (a stdio command
 * or a Streamable HTTP URL). `POST /<tool>` runs the MCP tool in this rollout's own MCP session
 * (one per rollout session: a process of its own for a stdio server); `GET /tools` lists the
 * tools in the Responses API function tool format, for task rows. Verify is chosen by config: a
 * reward from an MCP tool's result, an LLM judge, or a JavaScript module.
 *
 * A server that is lost mid-rollout (its process exited, its endpoint went away) fails that
 * rollout: the model sees the error, and verify answers 502 so the rollout is recorded as
 * failed rather than scored. The next rollout starts a fresh process / session.
 */
import { HttpError, ConfigError } from '@nemo-gym/core/errors';
import { collectSecretValues } from '@nemo-gym/core/config';
import { BaseSeedSessionRequestSchema, BaseVerifyRequestSchema, defineResourcesServer, requestSessionId, SessionStore, startIfMain } from '@nemo-gym/core/server';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { McpToolsConfigSchema, type McpToolsConfig } from './src/config.js';
import { capOutput, openConnection, type CallOutcome, type Connection, type ConnectOptions } from './src/connection.js';
import { makeVerifier, UnknownMcpServerError, type Verifier } from './src/verify.js';

/** Names the Responses API accepts for a function tool. */
const TOOL_NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;
const RESERVED = new Set(['seed_session', 'verify', 'tools', 'mcp']);

export interface OfferedTool {
  server: string;
  /** The tool's name on its MCP server. */
  mcpName: string;
  /** The Responses API function tool the model is offered. */
  definition: { type: 'function'; name: string; description: string | null; parameters: Record<string, unknown>; strict: false };
}

/** The MCP sessions of one rollout, opened on first use. */
class RolloutSession {
  private readonly opening = new Map<string, Promise<Connection>>();
  private readonly open: Connection[] = [];
  /** Why this rollout cannot be scored (a server could not start, or was lost), or null. */
  failure: string | null = null;
  /** Calls in flight (a busy rollout is never closed as idle). */
  busy = 0;

  constructor(private readonly opener: (server: string) => Promise<Connection>) {}

  async connection(server: string): Promise<Connection> {
    let p = this.opening.get(server);
    if (p !== undefined) {
      const c = await p;
      // A server stopped after a timed-out call: this call starts a new one.
      if (c.retired === null) return c;
      if (this.opening.get(server) === p) this.forget(server, c);
      p = this.opening.get(server);
    }
    if (p === undefined) {
      p = this.opener(server).then((c) => (this.open.push(c), c));
      this.opening.set(server, p);
    }
    return p;
  }

  private forget(server: string, c: Connection): void {
    this.opening.delete(server);
    const i = this.open.indexOf(c);
    if (i !== -1) this.open.splice(i, 1);
    void c.close();
  }

  /** The first lost connection's reason, if any (a server stopped after a timeout is not lost). */
  lost(): string | null {
    return this.failure ?? this.open.find((c) => c.lost !== null && c.retired === null)?.lost ?? null;
  }

  async close(): Promise<void> {
    const pending = [...this.opening.values()];
    this.opening.clear();
    await Promise.all(pending.map((p) => p.then((c) => c.close(), () => undefined)));
  }
}

interface State {
  tools: Map<string, OfferedTool>;
  sessions: SessionStore<RolloutSession>;
  verifier: Verifier;
  connectOptions: ConnectOptions;
}

/** Every value the MCP server configs hold under env and headers (never shown in errors). */
function secretValues(config: McpToolsConfig): string[] {
  const out = collectSecretValues(config.mcp_servers);
  for (const s of Object.values(config.mcp_servers)) {
    for (const v of Object.values('command' in s ? s.env : s.headers)) out.add(v);
  }
  return [...out];
}

function offer(server: string, prefix: string, tool: Tool): OfferedTool {
  const parameters: Record<string, unknown> = { ...(tool.inputSchema as Record<string, unknown>) };
  delete parameters.$schema;
  return { server, mcpName: tool.name, definition: { type: 'function', name: `${prefix}${tool.name}`, description: tool.description ?? null, parameters, strict: false } };
}

/** Connects to every configured server once, and builds the table of offered tools. */
async function discover(config: McpToolsConfig, options: ConnectOptions): Promise<{ tools: Map<string, OfferedTool>; all: Map<string, Tool[]> }> {
  const tools = new Map<string, OfferedTool>();
  const all = new Map<string, Tool[]>();
  for (const [name, cfg] of Object.entries(config.mcp_servers)) {
    let listed: Tool[];
    const conn = await openConnection(name, cfg, options).catch((err: Error) => {
      throw new ConfigError(`${config.name}: ${err.message}. Check mcp_servers.${name} in the config.`);
    });
    try {
      listed = await conn.listTools(options.connectTimeoutMs);
    } catch (err) {
      throw new ConfigError(`${config.name}: MCP server \`${name}\` did not list its tools: ${conn.lost ?? (err as Error).message}. Check mcp_servers.${name} in the config.`);
    } finally {
      await conn.close();
    }
    all.set(name, listed);
    const byName = new Map(listed.map((t) => [t.name, t]));
    const chosen = cfg.include ?? listed.map((t) => t.name);
    for (const mcpName of chosen) {
      const tool = byName.get(mcpName);
      if (!tool) throw new ConfigError(`${config.name}: mcp_servers.${name}.include names \`${mcpName}\`, which that server does not offer; it offers: ${[...byName.keys()].join(', ')}`);
      const o = offer(name, cfg.prefix, tool);
      const exposed = o.definition.name;
      if (!TOOL_NAME_RE.test(exposed) || RESERVED.has(exposed)) {
        throw new ConfigError(`${config.name}: tool \`${exposed}\` of MCP server \`${name}\` cannot be offered under that name (letters, digits, _ and - only, at most 64, not ${[...RESERVED].join('/')}); set mcp_servers.${name}.prefix or leave it out with include`);
      }
      const clash = tools.get(exposed);
      if (clash) throw new ConfigError(`${config.name}: tool \`${exposed}\` is offered by both \`${clash.server}\` and \`${name}\`; set mcp_servers.<name>.prefix on one of them`);
      tools.set(exposed, o);
    }
  }
  const v = config.verify;
  if (v.type === 'mcp_tool') {
    const listed = all.get(v.server);
    if (!listed) throw new ConfigError(`${config.name}: verify.server \`${v.server}\` is not one of mcp_servers (${Object.keys(config.mcp_servers).join(', ')})`);
    if (!listed.some((t) => t.name === v.tool)) throw new ConfigError(`${config.name}: verify.tool \`${v.tool}\` is not offered by MCP server \`${v.server}\`; it offers: ${listed.map((t) => t.name).join(', ')}`);
  }
  return { tools, all };
}

/** The HTTP answer for a tool call's outcome (what the model sees as the tool output). */
function answer(outcome: CallOutcome, maxChars: number): { status: number; body: Record<string, string> } {
  if (outcome.kind === 'timeout') return { status: 504, body: { error: outcome.message } };
  if (outcome.kind === 'lost') return { status: 502, body: { error: `${outcome.message}. This rollout cannot be scored.` } };
  const text = capOutput(outcome.text, maxChars);
  return { status: 200, body: outcome.isError ? { error: text } : { output: text } };
}

export const server = defineResourcesServer({
  className: 'McpToolsResourcesServer',
  configSchema: McpToolsConfigSchema,
  setup: async ({ config, client, log }): Promise<State> => {
    const connectOptions: ConnectOptions = {
      connectTimeoutMs: config.connect_timeout_s * 1000,
      maxMessageBytes: config.max_message_bytes,
      maxNoiseBytes: config.max_stdout_noise_bytes,
      closeGraceMs: config.close_grace_s * 1000,
      secrets: secretValues(config),
    };
    const verifier = await makeVerifier(config.verify, client, Object.keys(config.mcp_servers));
    const { tools } = await discover(config, connectOptions);
    log.info(`offering ${tools.size} tool(s) from ${Object.keys(config.mcp_servers).length} MCP server(s): ${[...tools.keys()].join(', ')}`);
    const sessions = new SessionStore<RolloutSession>({
      idleTtlMs: config.session_idle_ttl_s * 1000,
      maxSessions: config.max_sessions,
      isBusy: (s) => s.busy > 0,
      onDrop: (_id, s) => void s.close(),
      what: 'The MCP session of this rollout',
    }).startSweeping(30_000);
    return { tools, sessions, verifier, connectOptions };
  },
  seedSession: {
    body: BaseSeedSessionRequestSchema.loose(),
    handler: (_body, ctx) => {
      void ctx.state.sessions.take(ctx.sessionId)?.close();
      ctx.state.sessions.set(ctx.sessionId, newRollout(ctx.config, ctx.state));
      return {};
    },
  },
  verify: {
    body: BaseVerifyRequestSchema.loose(),
    handler: async (body, ctx) => {
      const { sessions, verifier } = ctx.state;
      sessions.assertNotDropped(ctx.sessionId);
      const rollout = sessions.get(ctx.sessionId) ?? newRollout(ctx.config, ctx.state);
      try {
        const before = rollout.lost();
        if (before) throw new HttpError(502, `${before}. The rollout is not scored; it runs again on resume.`);
        const call = (server: string, tool: string, args: Record<string, unknown>) => callIn(rollout, server, tool, args, ctx.config.tool_timeout_s * 1000);
        const { reward, extra } = await verifier.score(body as Record<string, unknown>, call, ctx.signal);
        return { ...body, ...extra, reward };
      } finally {
        sessions.delete(ctx.sessionId);
        await rollout.close();
      }
    },
  },
  routes: (app, { config, state }) => {
    app.get('/tools', async () => ({ tools: [...state.tools.values()].map((t) => t.definition) }));
    app.post('/:tool', async (request, reply) => {
      const name = (request.params as { tool: string }).tool;
      const tool = state.tools.get(name);
      if (!tool) throw new HttpError(404, `Unknown tool \`${name}\`. The tools are: ${[...state.tools.keys()].join(', ')}.`);
      const args = request.body ?? {};
      if (args === null || typeof args !== 'object' || Array.isArray(args)) throw new HttpError(422, `The arguments of \`${name}\` must be a JSON object.`);
      const id = requestSessionId(request);
      state.sessions.assertNotDropped(id);
      let rollout = state.sessions.get(id);
      if (rollout === undefined) {
        rollout = newRollout(config, state);
        state.sessions.set(id, rollout);
      }
      const out = answer(await callIn(rollout, tool.server, tool.mcpName, args as Record<string, unknown>, config.tool_timeout_s * 1000), config.max_output_chars);
      state.sessions.get(id); // the idle clock starts when the call ends
      return reply.status(out.status).send(out.body);
    });
  },
  close: async ({ state }) => {
    await Promise.all(state.sessions.close().map((s) => s.close()));
  },
});

function newRollout(config: McpToolsConfig, state: State): RolloutSession {
  return new RolloutSession(async (name) => {
    // Names come from the tool table and the verify config, but a verify module may name any server.
    if (!Object.hasOwn(config.mcp_servers, name)) throw new UnknownMcpServerError(name, Object.keys(config.mcp_servers));
    return openConnection(name, config.mcp_servers[name]!, state.connectOptions);
  });
}

/** A tool call in a rollout's session; a server that cannot start or is lost marks the rollout failed. */
async function callIn(rollout: RolloutSession, server: string, tool: string, args: Record<string, unknown>, timeoutMs: number): Promise<CallOutcome> {
  if (rollout.failure) return { kind: 'lost', message: rollout.failure };
  rollout.busy++;
  try {
    let conn: Connection;
    try {
      conn = await rollout.connection(server);
    } catch (err) {
      if (err instanceof UnknownMcpServerError) throw err;
      rollout.failure = (err as Error).message;
      return { kind: 'lost', message: rollout.failure };
    }
    const out = await conn.callTool(tool, args, timeoutMs);
    if (out.kind === 'lost') rollout.failure ??= out.message;
    return out;
  } finally {
    rollout.busy--;
  }
}

startIfMain(import.meta.url, server);
