import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConversionError, ResponseCreateParamsSchema, chatCompletionToResponse, chatMessageToOutputItems, moveThinkToReasoningContent, responsesToChatParams } from '../../src/openai/index.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const roundTripPath = join(repoRoot, '..', 'shared', 'upstream-data', 'vllm_model', 'round_trip_test_data.json');
const plain = { returnTokenIdInformation: false };
const withTokens = { returnTokenIdInformation: true };
const fixedIds = () => '123';

/** Upstream's anchor dump keeps `tool_calls: []`; the later fix leaves empty lists out. */
function withoutEmptyToolCalls(messages: Record<string, unknown>[]) {
  return messages.map((m) => {
    if (Array.isArray(m.tool_calls) && m.tool_calls.length === 0) {
      const { tool_calls: _t, ...rest } = m;
      return rest;
    }
    return m;
  });
}

describe('recorded round trip (upstream round_trip_test_data.json)', () => {
  const present = existsSync(roundTripPath);
  if (!present) console.log(`skipping recorded round trip: ${roundTripPath} not found`);
  const data = present ? JSON.parse(readFileSync(roundTripPath, 'utf8')) : null;
  const cases = [
    ['without token ids', 'expected_output', plain],
    ['with token ids', 'expected_output_return_token_id_information', withTokens],
  ] as const;
  for (const [label, key, opts] of cases) {
    it.skipIf(!present)(`converts the recorded Response output back into upstream's chat messages (${label})`, () => {
      const params = ResponseCreateParamsSchema.parse({
        input: [{ content: 'system', role: 'system' }, { content: 'hello!', role: 'user' }, ...data.input.output],
      });
      const chat = responsesToChatParams(params, opts);
      const expected = data[key];
      expect(chat.messages).toEqual(withoutEmptyToolCalls(expected.messages));
      // The only non-null top-level field upstream dumps is the parallel_tool_calls default.
      const setKeys = Object.entries(expected).filter(([k, v]) => k !== 'messages' && v !== null).map(([k]) => k);
      expect(setKeys).toEqual(['parallel_tool_calls']);
      expect(Object.keys(chat)).toEqual(['messages']);
      // Exactly one upstream message had an empty tool_calls list; everything else is identical.
      expect(expected.messages.filter((m: { tool_calls?: unknown[] }) => m.tool_calls?.length === 0)).toHaveLength(1);
    });

    it.skipIf(!present)(`turns each recorded assistant message into output items and back unchanged (${label})`, () => {
      const assistants = withoutEmptyToolCalls(data[key].messages).filter((m) => m.role === 'assistant');
      expect(assistants.length).toBe(2);
      for (const message of assistants) {
        const items = chatMessageToOutputItems(message, opts, fixedIds);
        expect(items[0]).toMatchObject({ type: 'reasoning' });
        const back = responsesToChatParams(ResponseCreateParamsSchema.parse({ input: [{ role: 'user', content: 'q' }, ...items] }), opts);
        expect((back.messages as unknown[])[1]).toEqual(message);
      }
    });
  }
});

describe('responsesToChatParams', () => {
  it('merges reasoning, assistant text and function calls into one assistant message (spec example)', () => {
    const params = ResponseCreateParamsSchema.parse({
      input: [
        { role: 'user', content: 'Check my order status' },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Checking order details...' }] },
        { role: 'assistant', content: 'Sure, one sec.' },
        { role: 'assistant', type: 'message', id: 'msg_1', content: [{ type: 'output_text', text: 'Gathering order status and delivery info..', annotations: [] }] },
        { type: 'function_call', call_id: 'call_123', name: 'get_order_status', arguments: '{"order_id": "123"}', id: 'fc_1' },
        { type: 'function_call_output', call_id: 'call_123', output: '{"status": "shipped"}' },
        { role: 'user', content: [{ type: 'input_text', text: 'thanks' }] },
      ],
    });
    const chat = responsesToChatParams(params, plain);
    expect(chat.messages).toEqual([
      { role: 'user', content: 'Check my order status' },
      {
        role: 'assistant',
        content: '<think>Checking order details...</think>Sure, one sec.Gathering order status and delivery info..',
        tool_calls: [{ id: 'call_123', type: 'function', function: { name: 'get_order_status', arguments: '{"order_id": "123"}' } }],
      },
      { role: 'tool', content: '{"status": "shipped"}', tool_call_id: 'call_123' },
      { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
    ]);
  });

  it('wraps string input as a user message with a text part list', () => {
    const chat = responsesToChatParams(ResponseCreateParamsSchema.parse({ input: 'hi' }), plain);
    expect(chat.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  });

  it('turns instructions into a leading system message, folding leading system/developer messages', () => {
    const chat = responsesToChatParams(
      ResponseCreateParamsSchema.parse({
        instructions: 'Be brief.',
        input: [{ role: 'developer', content: 'Use tools.' }, { role: 'user', content: 'q' }],
      }),
      plain,
    );
    expect(chat.messages).toEqual([
      { role: 'system', content: 'Be brief.\n\nUse tools.' },
      { role: 'user', content: 'q' },
    ]);
  });

  it('maps max_output_tokens, tools, reasoning effort and a Responses-style tool_choice; reports keys with no chat equivalent', () => {
    const dropped: string[][] = [];
    const chat = responsesToChatParams(
      ResponseCreateParamsSchema.parse({
        input: 'x', model: 'm', max_output_tokens: 64, temperature: 0.2, reasoning: { effort: 'low', summary: 'auto' }, truncation: 'auto',
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: true, description: 'd' }],
        tool_choice: { type: 'function', name: 'f' },
      }),
      { ...plain, onDropped: (f) => dropped.push(f) },
    );
    expect(chat).toEqual({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
      model: 'm',
      max_tokens: 64,
      reasoning_effort: 'low',
      temperature: 0.2,
      tool_choice: { type: 'function', function: { name: 'f' } },
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true, description: 'd' } }],
    });
    expect(dropped).toEqual([['truncation', 'reasoning.summary']]);
  });

  it('carries the current request fields that Chat Completions has (prompt_cache_key, safety_identifier, effort none/xhigh, verbosity)', () => {
    for (const effort of ['none', 'xhigh'] as const) {
      const dropped: string[][] = [];
      const chat = responsesToChatParams(
        ResponseCreateParamsSchema.parse({
          input: 'x', prompt_cache_key: 'user-42', safety_identifier: 'hash-1', prompt_cache_retention: '24h', reasoning: { effort },
          text: { verbosity: 'low' }, conversation: { id: 'conv_1' }, previous_response_id: null, truncation: 'disabled',
        }),
        { ...plain, onDropped: (f) => dropped.push(f) },
      );
      expect(chat).toEqual({
        messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
        reasoning_effort: effort,
        prompt_cache_key: 'user-42',
        prompt_cache_retention: '24h',
        safety_identifier: 'hash-1',
        verbosity: 'low',
      });
      expect(Object.keys(chat).indexOf('prompt_cache_key')).toBeGreaterThan(Object.keys(chat).indexOf('reasoning_effort'));
      expect(dropped).toEqual([['conversation']]);
    }
  });

  it('leaves tools, tool_choice and parallel_tool_calls out when there are no tools', () => {
    const chat = responsesToChatParams(
      ResponseCreateParamsSchema.parse({ input: 'x', tools: [], tool_choice: 'auto', parallel_tool_calls: true, temperature: 0 }),
      plain,
    );
    expect(chat).toEqual({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }], temperature: 0 });
    expect(() =>
      responsesToChatParams(ResponseCreateParamsSchema.parse({ input: 'x', tools: [], tool_choice: 'required' }), plain),
    ).toThrow(/tool_choice asks for a tool call but "tools" is empty/);
  });

  it('does not leak token information into later assistant messages', () => {
    const tok = { prompt_token_ids: [1], generation_token_ids: [2], generation_log_probs: [-0.5] };
    const chat = responsesToChatParams(
      ResponseCreateParamsSchema.parse({
        input: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'one', ...tok },
          { role: 'user', content: 'b' },
          { role: 'assistant', content: 'two (not generated here)' },
        ],
      }),
      withTokens,
    );
    const msgs = chat.messages as Record<string, unknown>[];
    expect(msgs[1]).toEqual({ role: 'assistant', content: 'one', ...tok });
    expect(msgs[3]).toEqual({ role: 'assistant', content: 'two (not generated here)' });
  });

  it('drops token fields when token ids are off', () => {
    const tok = { prompt_token_ids: [1], generation_token_ids: [2], generation_log_probs: [-0.5] };
    const chat = responsesToChatParams(
      ResponseCreateParamsSchema.parse({ input: [{ role: 'assistant', content: 'one', ...tok }] }),
      plain,
    );
    expect(chat.messages).toEqual([{ role: 'assistant', content: 'one' }]);
  });

  it('accepts chat-style tool messages and assistant messages without content', () => {
    const chat = responsesToChatParams(
      ResponseCreateParamsSchema.parse({
        input: [
          { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'ok' },
        ],
      }),
      plain,
    );
    expect(chat.messages).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', content: 'ok', tool_call_id: 'c1' },
    ]);
  });

  it('rejects file-id images, input files and hosted-tool items with a ConversionError naming the item', () => {
    const img = ResponseCreateParamsSchema.parse({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'input_image', file_id: 'file_1' }] }] });
    expect(() => responsesToChatParams(img, plain)).toThrow(/input\[0\]\.content\[1\] is an input_image without "image_url".*file_id/);
    const file = ResponseCreateParamsSchema.parse({ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] });
    expect(() => responsesToChatParams(file, plain)).toThrow(/input\[0\]\.content\[0\].*input_file/);
    const ws = ResponseCreateParamsSchema.parse({ input: [{ type: 'web_search_call', id: 'w' }] });
    expect(() => responsesToChatParams(ws, plain)).toThrow(ConversionError);
  });
});

describe('chatMessageToOutputItems', () => {
  it('keeps whitespace exactly and orders reasoning, message, tool calls (upstream whitespace round trip)', () => {
    const message = {
      role: 'assistant',
      content: "<think> \n \n I'm thinking \n \n </think> \n \n I'm chatting! \n \n ",
      tool_calls: [
        { id: 'tool call 1', type: 'function', function: { name: 'get_weather', arguments: '{"city_name": "new york"}' } },
        { id: 'tool call 2', type: 'function', function: { name: 'get_weather', arguments: '{"city_name": "boston"}' } },
      ],
    };
    const items = chatMessageToOutputItems(message, plain, fixedIds);
    expect(items).toEqual([
      { id: 'rs_123', summary: [{ text: " \n \n I'm thinking \n \n ", type: 'summary_text' }], type: 'reasoning', encrypted_content: null },
      {
        id: 'msg_123', content: [{ annotations: [], text: " \n \n I'm chatting! \n \n ", type: 'output_text', logprobs: null }],
        role: 'assistant', status: 'completed', type: 'message',
      },
      { arguments: '{"city_name": "new york"}', call_id: 'tool call 1', name: 'get_weather', type: 'function_call', id: 'tool call 1', status: 'completed' },
      { arguments: '{"city_name": "boston"}', call_id: 'tool call 2', name: 'get_weather', type: 'function_call', id: 'tool call 2', status: 'completed' },
    ]);
    const back = responsesToChatParams(
      ResponseCreateParamsSchema.parse({ input: [{ role: 'user', content: 'hello!' }, ...items] }),
      plain,
    );
    expect((back.messages as unknown[])[1]).toEqual(message);
  });

  it('yields an empty message for an empty generation and puts token fields first on the last item', () => {
    expect(chatMessageToOutputItems({ role: 'assistant', content: null }, plain, fixedIds)).toEqual([
      { id: 'msg_123', content: [{ annotations: [], text: '', type: 'output_text', logprobs: null }], role: 'assistant', status: 'completed', type: 'message' },
    ]);
    const items = chatMessageToOutputItems(
      { role: 'assistant', content: '<think>r</think>', prompt_token_ids: [1, 2], generation_token_ids: [3], generation_log_probs: [-1] },
      withTokens,
      fixedIds,
    );
    expect(items).toHaveLength(1);
    expect(Object.keys(items[0]!).slice(0, 3)).toEqual(['prompt_token_ids', 'generation_token_ids', 'generation_log_probs']);
    expect(items[0]).toMatchObject({ type: 'reasoning', prompt_token_ids: [1, 2] });
  });
});

describe('chatCompletionToResponse', () => {
  const completion = (finish: string, usage?: object) => ({
    id: 'c', object: 'chat.completion', created: 1700000000, model: 'served',
    choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', content: 'hi' } }],
    ...(usage ? { usage } : {}),
  });
  it('echoes request fields and the real tool_choice; maps usage', () => {
    const params = ResponseCreateParamsSchema.parse({ input: 'x', tool_choice: 'required', temperature: 0.3, instructions: 'i' });
    const r = chatCompletionToResponse(
      params,
      completion('stop', { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, prompt_tokens_details: { cached_tokens: 4 } }),
      { ...plain, model: 'policy' },
      fixedIds,
    );
    expect(r).toMatchObject({
      id: 'resp_123', created_at: 1700000000, model: 'policy', tool_choice: 'required', temperature: 0.3, instructions: 'i',
      status: 'completed', incomplete_details: null, parallel_tool_calls: true, tools: [],
      usage: { input_tokens: 5, input_tokens_details: { cached_tokens: 4 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 7 },
    });
  });
  it('marks length and content_filter finishes as incomplete', () => {
    const params = ResponseCreateParamsSchema.parse({ input: 'x' });
    expect(chatCompletionToResponse(params, completion('length'), { ...plain, model: 'm' })).toMatchObject({
      status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, usage: null, tool_choice: 'auto',
    });
    expect(chatCompletionToResponse(params, completion('content_filter'), { ...plain, model: 'm' }).incomplete_details).toEqual({ reason: 'content_filter' });
  });
});

describe('moveThinkToReasoningContent', () => {
  it('moves the first think block into reasoning_content and strips all blocks', () => {
    const msgs = moveThinkToReasoningContent([
      { role: 'assistant', content: '<think>a</think>x<think>b</think>y' },
      { role: 'assistant', content: 'plain' },
      { role: 'user', content: '<think>u</think>' },
      { role: 'assistant', content: null },
    ]);
    expect(msgs).toEqual([
      { role: 'assistant', content: 'xy', reasoning_content: 'a' },
      { role: 'assistant', content: 'plain' },
      { role: 'user', content: '<think>u</think>' },
      { role: 'assistant', content: null },
    ]);
  });
});

describe('responsesToChatParams leaves its input alone', () => {
  it('does not change the caller\'s params, shares earlier turns\' token ids and copies everything else', () => {
    const prompt = [1, 2, 3];
    const params = JSON.parse(
      JSON.stringify({
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}', prompt_token_ids: prompt, generation_token_ids: [4], generation_log_probs: [-1] },
          { type: 'function_call_output', call_id: 'c1', output: 'ok' },
        ],
        metadata: { proto_key: 'x' },
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }],
      }).replace('"proto_key"', '"__proto__"'),
    );
    const before = JSON.stringify(params);
    const chat = responsesToChatParams(params, { returnTokenIdInformation: true }) as any;
    expect(JSON.stringify(params)).toBe(before);
    const assistant = chat.messages.find((m: any) => m.role === 'assistant');
    expect(assistant.prompt_token_ids).toBe(params.input[1].prompt_token_ids);
    expect(chat.messages[0].content).not.toBe(params.input[0].content);
    expect(Object.getPrototypeOf(chat.metadata)).toBe(Object.prototype);
    expect(Object.keys(chat.metadata)).toEqual(['__proto__']);
  });
});
