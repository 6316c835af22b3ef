import { describe, expect, it } from 'vitest';
import { messagesToResponsesParams, ResponseCreateParamsSchema, responseEvents, type MessagesCreateParams } from '../../src/openai/index.js';
import { anthropicErrorBody, MessagesCreateParamsSchema, MessagesEventStream, messageEvents, responsesToMessagesEvents, responseToMessage } from '../../src/openai/messages.js';

type Json = Record<string, any>;

const parse = (body: unknown): MessagesCreateParams => MessagesCreateParamsSchema.parse(body);
const base = { model: 'claude-test', max_tokens: 10 };
const png = { type: 'base64', media_type: 'image/png', data: 'AAAA' };

/** The Messages events of an SSE list, parsed. */
const parsed = (events: { event?: string; data: string }[]): Json[] => events.map((e) => ({ event: e.event, ...(JSON.parse(e.data) as Json) }));

describe('messagesToResponsesParams', () => {
  it('tool results come right after the calls; their images follow in a user message, before the turn text', () => {
    const { params, dropped } = messagesToResponsesParams(
      parse({
        ...base,
        messages: [
          { role: 'assistant', content: [{ type: 'text', text: 'Looking.' }, { type: 'tool_use', id: 't1', name: 'read', input: { p: 'a' } }, { type: 'tool_use', id: 't2', name: 'read', input: { p: 'b' } }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'A' }, { type: 'image', source: png }] },
              { type: 'tool_result', tool_use_id: 't2', content: 'B', is_error: true },
              { type: 'text', text: 'Go on.' },
            ],
          },
        ],
      }),
    );
    expect(params.input).toEqual([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.', annotations: [] }] },
      { type: 'function_call', call_id: 't1', name: 'read', arguments: '{"p":"a"}' },
      { type: 'function_call', call_id: 't2', name: 'read', arguments: '{"p":"b"}' },
      { type: 'function_call_output', call_id: 't1', output: 'A' },
      { type: 'function_call_output', call_id: 't2', output: 'B' },
      { type: 'message', role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' }, { type: 'input_text', text: 'Go on.' }] },
    ]);
    expect(dropped).toEqual(['tool_result.is_error']);
    expect(ResponseCreateParamsSchema.safeParse(params).success).toBe(true);
  });

  it('reports what it drops: unmapped fields, server tools, block kinds', () => {
    const { params, dropped } = messagesToResponsesParams(
      parse({
        ...base,
        top_k: 3,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        metadata: { user_id: 'u' },
        tools: [{ type: 'web_search_20250305', name: 'web_search' }, { name: 'f', input_schema: { type: 'object' } }],
        messages: [
          { role: 'user', content: [{ type: 'document', source: { type: 'text', data: 'x', media_type: 'text/plain' } }, { type: 'text', text: 'Q' }] },
          { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'zzz' }, { type: 'text', text: 'A' }] },
        ],
      }),
    );
    expect(dropped.sort()).toEqual(['messages[].content[].type=document', 'messages[].content[].type=redacted_thinking', 'metadata', 'thinking', 'tools[].type=web_search_20250305', 'top_k'].sort());
    expect(params.tools).toEqual([{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: false }]);
  });

  it('tool_choice, system blocks, a system turn and training fields on an assistant turn', () => {
    const tokens = { prompt_token_ids: [1, 2], generation_token_ids: [3], generation_log_probs: [-0.5] };
    const { params } = messagesToResponsesParams(
      parse({
        ...base,
        system: [{ type: 'text', text: 'Be ' }, { type: 'text', text: 'brief.' }],
        tool_choice: { type: 'tool', name: 'f' },
        messages: [
          { role: 'user', content: 'Q' },
          { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 'opaque' }, { type: 'tool_use', id: 't', name: 'f', input: {} }], ...tokens },
          { role: 'system', content: 'Mid-conversation note.' },
        ],
      }),
    );
    expect(params.tool_choice).toEqual({ type: 'function', name: 'f' });
    expect(params.input).toEqual([
      { type: 'message', role: 'system', content: 'Be brief.' },
      { type: 'message', role: 'user', content: 'Q' },
      // A signature that names no reasoning item gets an id of its own.
      { type: 'reasoning', id: 'rs_m1b0', summary: [{ type: 'summary_text', text: 'hm' }] },
      { type: 'function_call', call_id: 't', name: 'f', arguments: '{}', ...tokens },
      { type: 'message', role: 'system', content: 'Mid-conversation note.' },
    ]);
  });

  it('a malformed block is refused with its path', () => {
    const r = MessagesCreateParamsSchema.safeParse({ ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url' } }] }] });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.path.slice(0, 4)).toEqual(['messages', 0, 'content', 0]);
  });
});

describe('responseToMessage', () => {
  const response = (output: Json[], extra: Json = {}) => ({ id: 'resp_abc', model: 'm', status: 'completed', output, usage: { input_tokens: 9, input_tokens_details: { cached_tokens: 4 }, output_tokens: 2 }, ...extra });

  it('maps items to blocks and the stop reasons', () => {
    const msg = responseToMessage(response([
      { type: 'reasoning', id: 'rs_9', summary: [{ type: 'summary_text', text: 'a' }, { type: 'summary_text', text: 'b' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }] },
      { type: 'function_call', call_id: 'c', name: 'f', arguments: 'not json' },
      { type: 'web_search_call', id: 'ws' },
    ]), { model: 'asked' });
    expect(msg).toMatchObject({ id: 'msg_abc', model: 'm', stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 5, cache_read_input_tokens: 4, output_tokens: 2 } });
    expect(msg.content).toEqual([
      { type: 'thinking', thinking: 'a\n\nb', signature: 'rs_9' },
      { type: 'text', text: 'hi', citations: null },
      // Arguments that are not JSON reach the client as they are.
      { type: 'tool_use', id: 'c', name: 'f', input: 'not json' },
    ]);
    expect(responseToMessage(response([{ type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] }]), { model: 'x' }).stop_reason).toBe('refusal');
    expect(responseToMessage(response([], { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }), { model: 'x' }).stop_reason).toBe('max_tokens');
  });

  it('a stop sequence cuts the text and everything after it', () => {
    const msg = responseToMessage(response([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'one STOP two' }] },
      { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
    ]), { model: 'x', stopSequences: ['two', 'STOP'] });
    expect(msg.content).toEqual([{ type: 'text', text: 'one ', citations: null }]);
    expect([msg.stop_reason, msg.stop_sequence]).toEqual(['stop_sequence', 'STOP']);
  });
});

describe('Messages event stream', () => {
  const final = {
    id: 'resp_1', model: 'm', status: 'completed',
    output: [
      { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'think' }] },
      { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello there' }] },
      { id: 'fc_1', type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"x":1}', prompt_token_ids: [1], generation_token_ids: [2], generation_log_probs: [-1] },
    ],
    usage: { input_tokens: 3, output_tokens: 4 },
  };

  it('a Responses stream and the finished message give the same events (ids aside)', async () => {
    const live: { event?: string; data: string }[] = [];
    for await (const e of responsesToMessagesEvents(responseEvents(final), new MessagesEventStream('asked'))) live.push(e);
    const whole = messageEvents(responseToMessage(final, { model: 'asked' }));
    const withoutIds = (events: Json[]) => events.map((e) => (e.type === 'message_start' ? { ...e, message: { ...e.message, id: undefined, usage: undefined } } : e));
    expect(withoutIds(parsed(live))).toEqual(withoutIds(parsed(whole)));
    expect(parsed(live).map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_stop',
      'message_delta', 'message_stop',
    ]);
    expect(parsed(live).at(-2)).toMatchObject({ delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 4 }, generation_token_ids: [2] });
  });

  it('summaries of one reasoning item stream into one thinking block, as the plain answer has it', () => {
    const s = new MessagesEventStream('m');
    const item = { id: 'rs_2', type: 'reasoning', summary: [{ type: 'summary_text', text: 'a' }, { type: 'summary_text', text: 'b' }] };
    const out = [
      ...s.event({ type: 'response.created', response: { model: 'm' } }),
      ...s.event({ type: 'response.output_item.added', output_index: 0, item: { ...item, summary: [] } }),
      ...s.event({ type: 'response.reasoning_summary_part.added', output_index: 0, summary_index: 0 }),
      ...s.event({ type: 'response.reasoning_summary_text.delta', output_index: 0, summary_index: 0, delta: 'a' }),
      ...s.event({ type: 'response.reasoning_summary_part.added', output_index: 0, summary_index: 1 }),
      ...s.event({ type: 'response.reasoning_summary_text.delta', output_index: 0, summary_index: 1, delta: 'b' }),
      ...s.event({ type: 'response.output_item.done', output_index: 0, item }),
      ...s.event({ type: 'response.completed', response: { status: 'completed', output: [item], usage: { input_tokens: 1, output_tokens: 1 } } }),
    ];
    const events = parsed(out);
    expect(events.filter((e) => e.type === 'content_block_delta').map((e) => e.delta)).toEqual([
      { type: 'thinking_delta', thinking: 'a' },
      { type: 'thinking_delta', thinking: '\n\n' },
      { type: 'thinking_delta', thinking: 'b' },
      { type: 'signature_delta', signature: 'rs_2' },
    ]);
    expect(responseToMessage({ output: [item] }, { model: 'm' }).content).toEqual([{ type: 'thinking', thinking: 'a\n\nb', signature: 'rs_2' }]);
  });

  it('a stop sequence split over deltas is held back and never sent', () => {
    const s = new MessagesEventStream('m', ['STOP']);
    const out = [
      ...s.event({ type: 'response.created', response: { model: 'm' } }),
      ...s.event({ type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'abc ST' }),
      ...s.event({ type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'OP tail' }),
      ...s.event({ type: 'response.function_call_arguments.delta', output_index: 1, delta: '{}' }),
      ...s.finish({ status: 'completed', output: [], usage: { input_tokens: 1, output_tokens: 1 } }),
    ];
    const events = parsed(out);
    const text = events.filter((e) => e.delta?.type === 'text_delta').map((e) => e.delta.text).join('');
    expect(text).toBe('abc ');
    expect(events.filter((e) => e.type === 'content_block_stop')).toHaveLength(1);
    expect(events.at(-2)!.delta).toEqual({ stop_reason: 'stop_sequence', stop_sequence: 'STOP' });
  });

  it('a source that fails or ends early ends with an Anthropic error event', async () => {
    async function* failing() {
      yield responseEvents(final)[0]!;
      throw new Error('backend went away');
    }
    const out: { event?: string; data: string }[] = [];
    for await (const e of responsesToMessagesEvents(failing(), new MessagesEventStream('m'))) out.push(e);
    expect(parsed(out).at(-1)).toEqual({ event: 'error', type: 'error', error: { type: 'api_error', message: 'backend went away' } });
    const early: { event?: string; data: string }[] = [];
    for await (const e of responsesToMessagesEvents(responseEvents(final).slice(0, 3), new MessagesEventStream('m'))) early.push(e);
    expect(parsed(early).at(-1)).toMatchObject({ type: 'error', error: { type: 'api_error' } });
  });
});

describe('anthropicErrorBody', () => {
  it('reads our answers and backend answers, keeps NG_ERR codes, maps status to type', () => {
    expect(JSON.parse(anthropicErrorBody(404, JSON.stringify({ detail: 'nothing here', code: 'NG_ERR_HTTP' })))).toEqual({ type: 'error', error: { type: 'not_found_error', message: 'nothing here', code: 'NG_ERR_HTTP' } });
    expect(JSON.parse(anthropicErrorBody(502, JSON.stringify({ error: { message: 'upstream down' } })))).toEqual({ type: 'error', error: { type: 'api_error', message: 'upstream down' } });
    expect(JSON.parse(anthropicErrorBody(422, JSON.stringify({ detail: [{ loc: ['body'], msg: 'bad' }] }))).error).toEqual({ type: 'invalid_request_error', message: '[{"loc":["body"],"msg":"bad"}]' });
    expect(JSON.parse(anthropicErrorBody(529, 'busy')).error).toEqual({ type: 'overloaded_error', message: 'busy' });
  });
});
