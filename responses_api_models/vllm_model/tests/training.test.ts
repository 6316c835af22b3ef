/**
 * A three-turn tool-calling rollout through vllm_model with token ids on: every turn's prompt
 * must extend the previous prompt + generation by exactly the new tool-output tokens, so the
 * turns concatenate into one training sequence.
 */
import type OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { server } from '../app.js';
import { FakeVLLM, sessionClient, type ScriptedTurn } from './stub.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const tools = [
  { type: 'function' as const, name: 'get_weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  { type: 'function' as const, name: 'get_time', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } } } },
];

const script: ScriptedTurn[] = [
  { reasoning: 'I need the weather first.', content: null, tool_calls: [{ id: 'call_a', name: 'get_weather', arguments: '{"city": "Paris"}' }] },
  { reasoning: 'Now the local time.', content: 'Checking the time too.', tool_calls: [{ id: 'call_b', name: 'get_time', arguments: '{"city": "Paris"}' }] },
  { reasoning: 'I have both.', content: 'It is sunny in Paris and 10:00 there.' },
];
const toolOutputs: Record<string, string> = { call_a: '{"weather": "sunny"}', call_b: '{"time": "10:00"}' };

async function setup(inline: boolean) {
  const vllm = await new FakeVLLM().start();
  vllm.inline = inline;
  vllm.script = script;
  cleanups.push(() => vllm.stop());
  const app = (await server.build({
    config: {
      name: 'policy_model', base_url: `${vllm.url}/v1`, api_key: 'k', model: 'm', return_token_id_information: true,
      uses_reasoning_parser: true, request_inline_token_ids: inline, health_check_interval_s: 0,
    },
  }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  const client = await sessionClient(`http://127.0.0.1:${(app.server.address() as { port: number }).port}/v1`);
  return { vllm, client };
}

interface Turn {
  prompt: number[];
  generation: number[];
  logProbs: number[];
  newInput: any[];
}

/** Runs the agent loop: call the model, append its output and the tool outputs, repeat. */
async function rollout(client: OpenAI): Promise<Turn[]> {
  const input: any[] = [{ role: 'user', content: 'What is the weather and time in Paris?' }];
  const turns: Turn[] = [];
  let newInput: any[] = [...input];
  for (let i = 0; i < 3; i++) {
    const resp = await client.responses.create({ input, tools, temperature: 1 });
    const last = resp.output[resp.output.length - 1] as any;
    turns.push({ prompt: last.prompt_token_ids, generation: last.generation_token_ids, logProbs: last.generation_log_probs, newInput });
    // Only the last output item of a call carries the token fields.
    for (const item of resp.output.slice(0, -1)) expect(item).not.toHaveProperty('prompt_token_ids');
    input.push(...resp.output);
    newInput = [];
    for (const item of resp.output as any[]) {
      if (item.type === 'function_call') {
        const out = { type: 'function_call_output', call_id: item.call_id, output: toolOutputs[item.call_id] };
        input.push(out);
        newInput.push(out);
      }
    }
  }
  return turns;
}

describe.each([
  ['prompt ids from /tokenize', false],
  ['prompt ids returned inline by vLLM', true],
])('three-turn tool-calling rollout with token ids (%s)', (_label, inline) => {
  it('yields per-turn ids and log-probs that concatenate into one training sequence', async () => {
    const { vllm, client } = await setup(inline);
    const turns = await rollout(client);
    const tok = vllm.tokenizer;

    // Turn 1's prompt is the template of the first user message (with the tools).
    expect(turns[0]!.prompt).toEqual(tok.prompt([{ role: 'user', content: 'What is the weather and time in Paris?' }], [
      { function: { name: 'get_weather' } }, { function: { name: 'get_time' } },
    ]));
    for (let i = 0; i < 3; i++) {
      const t = turns[i]!;
      expect(t.generation).toEqual(vllm.generation(script[i]!));
      expect(t.logProbs).toHaveLength(t.generation.length);
      expect(t.generation.every(Number.isInteger)).toBe(true);
    }
    for (let i = 1; i < 3; i++) {
      const prev = turns[i - 1]!;
      const cur = turns[i]!;
      // prompt(i) = prompt(i-1) + generation(i-1) + the tool-output messages + generation prompt.
      const toolTokens = cur.newInput.flatMap((o: any) => tok.message({ role: 'tool', content: o.output }));
      expect(cur.prompt).toEqual([...prev.prompt, ...prev.generation, ...toolTokens, 3]);
    }
    // One sequence: turn 1's prompt, then each generation followed by the next turn's new tokens.
    const toolTokens = (t: Turn) => t.newInput.flatMap((o: any) => tok.message({ role: 'tool', content: o.output }));
    const expectedSequence = [
      ...turns[0]!.prompt, ...turns[0]!.generation,
      ...toolTokens(turns[1]!), 3, ...turns[1]!.generation,
      ...toolTokens(turns[2]!), 3, ...turns[2]!.generation,
    ];
    expect([...turns[2]!.prompt, ...turns[2]!.generation]).toEqual(expectedSequence);

    const chats = vllm.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(chats).toHaveLength(3);
    for (const c of chats) {
      expect(c.body).toMatchObject({ logprobs: true, top_logprobs: 0, return_tokens_as_token_ids: true });
      expect('return_token_ids' in c.body).toBe(inline);
    }
    // Each call carries the token bundle of the previous generation on its assistant message, and
    // only that one (token_id_forwarding: last): turn 1 none, turn 2 turn 1's, turn 3 turn 2's.
    chats.forEach((c, k) => {
      const carriers = c.body.messages.filter((m: any) => m.prompt_token_ids !== undefined);
      if (k === 0) return expect(carriers).toHaveLength(0);
      expect(carriers).toHaveLength(1);
      const prev = turns[k - 1]!;
      expect(carriers[0]).toMatchObject({ role: 'assistant', prompt_token_ids: prev.prompt, generation_token_ids: prev.generation, generation_log_probs: prev.logProbs });
      expect(c.body.messages.filter((m: any) => m.role === 'assistant').at(-1)).toBe(carriers[0]);
    });
    expect(vllm.requests.filter((r) => r.path === '/tokenize')).toHaveLength(inline ? 0 : 3);
    if (!inline) {
      const tk = vllm.requests.find((r) => r.path === '/tokenize')!;
      expect(Object.keys(tk.body).sort()).toEqual(['add_generation_prompt', 'messages', 'model', 'tools']);
    }
    // Turn 3 replays both earlier assistant turns, each with its reasoning moved to reasoning_content.
    const assistants = chats[2]!.body.messages.filter((m: any) => m.role === 'assistant').map((m: any) => {
      const { prompt_token_ids: _p, generation_token_ids: _g, generation_log_probs: _l, ...rest } = m;
      return rest;
    });
    expect(assistants).toEqual([
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }], reasoning_content: 'I need the weather first.' },
      { role: 'assistant', content: 'Checking the time too.', tool_calls: [{ id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"city": "Paris"}' } }], reasoning_content: 'Now the local time.' },
    ]);
  });
});
