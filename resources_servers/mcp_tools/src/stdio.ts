/**
 * The client side of MCP's stdio transport, with bounds: a replacement for the SDK's
 * StdioClientTransport, whose reader copies its whole buffer on every chunk, rescans it for a
 * line break, and has no answer for output that is not MCP but a thrown error.
 *
 * - stdout is read chunk by chunk; each chunk is scanned once for line breaks and a partial line
 *   is kept as a list of chunks (joined once, when the line ends), so reading costs time in
 *   proportion to the bytes read, never to the bytes buffered;
 * - a line longer than `maxMessageBytes` is not kept: its first and last few hundred bytes are,
 *   the rest is counted and dropped. When it ends, a JSON-RPC answer is named by its `id` and that
 *   request is answered with an error saying how large the message was (other requests, and the
 *   session, go on);
 * - output that is not an MCP message (a log line on stdout, a banner, a flood) is counted and
 *   dropped, and past the first 16 KiB reading pauses 10 ms after each chunk that held some (a
 *   flooding server then waits on its full pipe); beyond `maxNoiseBytes` the server is taken as broken: it is stopped
 *   and the session closes with a reason naming the output;
 * - the server runs in a process group of its own, so `kill()` stops whatever it started too
 *   (`npx` wrappers, shells, workers); groups still alive when this process exits are killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { McpServerError } from './errors.js';

/** JSON-RPC error code this transport answers an over-size message with (implementation-defined range, clear of the SDK's own -32000, -32001, -32042). */
export const MESSAGE_TOO_LARGE_CODE = -32010;
/** `error.data.reason` of that answer, so a caller can tell it from a server's own errors. */
export const MESSAGE_TOO_LARGE = 'message_too_large';

/** How much of the start and the end of an over-size line is kept (to find its `id`). */
const EDGE_BYTES = 512;
/** Output that is not MCP read at full speed (a few stray log lines are not slowed down). */
const NOISE_FREE_BYTES = 16 * 1024;
/** How long reading pauses after a chunk that held output that is not MCP, past NOISE_FREE_BYTES. */
const NOISE_PAUSE_MS = 10;
/** How much of the first line that is not MCP is kept for the error text. */
const SAMPLE_CHARS = 200;

export interface BoundedStdioOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Largest single message, in bytes. */
  maxMessageBytes: number;
  /** Output that is not MCP, in bytes, tolerated before the server is stopped. */
  maxNoiseBytes: number;
}

/** Process groups started here and not yet gone (killed if this process exits first). */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
  });
}

/** The `id` of a JSON-RPC message from the first and last bytes of its line, or undefined. */
export function idFromEdges(head: string, tail: string): RequestId | undefined {
  const value = (m: RegExpMatchArray | null): RequestId | undefined => {
    if (m === null) return undefined;
    const raw = m[1]!;
    if (raw.startsWith('"')) {
      try {
        return JSON.parse(raw) as string;
      } catch {
        return undefined;
      }
    }
    return Number(raw);
  };
  // Servers write `id` last (the TypeScript SDK: {result, jsonrpc, id}) or first (Python: {jsonrpc, id, result}).
  return (
    value(tail.match(/"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/)) ??
    value(head.match(/^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/))
  );
}

/** A line that starts like a JSON object, so possibly a message (rather than like a log line). */
function looksLikeJsonRpc(head: string): boolean {
  return /^\s*\{\s*"/.test(head);
}

export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /** Why the transport ended on its own (the server broke the protocol), or null. */
  failure: string | null = null;
  /** The server's stderr (always piped; read it or it is discarded). */
  readonly stderr = new PassThrough();

  private child: ChildProcess | null = null;
  private closed = false;
  /** Requests sent and not answered yet (an over-size answer without a readable `id` goes to them). */
  private readonly pending = new Set<RequestId>();

  // The line being read.
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** The line does not start like a message: it is counted, not kept. */
  private noiseLine = false;
  /** The line is over the limit: only its edges are kept. */
  private overflow = false;
  private overflowBytes = 0;
  private head = '';
  private tail = Buffer.alloc(0);

  /** Bytes of output that were not MCP messages, and the first such line. */
  noiseBytes = 0;
  private noiseSample: string | null = null;

  constructor(private readonly options: BoundedStdioOptions) {}

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  async start(): Promise<void> {
    if (this.child !== null) throw new McpServerError('the stdio transport of this MCP server was started twice');
    installExitHook();
    const child = spawn(this.options.command, this.options.args, {
      env: { ...getDefaultEnvironment(), ...this.options.env },
      cwd: this.options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      // A process group of its own: kill() stops the server and everything it started.
      detached: true,
      shell: false,
    });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      // `on`, not `once`: a child process may emit 'error' more than once, and an unheard one would throw.
      child.on('error', (err) => {
        this.ended();
        reject(err);
        this.onerror?.(err);
      });
      child.once('spawn', () => {
        if (child.pid !== undefined) liveGroups.add(child.pid);
        resolve();
      });
    });
    child.once('close', () => this.ended());
    child.stdin!.on('error', (err) => this.onerror?.(err));
    child.stdout!.on('error', (err) => this.onerror?.(err));
    child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
    child.stderr!.pipe(this.stderr);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed) throw new McpServerError('the MCP server process is not running (not connected)');
    if ('method' in message && 'id' in message) this.pending.add(message.id);
    const json = `${JSON.stringify(message)}\n`;
    if (!stdin.write(json)) {
      // A server that stopped reading: wait for room, or for its end (then the session closes).
      await new Promise<void>((resolve) => {
        const done = () => {
          stdin.off('drain', done);
          stdin.off('close', done);
          resolve();
        };
        stdin.once('drain', done);
        stdin.once('close', done);
      });
    }
  }

  /** Ends the session: stdin closed, then the whole process group stopped if it has not exited within `graceMs`. */
  async close(graceMs = 2000): Promise<void> {
    const child = this.child;
    if (child === null || this.closed) return;
    const exited = new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('close', () => resolve())));
    try {
      child.stdin?.end();
    } catch {
      // already closed
    }
    const timer = setTimeout(() => this.kill('SIGTERM'), graceMs);
    const hard = setTimeout(() => this.kill('SIGKILL'), graceMs + 2000);
    await exited;
    clearTimeout(timer);
    clearTimeout(hard);
    // Whatever the server left running in its group goes with it.
    if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
  }

  /** Stops the server and everything in its process group at once. */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    killGroup(pid, signal);
  }

  /** The server is stopped because of what it wrote: the reason is kept and the session closes. */
  private fail(reason: string): void {
    if (this.failure !== null) return;
    this.failure = reason;
    this.child?.stdout?.removeAllListeners('data');
    this.child?.stdout?.resume();
    this.kill('SIGKILL');
  }

  private ended(): void {
    if (this.closed) return;
    this.closed = true;
    const pid = this.child?.pid;
    if (pid !== undefined) {
      liveGroups.delete(pid);
      killGroup(pid, 'SIGKILL');
    }
    this.parts = [];
    this.onclose?.();
  }

  /** One chunk of stdout: scanned once for line breaks. */
  private read(chunk: Buffer): void {
    const noiseBefore = this.noiseBytes;
    this.scan(chunk);
    // Output that is not MCP is read slowly: a flooding server waits on its full pipe instead of
    // spinning, and this process spends at most a chunk per pause on it.
    const stdout = this.child?.stdout;
    if (this.noiseBytes > noiseBefore && this.noiseBytes > NOISE_FREE_BYTES && this.failure === null && stdout && !stdout.isPaused()) {
      stdout.pause();
      setTimeout(() => {
        if (this.failure === null) stdout.resume();
      }, NOISE_PAUSE_MS);
    }
  }

  private scan(chunk: Buffer): void {
    let start = 0;
    while (this.failure === null) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      if (end > start) this.take(chunk.subarray(start, end));
      if (nl === -1) break;
      this.lineEnd();
      start = nl + 1;
    }
  }

  /** A piece of the current line. */
  private take(piece: Buffer): void {
    if (this.noiseLine) {
      this.noise(piece.length, '');
      return;
    }
    if (!this.overflow) {
      if (this.partBytes === 0) {
        // A line that does not start with `{` is not a message: counted as it streams, never kept.
        let i = 0;
        while (i < piece.length && (piece[i] === 32 || piece[i] === 9 || piece[i] === 13)) i++;
        if (i < piece.length && piece[i] !== 123 /* { */) {
          this.noiseLine = true;
          this.noise(piece.length, piece.subarray(0, SAMPLE_CHARS * 2).toString('utf8'));
          return;
        }
      }
      if (this.partBytes + piece.length <= this.options.maxMessageBytes) {
        this.parts.push(piece);
        this.partBytes += piece.length;
        return;
      }
      // Over the limit: keep the edges only.
      this.head = Buffer.concat([...this.parts, piece.subarray(0, EDGE_BYTES)]).subarray(0, EDGE_BYTES).toString('utf8');
      this.overflow = true;
      this.overflowBytes = this.partBytes;
      this.parts = [];
      this.partBytes = 0;
      if (!looksLikeJsonRpc(this.head)) this.noise(this.overflowBytes, this.head);
    }
    this.overflowBytes += piece.length;
    this.tail = piece.length >= EDGE_BYTES ? Buffer.from(piece.subarray(piece.length - EDGE_BYTES)) : Buffer.concat([this.tail, piece]).subarray(-EDGE_BYTES);
    if (!looksLikeJsonRpc(this.head)) this.noise(piece.length, this.head);
    else if (this.overflowBytes > this.options.maxMessageBytes * 8) {
      this.fail(`wrote a message of more than ${this.overflowBytes} bytes without end (max_message_bytes is ${this.options.maxMessageBytes})`);
    }
  }

  private lineEnd(): void {
    if (this.noiseLine) {
      this.noiseLine = false;
      return;
    }
    if (this.overflow) {
      const bytes = this.overflowBytes;
      const head = this.head;
      const tail = this.tail.toString('utf8');
      this.overflow = false;
      this.overflowBytes = 0;
      this.head = '';
      this.tail = Buffer.alloc(0);
      if (!looksLikeJsonRpc(head)) return; // counted as it streamed
      // `jsonrpc` is written first or last: a JSON line without it anywhere near its edges is not a message.
      if (head.includes('"jsonrpc"') || tail.includes('"jsonrpc"')) this.oversize(bytes, idFromEdges(head, tail));
      else this.noise(bytes, head);
      return;
    }
    if (this.partBytes === 0) return;
    const buf = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.partBytes);
    this.parts = [];
    this.partBytes = 0;
    // Cheap test first: a line that cannot be JSON is not parsed.
    let i = 0;
    while (i < buf.length && (buf[i] === 32 || buf[i] === 9 || buf[i] === 13)) i++;
    if (i === buf.length) return;
    if (buf[i] !== 123 /* { */) {
      this.noise(buf.length, buf.subarray(0, SAMPLE_CHARS * 2).toString('utf8'));
      return;
    }
    const line = buf.toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      json = undefined;
    }
    const parsed = json === undefined ? null : JSONRPCMessageSchema.safeParse(json);
    if (parsed === null || !parsed.success) {
      this.noise(buf.length, line.slice(0, SAMPLE_CHARS * 2));
      return;
    }
    const message = parsed.data;
    if (('result' in message || 'error' in message) && 'id' in message && message.id !== undefined) this.pending.delete(message.id);
    this.onmessage?.(message);
  }

  /** Output that is not an MCP message. */
  private noise(bytes: number, sample: string): void {
    this.noiseBytes += bytes;
    this.noiseSample ??= sample.replace(/\s+/g, ' ').trim().slice(0, SAMPLE_CHARS);
    if (this.noiseBytes > this.options.maxNoiseBytes) {
      this.fail(
        `wrote ${this.noiseBytes} bytes to stdout that are not MCP messages (the first: \`${this.noiseSample}\`), more than max_stdout_noise_bytes (${this.options.maxNoiseBytes}); ` +
          'an MCP stdio server must write only JSON-RPC messages to stdout (logs go to stderr), so it was stopped',
      );
    }
  }

  /** A message over the limit was dropped: its request (or, not knowing which, every pending one) is answered with an error. */
  private oversize(bytes: number, id: RequestId | undefined): void {
    const ids = id !== undefined && this.pending.has(id) ? [id] : [...this.pending];
    if (ids.length === 0) {
      this.onerror?.(new McpServerError(`dropped a message of ${bytes} bytes, more than max_message_bytes (${this.options.maxMessageBytes}), that answered no pending request`));
      return;
    }
    for (const target of ids) {
      this.pending.delete(target);
      this.onmessage?.({
        jsonrpc: '2.0',
        id: target,
        error: {
          code: MESSAGE_TOO_LARGE_CODE,
          message: `the answer was ${bytes} bytes, more than max_message_bytes (${this.options.maxMessageBytes}); it was dropped`,
          data: { reason: MESSAGE_TOO_LARGE, bytes, limit: this.options.maxMessageBytes },
        },
      });
    }
  }
}
