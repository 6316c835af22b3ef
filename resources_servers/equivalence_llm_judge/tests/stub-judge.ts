import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A judge model server on 127.0.0.1: answers POST /v1/responses with the queued replies in order
 * and records every request body it received.
 */
export class StubJudge {
  readonly requests: Record<string, any>[] = [];
  private readonly replies: { status: number; body: unknown }[] = [];
  private readonly server: Server;
  port = 0;

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, any>);
        const reply = this.replies.shift() ?? { status: 500, body: { error: 'the test queued no reply' } };
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.body));
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  reply(...bodies: unknown[]): void {
    for (const body of bodies) this.replies.push({ status: 200, body });
  }

  replyStatus(status: number, body: unknown): void {
    this.replies.push({ status, body });
  }

  reset(): void {
    this.requests.length = 0;
    this.replies.length = 0;
  }

  /** The user prompt of request i. */
  prompt(i: number): string {
    return (this.requests[i]!.input as { role: string; content: string }[]).find((m) => m.role === 'user')!.content;
  }
}

export function responseWith(output: unknown[], id = 'resp_judge'): Record<string, unknown> {
  return { id, created_at: 123.0, model: 'judge_model', object: 'response', output, parallel_tool_calls: false, tool_choice: 'none', tools: [] };
}

export function message(text: string): Record<string, unknown> {
  return { id: 'msg_id', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
}

export function judgeSays(text: string): Record<string, unknown> {
  return responseWith([message(text)]);
}
