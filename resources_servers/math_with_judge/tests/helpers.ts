import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A judge model server on 127.0.0.1: answers /v1/responses with queued replies and records the requests. */
export class StubJudge {
  requests: Record<string, unknown>[] = [];
  private replies: unknown[] = [];
  private server: Server;
  port = 0;

  constructor() {
    this.server = createServer((req, res) => {
      let data = '';
      req.on('data', (c) => (data += c));
      req.on('end', () => {
        this.requests.push(JSON.parse(data) as Record<string, unknown>);
        const reply = this.replies.shift() ?? { error: 'no reply queued' };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply));
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }
  async stop(): Promise<void> {
    await new Promise<void>((r) => this.server.close(() => r()));
  }
  queue(...replies: unknown[]): void {
    this.replies.push(...replies);
  }
  reset(): void {
    this.requests = [];
    this.replies = [];
  }
  /** The user prompt of request i. */
  prompt(i: number): string {
    const input = this.requests[i]!.input as { role: string; content: string }[];
    return input.find((m) => m.role === 'user')!.content;
  }
}

export function judgeText(text: string): Record<string, unknown> {
  return response([{ id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }]);
}

export function response(output: unknown[]): Record<string, unknown> {
  return {
    id: 'resp_1',
    created_at: 1,
    model: 'judge',
    object: 'response',
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
  };
}

export function verifyBody(question: string, expected: string, output: unknown[]): Record<string, unknown> {
  return {
    responses_create_params: { input: [{ role: 'user', content: question }] },
    response: response(output),
    question,
    expected_answer: expected,
  };
}

export const msg = (text: string) => ({ id: 'm', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
