/**
 * A scripted model server for running harness CLIs offline: a real HTTP server on 127.0.0.1
 * that speaks the three dialects the harnesses use — Responses (streaming or not; Codex), Chat
 * Completions (streaming or not; OpenCode, generic commands) and Anthropic Messages (streaming or
 * not; Claude Code) — and answers from a script: given what the harness sent (its tools, how many
 * tool results came back, the conversation's text), run one shell command through the harness's
 * own shell tool, or end with a text. Tests and the bench use it; it is not a model.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Dialect = 'responses' | 'chat' | 'messages';

export interface StubTurnInput {
  dialect: Dialect;
  /** Names of the tools the harness offered. */
  tools: string[];
  /** Tool results in the conversation so far. */
  toolResults: number;
  /** Every text of the request, joined (instructions, messages, tool outputs). */
  text: string;
}

export type StubTurn = { command: string } | { text: string };

export type StubScript = (turn: StubTurnInput) => StubTurn;

export interface StubModelCall {
  dialect: Dialect;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  stream: boolean;
}

export interface StubModel {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  calls: StubModelCall[];
  /** Requests to paths the stub does not serve. */
  unknown: string[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

function texts(v: unknown, out: string[]): void {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) texts(x, out);
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (k !== 'tools' && k !== 'type') texts(x, out);
}

function toolNames(body: Json): string[] {
  const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : [];
  return tools.map((t) => String(t.name ?? (t.function as Json | undefined)?.name ?? t.type ?? ''));
}

function countToolResults(dialect: Dialect, body: Json): number {
  if (dialect === 'responses') return (Array.isArray(body.input) ? (body.input as Json[]) : []).filter((i) => typeof i.type === 'string' && i.type.endsWith('_call_output')).length;
  if (dialect === 'chat') return (Array.isArray(body.messages) ? (body.messages as Json[]) : []).filter((m) => m.role === 'tool').length;
  let n = 0;
  for (const m of Array.isArray(body.messages) ? (body.messages as Json[]) : []) {
    if (Array.isArray(m.content)) n += (m.content as Json[]).filter((c) => c.type === 'tool_result').length;
  }
  return n;
}

/** The shell tool each harness offers and the arguments it takes, by the tool's name. */
export function shellCall(tools: string[], command: string): { name: string; args: Json } | null {
  const has = (n: string) => tools.includes(n);
  // Claude Code's, in whichever dialect it arrives (Messages directly, or as a Responses call through a model server).
  if (has('Bash')) return { name: 'Bash', args: { command, description: 'Run a command' } };
  if (has('exec_command')) return { name: 'exec_command', args: { cmd: command } };
  if (has('shell_command')) return { name: 'shell_command', args: { command } };
  if (has('shell')) return { name: 'shell', args: { command: ['bash', '-lc', command] } };
  if (has('bash')) return { name: 'bash', args: { command, description: 'Run a command' } };
  return null;
}

let seq = 0;
const nextId = (p: string) => `${p}_${(++seq).toString(36)}${Date.now().toString(36)}`;

function sse(events: Array<[string | null, unknown]>): string {
  return events.map(([name, data]) => `${name ? `event: ${name}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`).join('');
}

const USAGE = { input_tokens: 10, output_tokens: 5 };

function responsesAnswer(body: Json, turn: StubTurn, tools: string[], stream: boolean): { type: string; text: string } {
  const call = 'command' in turn ? shellCall(tools, turn.command) : null;
  const item: Json = call
    ? { type: 'function_call', id: nextId('fc'), call_id: nextId('call'), name: call.name, arguments: JSON.stringify(call.args), status: 'completed' }
    : { type: 'message', id: nextId('msg'), role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'text' in turn ? turn.text : `no shell tool among: ${tools.join(', ')}`, annotations: [] }] };
  const response = { id: nextId('resp'), object: 'response', created_at: Math.floor(Date.now() / 1000), status: 'completed', model: body.model ?? 'stub', output: [item], usage: { ...USAGE, total_tokens: 15, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } };
  if (!stream) return { type: 'application/json', text: JSON.stringify(response) };
  const events: Array<[string, unknown]> = [
    ['response.created', { type: 'response.created', response: { ...response, status: 'in_progress', output: [] } }],
    ['response.output_item.added', { type: 'response.output_item.added', output_index: 0, item }],
  ];
  if (item.type === 'message') {
    const text = ((item.content as Json[])[0] as Json).text;
    events.push(['response.output_text.delta', { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: text }]);
  }
  events.push(['response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }]);
  events.push(['response.completed', { type: 'response.completed', response }]);
  return { type: 'text/event-stream', text: sse(events) };
}

function chatAnswer(body: Json, turn: StubTurn, tools: string[], stream: boolean): { type: string; text: string } {
  const call = 'command' in turn ? shellCall(tools, turn.command) : null;
  const id = nextId('chatcmpl');
  const created = Math.floor(Date.now() / 1000);
  const model = body.model ?? 'stub';
  const toolCalls = call ? [{ index: 0, id: nextId('call'), type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }] : undefined;
  const content = call ? null : 'text' in turn ? turn.text : `no shell tool among: ${tools.join(', ')}`;
  const finish = call ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  if (!stream) {
    return { type: 'application/json', text: JSON.stringify({ id, object: 'chat.completion', created, model, choices: [{ index: 0, message: { role: 'assistant', content, ...(toolCalls ? { tool_calls: toolCalls.map(({ index: _i, ...t }) => t) } : {}) }, finish_reason: finish }], usage }) };
  }
  const chunk = (delta: Json, finishReason: string | null, extra: Json = {}) => ({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra });
  const events: Array<[null, unknown]> = [[null, chunk({ role: 'assistant', content: '' }, null)]];
  events.push([null, chunk(toolCalls ? { tool_calls: toolCalls } : { content }, null)]);
  events.push([null, chunk({}, finish)]);
  events.push([null, { id, object: 'chat.completion.chunk', created, model, choices: [], usage }]);
  events.push([null, '[DONE]']);
  return { type: 'text/event-stream', text: sse(events) };
}

function messagesAnswer(body: Json, turn: StubTurn, tools: string[], stream: boolean): { type: string; text: string } {
  const call = 'command' in turn ? shellCall(tools, turn.command) : null;
  const block: Json = call ? { type: 'tool_use', id: nextId('toolu'), name: call.name, input: call.args } : { type: 'text', text: 'text' in turn ? turn.text : `no shell tool among: ${tools.join(', ')}` };
  const stop = call ? 'tool_use' : 'end_turn';
  const message = { id: nextId('msg'), type: 'message', role: 'assistant', model: body.model ?? 'stub', content: [block], stop_reason: stop, stop_sequence: null, usage: USAGE };
  if (!stream) return { type: 'application/json', text: JSON.stringify(message) };
  const start = call ? { ...block, input: {} } : { type: 'text', text: '' };
  const delta = call ? { type: 'input_json_delta', partial_json: JSON.stringify(call.args) } : { type: 'text_delta', text: block.text };
  return {
    type: 'text/event-stream',
    text: sse([
      ['message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: start }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }],
      ['message_stop', { type: 'message_stop' }],
    ]),
  };
}

const ROUTES: Record<string, Dialect> = { '/responses': 'responses', '/chat/completions': 'chat', '/messages': 'messages' };

/** The dialect a path asks for: any prefix (`/v1`, `/ng-rollout/<id>/v1`) followed by a known route. */
function dialectOf(path: string): Dialect | null {
  for (const [suffix, d] of Object.entries(ROUTES)) if (path.endsWith(suffix)) return d;
  return null;
}

export async function startStubModel(script: StubScript): Promise<StubModel> {
  const calls: StubModelCall[] = [];
  const unknown: string[] = [];
  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const path = (req.url ?? '').split('?')[0]!;
    const send = (status: number, type: string, text: string) => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (req.method === 'GET' && path.endsWith('/models')) return send(200, 'application/json', JSON.stringify({ object: 'list', data: [{ id: 'policy', object: 'model', created: 0, owned_by: 'stub' }] }));
    if (path.endsWith('/messages/count_tokens')) return send(200, 'application/json', JSON.stringify({ input_tokens: Math.ceil(raw.length / 4) }));
    const dialect = req.method === 'POST' ? dialectOf(path) : null;
    let body: Json = {};
    try {
      body = raw ? (JSON.parse(raw) as Json) : {};
    } catch {
      return send(400, 'application/json', JSON.stringify({ error: { message: 'body is not JSON' } }));
    }
    if (!dialect) {
      unknown.push(`${req.method} ${path}`);
      return send(404, 'application/json', JSON.stringify({ error: { message: `no route ${path}` } }));
    }
    const stream = body.stream === true;
    calls.push({ dialect, path, headers: req.headers, body, stream });
    const tools = toolNames(body);
    const all: string[] = [];
    texts(dialect === 'responses' ? [body.instructions, body.input] : dialect === 'chat' ? body.messages : [body.system, body.messages], all);
    const turn = script({ dialect, tools, toolResults: countToolResults(dialect, body), text: all.join('\n') });
    const answer = dialect === 'responses' ? responsesAnswer(body, turn, tools, stream) : dialect === 'chat' ? chatAnswer(body, turn, tools, stream) : messagesAnswer(body, turn, tools, stream);
    send(200, answer.type, answer.text);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    calls,
    unknown,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The usual script: run `command` once through the harness's shell tool, then say `done`. */
export function fixThenFinish(command: string | ((text: string) => string), done = 'Fixed; the tests pass now.'): StubScript {
  return (t) => {
    if (t.tools.length === 0) return { text: 'ok' };
    if (t.toolResults === 0) return { command: typeof command === 'string' ? command : command(t.text) };
    return { text: done };
  };
}
