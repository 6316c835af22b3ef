import { describe, expect, it } from 'vitest';
import { ChatCompletionCreateParamsSchema, ChatCompletionSchema, ResponseCreateParamsSchema, ResponseSchema, fullCreateParamsDump, fullResponseDump } from '../../src/openai/index.js';
import { ResponseItemSchema, fullItemDump } from '../../src/openai/schemas.js';

describe('ResponseCreateParamsSchema', () => {
  it('keeps exactly the caller keys (no defaults) and accepts string input', () => {
    const r = ResponseCreateParamsSchema.parse({ input: 'hi', temperature: 0.5 });
    expect(r).toEqual({ input: 'hi', temperature: 0.5 });
    expect(Object.keys(r)).toEqual(['input', 'temperature']);
  });

  it('rejects unknown top-level keys such as seed or top_k', () => {
    for (const key of ['seed', 'top_k', 'conversation', 'prompt_cache_key']) {
      const r = ResponseCreateParamsSchema.safeParse({ input: 'x', [key]: 1 });
      expect(r.success).toBe(false);
      expect(JSON.stringify(r.error!.issues)).toContain(key);
    }
  });

  it('accepts the null defaults of older rollout files and keeps them in the full dump', () => {
    const row = { input: 'x', parallel_tool_calls: null, tool_choice: null, tools: null, user: '' };
    const r = ResponseCreateParamsSchema.parse(row);
    expect(r).toEqual(row);
    const d = fullCreateParamsDump(r);
    expect(d.parallel_tool_calls).toBeNull();
    expect(d.tool_choice).toBeNull();
    expect(ResponseCreateParamsSchema.safeParse({ input: 'x', parallel_tool_calls: 'yes' }).success).toBe(false);
  });

  it('requires input, takes stream as a boolean', () => {
    expect(ResponseCreateParamsSchema.safeParse({}).success).toBe(false);
    expect(ResponseCreateParamsSchema.safeParse({ input: 'x', stream: true }).success).toBe(true);
    expect(ResponseCreateParamsSchema.safeParse({ input: 'x', stream: false }).success).toBe(true);
    expect(ResponseCreateParamsSchema.safeParse({ input: 'x', stream: 'yes' }).success).toBe(false);
  });

  it('passes unknown item fields through untouched and treats role-only items as messages', () => {
    const item = { role: 'user', content: [{ type: 'input_text', text: 'a', extra: 1 }], custom_field: { x: 1 } };
    const r = ResponseCreateParamsSchema.parse({ input: [item] });
    expect(r.input).toEqual([item]);
  });

  it('validates function_call and reasoning items by type, naming the bad field', () => {
    const bad = ResponseCreateParamsSchema.safeParse({ input: [{ type: 'function_call', name: 'f', call_id: 'c' }] });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]!.path).toEqual(['input', 0, 'arguments']);
    const ok = ResponseCreateParamsSchema.safeParse({
      input: [{ type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 't' }], status: null }],
    });
    expect(ok.success).toBe(true);
  });

  it('treats token fields as an all-or-nothing bundle', () => {
    const base = { type: 'function_call', name: 'f', call_id: 'c', arguments: '{}' };
    expect(ResponseItemSchema.safeParse({ ...base, prompt_token_ids: [1] }).success).toBe(false);
    const full = { ...base, prompt_token_ids: [1], generation_token_ids: [2], generation_log_probs: [-0.1] };
    expect(ResponseItemSchema.parse(full)).toEqual(full);
  });

  it('rejects an item that has neither type nor role', () => {
    expect(ResponseItemSchema.safeParse({ content: 'x' }).success).toBe(false);
  });

  it('passes hosted-tool items through', () => {
    const item = { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { query: 'q' } };
    expect(ResponseItemSchema.parse(item)).toEqual(item);
  });
});

describe('fullCreateParamsDump', () => {
  it('fills every field in upstream key order with null and the three defaults', () => {
    const d = fullCreateParamsDump({
      input: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', description: 'd', name: 'f', parameters: {}, strict: true }],
    });
    expect(Object.keys(d)).toEqual([
      'background', 'include', 'input', 'instructions', 'max_output_tokens', 'max_tool_calls', 'metadata', 'model',
      'parallel_tool_calls', 'previous_response_id', 'prompt', 'reasoning', 'service_tier', 'store', 'temperature',
      'text', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'truncation', 'user', 'stream',
    ]);
    expect(d.parallel_tool_calls).toBe(true);
    expect(d.tool_choice).toBe('auto');
    expect(d.background).toBeNull();
    expect(d.input).toEqual([{ content: 'hi', role: 'user', type: 'message' }]);
    expect(Object.keys((d.tools as object[])[0]!)).toEqual(['name', 'parameters', 'strict', 'type', 'description']);
    expect(fullCreateParamsDump({ input: 'x' }).tools).toEqual([]);
  });
});

describe('fullItemDump', () => {
  it('puts training fields first and fills defaults per item kind', () => {
    const d = fullItemDump({
      type: 'function_call', name: 'f', arguments: '{}', call_id: 'c',
      generation_log_probs: [-1], prompt_token_ids: [1], generation_token_ids: [2],
    });
    expect(Object.keys(d)).toEqual([
      'prompt_token_ids', 'generation_token_ids', 'generation_log_probs', 'arguments', 'call_id', 'name', 'type', 'id', 'status',
    ]);
    const m = fullItemDump({ id: 'msg_1', role: 'assistant', type: 'message', content: [{ type: 'output_text', text: 'x' }] });
    expect(m).toEqual({
      id: 'msg_1', content: [{ annotations: [], text: 'x', type: 'output_text', logprobs: null }],
      role: 'assistant', status: 'completed', type: 'message',
    });
    const r = fullItemDump({ type: 'reasoning', id: 'rs', summary: [], status: 'completed' });
    expect(r).toEqual({ id: 'rs', summary: [], type: 'reasoning', encrypted_content: null });
  });
});

describe('ResponseSchema and fullResponseDump', () => {
  const resp = {
    id: 'resp_1', created_at: 1, model: 'm', object: 'response', output: [], parallel_tool_calls: true,
    tool_choice: 'auto', tools: [], store: true, extra_thing: 1,
  };
  it('keeps unknown keys on parse and in the full dump, after the known ones', () => {
    expect(ResponseSchema.parse(resp)).toEqual(resp);
    const d = fullResponseDump(resp);
    const keys = Object.keys(d);
    expect(keys.slice(0, 3)).toEqual(['id', 'created_at', 'error']);
    expect(keys.slice(-2)).toEqual(['store', 'extra_thing']);
    expect(keys).toHaveLength(32);
    expect(d.usage).toBeNull();
  });
  it('requires the core fields', () => {
    const { id: _id, ...noId } = resp;
    expect(ResponseSchema.safeParse(noId).success).toBe(false);
  });
});

describe('Chat Completions schemas', () => {
  it('drops unknown top-level keys of a chat request', () => {
    const r = ChatCompletionCreateParamsSchema.parse({ messages: [{ role: 'user', content: 'x' }], top_k: 3 });
    expect(r).toEqual({ messages: [{ role: 'user', content: 'x' }] });
  });
  it('rejects a message with an unknown role', () => {
    expect(ChatCompletionCreateParamsSchema.safeParse({ messages: [{ role: 'robot', content: 'x' }] }).success).toBe(false);
  });
  it('parses a completion and keeps vendor fields', () => {
    const c = {
      id: 'c', object: 'chat.completion', created: 1, model: 'm', prompt_logprobs: null,
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'x', reasoning_content: null } }],
    };
    expect(ChatCompletionSchema.parse(c)).toEqual(c);
  });
});
