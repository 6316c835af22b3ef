/**
 * One MCP client session to one configured server: a stdio child process of its own (read by the
 * bounded reader of stdio.ts), or an MCP session on a Streamable HTTP endpoint. Knows whether it
 * was lost (process exited, endpoint gone, protocol broken) as opposed to closed by us, and turns
 * tool results into the text the model sees. A stdio server whose call times out is stopped at
 * once with its process group; the rollout's next call to it starts a fresh process.
 */
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { redactSecrets, repoRoot } from '@nemo-gym/core/config';
import { McpServerError } from './errors.js';
import type { McpServerConfig } from './config.js';
import { BoundedStdioTransport, MESSAGE_TOO_LARGE } from './stdio.js';

const CLIENT_INFO = { name: 'nemo-gym-mcp_tools', version: '0.1.0' };
/** How much of a stdio server's stderr is kept for error messages. */
const STDERR_TAIL_CHARS = 2000;

export interface ConnectOptions {
  connectTimeoutMs: number;
  maxMessageBytes: number;
  /** Bytes a stdio server may write to stdout that are not MCP messages before it is stopped. */
  maxNoiseBytes: number;
  /** How long a stdio server may take to exit after its stdin is closed before it gets SIGTERM. */
  closeGraceMs: number;
  /** Values never to show in an error text (env values, header values, …). */
  secrets: string[];
}

/** What a tool call gave: the text for the model, or why it could not run. */
export type CallOutcome =
  | { kind: 'result'; text: string; isError: boolean; structured: unknown }
  | { kind: 'timeout'; message: string }
  | { kind: 'lost'; message: string };

export class Connection {
  /** Why the connection ended without our asking, or null. */
  lost: string | null = null;
  /** Why this stdio server was stopped by us mid-rollout (a call timed out), or null: the next call starts a new one. */
  retired: string | null = null;
  private closing = false;

  constructor(
    readonly server: string,
    private readonly client: Client,
    private readonly label: string,
    private readonly stderrTail: () => string,
    private readonly secrets: string[],
    /** The stdio transport (null for HTTP): stops the server, and says why it ended on its own. */
    private readonly stdio: BoundedStdioTransport | null,
    private readonly graceMs: number,
  ) {
    client.onclose = () => {
      if (!this.closing) this.markLost(this.stdio?.failure ?? 'closed the connection');
    };
  }

  /** The pid of a stdio server, or null. */
  get pid(): number | null {
    return this.stdio?.pid ?? null;
  }

  private markLost(what: string): void {
    if (this.lost !== null) return;
    const tail = this.stderrTail().trim();
    this.lost = redactSecrets(`MCP server ${this.label} ${what} during this rollout${tail ? `; its last stderr output: ${tail}` : ''}`, this.secrets);
  }

  async listTools(timeoutMs: number): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  }

  async callTool(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CallOutcome> {
    if (this.lost !== null) return { kind: 'lost', message: this.lost };
    try {
      const r = await this.client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs });
      return { kind: 'result', text: resultText(r.content, r.structuredContent), isError: r.isError === true, structured: r.structuredContent };
    } catch (err) {
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
        const message = `MCP tool \`${name}\` on server \`${this.server}\` did not answer within ${timeoutMs / 1000} s; the call was cancelled`;
        if (this.stdio === null) return { kind: 'timeout', message: `${message}.` };
        // The process may be busy for good (a loop, a flood): stopped now, with its process group.
        this.retire(`it was stopped after tool \`${name}\` timed out`);
        return { kind: 'timeout', message: `${message} and the server process stopped; a later call starts it afresh, without the state of earlier calls.` };
      }
      if (this.retired !== null) {
        return { kind: 'result', text: `MCP server \`${this.server}\` did not answer tool \`${name}\`: ${this.retired}. Call the tool again to start the server afresh.`, isError: true, structured: undefined };
      }
      const data = err instanceof McpError ? (err.data as { reason?: unknown; bytes?: unknown; limit?: unknown } | undefined) : undefined;
      if (data?.reason === MESSAGE_TOO_LARGE) {
        const text = `MCP tool \`${name}\` on server \`${this.server}\` answered with a message of ${String(data.bytes)} bytes, more than max_message_bytes (${String(data.limit)}); the answer was dropped. Ask for less output at once (a smaller range, a page), or raise max_message_bytes in the mcp_tools config.`;
        return { kind: 'result', text, isError: true, structured: undefined };
      }
      if (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed) {
        // The server answered with a JSON-RPC error (unknown tool, invalid params, …): the model sees it.
        return { kind: 'result', text: redactSecrets(err.message, this.secrets), isError: true, structured: undefined };
      }
      this.markLost(this.stdio?.failure ?? (err instanceof McpError ? 'closed the connection' : `failed (${(err as Error).message})`));
      return { kind: 'lost', message: this.lost! };
    }
  }

  /** Stops a stdio server at once (with everything in its process group); the rollout's next call starts a new one. */
  retire(why: string): void {
    if (this.stdio === null || this.retired !== null) return;
    this.retired = why;
    this.closing = true;
    this.stdio.kill('SIGKILL');
    void this.client.close().catch(() => undefined);
  }

  /**
   * Ends the session. A stdio server gets its stdin closed, then SIGTERM after the grace period
   * and SIGKILL after that, to its whole process group, so a server that ignores end-of-input
   * does not hold verify up.
   */
  async close(): Promise<void> {
    this.closing = true;
    if (this.stdio !== null) await this.stdio.close(this.graceMs);
    await this.client.close().catch(() => undefined);
  }
}

/** The text a tool result shows the model: text parts as they are, other parts named briefly. */
export function resultText(content: unknown, structured: unknown): string {
  const parts: string[] = [];
  for (const c of Array.isArray(content) ? (content as Record<string, unknown>[]) : []) {
    if (c === null || typeof c !== 'object') continue;
    if (c.type === 'text') parts.push(String(c.text ?? ''));
    else if (c.type === 'image' || c.type === 'audio') parts.push(`[${c.type} ${String(c.mimeType ?? '')}, ${Math.floor((String(c.data ?? '').length * 3) / 4)} bytes, not shown]`);
    else if (c.type === 'resource') {
      const r = (c.resource ?? {}) as Record<string, unknown>;
      parts.push(typeof r.text === 'string' ? r.text : `[resource ${String(r.uri ?? '')} (${String(r.mimeType ?? 'binary')}), not shown]`);
    } else if (c.type === 'resource_link') parts.push(`[resource link: ${String(c.uri ?? '')}${c.name ? ` (${String(c.name)})` : ''}]`);
    else parts.push(`[${String(c.type)} content, not shown]`);
  }
  if (parts.length === 0 && structured !== undefined) return JSON.stringify(structured);
  return parts.join('\n');
}

/** `text` cut to `max` characters, with a note saying how much was cut. */
export function capOutput(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[output cut: ${text.length - max} more characters; the limit is ${max}]`;
}

function describeConfig(name: string, cfg: McpServerConfig, pid?: number | null): string {
  if (!('command' in cfg)) return `\`${name}\` (${cfg.url})`;
  return `\`${name}\` (\`${[cfg.command, ...cfg.args].join(' ')}\`${pid ? `, pid ${pid}` : ''})`;
}

/** Starts (stdio) or opens (HTTP) one MCP session and completes the handshake. */
export async function openConnection(name: string, cfg: McpServerConfig, options: ConnectOptions): Promise<Connection> {
  const client = new Client(CLIENT_INFO);
  let tail = '';
  let transport: BoundedStdioTransport | StreamableHTTPClientTransport;
  if ('command' in cfg) {
    const stdio = new BoundedStdioTransport({
      command: cfg.command,
      args: cfg.args,
      env: cfg.env,
      cwd: resolve(repoRoot(), cfg.cwd ?? '.'),
      maxMessageBytes: options.maxMessageBytes,
      maxNoiseBytes: options.maxNoiseBytes,
    });
    // Always drained (a full pipe would block the server); only the tail is kept.
    stdio.stderr.on('data', (d: Buffer) => {
      tail = (tail + d.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    transport = stdio;
  } else {
    transport = new StreamableHTTPClientTransport(new URL(cfg.url), { requestInit: { headers: cfg.headers } });
  }
  try {
    await client.connect(transport, { timeout: options.connectTimeoutMs });
  } catch (err) {
    if (transport instanceof BoundedStdioTransport) transport.kill('SIGKILL');
    await client.close().catch(() => undefined);
    const why =
      transport instanceof BoundedStdioTransport && transport.failure !== null
        ? transport.failure
        : err instanceof McpError && err.code === ErrorCode.RequestTimeout
          ? `no answer to initialize within ${options.connectTimeoutMs / 1000} s`
          : (err as Error).message;
    const stderr = tail.trim();
    throw new McpServerError(redactSecrets(`could not start MCP server ${describeConfig(name, cfg)}: ${why}${stderr ? `; its stderr: ${stderr}` : ''}`, options.secrets));
  }
  const stdio = transport instanceof BoundedStdioTransport ? transport : null;
  return new Connection(name, client, describeConfig(name, cfg, stdio?.pid), () => tail, options.secrets, stdio, options.closeGraceMs);
}
