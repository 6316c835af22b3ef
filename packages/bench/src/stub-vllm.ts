/**
 * A stub of a trainer's vLLM chat endpoint for benchmarks (127.0.0.1 only), answering with inline
 * token ids as NeMo-RL's server does: the prompt is as long as the history (1000 tokens, then 250
 * more for each assistant turn and tool result before it), 100 generated tokens with log-probs, so
 * a conversation whose history only grows chains by prefix call after call. Turns before
 * `toolTurns` ask for a tool; later turns answer in text. The request's history is read from its
 * `messages`: a system and a user message, then an assistant message and a tool result per turn.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export const STUB_GEN_TOKENS = 100;
export const STUB_TOOL_TOKENS = 150;
export const STUB_BASE_TOKENS = 1000;

const idAt = (i: number) => (i * 7919) % 151_000;
const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => idAt(from + k));

export interface StubVllm {
  /** `http://127.0.0.1:<port>/v1` */
  url: string;
  /** Chat requests answered. */
  calls: () => number;
  close: () => Promise<void>;
}

export async function startStubVllm(options: { toolTurns?: number } = {}): Promise<StubVllm> {
  const toolTurns = options.toolTurns ?? Number.POSITIVE_INFINITY;
  let calls = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      calls++;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: unknown[] };
      const turn = Math.max(0, Math.floor((body.messages.length - 2) / 2));
      const start = STUB_BASE_TOKENS + turn * (STUB_GEN_TOKENS + STUB_TOOL_TOKENS);
      const gen = ids(start, start + STUB_GEN_TOKENS);
      const tool = turn < toolTurns;
      const out = JSON.stringify({
        id: 'chatcmpl-bench', object: 'chat.completion', created: 1700000000, model: 'm',
        prompt_token_ids: ids(0, start),
        choices: [{
          index: 0, finish_reason: tool ? 'tool_calls' : 'stop', token_ids: gen,
          logprobs: { content: gen.map((t, k) => ({ token: `token_id:${t}`, logprob: -0.001 * (k + 1), bytes: null, top_logprobs: [] })) },
          message: tool
            ? { role: 'assistant', content: 'Let me look at the failing test first.', tool_calls: [{ id: `call_${turn}`, type: 'function', function: { name: 'run', arguments: '{"cmd": "pytest -x tests/test_core.py"}' } }] }
            : { role: 'assistant', content: 'Fixed: calc.py adds now.' },
        }],
        usage: { prompt_tokens: start, completion_tokens: STUB_GEN_TOKENS, total_tokens: start + STUB_GEN_TOKENS },
      });
      res.setHeader('content-type', 'application/json');
      res.end(out);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls: () => calls,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
