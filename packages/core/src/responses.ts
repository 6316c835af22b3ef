/** Small helpers over Responses API objects: reading their text, and building model answers (for /verify bodies, scripted model stubs and load generators). */

/** The OpenAI SDK's `response.output_text`: every output_text part of every message, joined with "". */
export function outputText(response: { output?: unknown } | null | undefined): string {
  const out = response?.output;
  if (!Array.isArray(out)) return '';
  let text = '';
  for (const item of out as Record<string, unknown>[]) {
    if (!item || (item.type ?? (item.role !== undefined ? 'message' : undefined)) !== 'message') continue;
    if (!Array.isArray(item.content)) continue;
    for (const part of item.content as Record<string, unknown>[]) {
      if (part && part.type === 'output_text' && typeof part.text === 'string') text += part.text;
    }
  }
  return text;
}

type Json = Record<string, unknown>;

/** An assistant message item with one output_text part. */
export function messageItem(text: string, fields: Json = {}): Json {
  return { id: 'msg_test', content: [{ annotations: [], text, type: 'output_text' }], role: 'assistant', status: 'completed', type: 'message', ...fields };
}

/** A function_call item; `args` objects are JSON-encoded, strings are sent as they are. */
export function functionCall(name: string, args: unknown, id = 'fc_1', fields: Json = {}): Json {
  return { type: 'function_call', name, arguments: typeof args === 'string' ? args : JSON.stringify(args), call_id: `call_${id}`, id, status: 'completed', ...fields };
}

/** A whole model response around `output`; `fields` override the defaults. */
export function modelResponse(output: unknown[], fields: Json = {}): Json {
  return { id: 'resp_test', created_at: 0, model: 'test_model', object: 'response', output, parallel_tool_calls: true, tool_choice: 'auto', tools: [], ...fields };
}

/** A model response holding one assistant message. */
export function textResponse(text: string, fields: Json = {}): Json {
  return modelResponse([messageItem(text)], fields);
}

/**
 * Usage summed over the model calls of one rollout (upstream's `accumulate_response_usage`):
 * input, output and total tokens; `total` null before the first call.
 */
export function addUsage(total: Json | null, usage: unknown): Json | null {
  if (!usage || typeof usage !== 'object') return total;
  const u = usage as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === 'number' ? v : 0);
  const base = total ?? { input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 };
  return {
    input_tokens: n(base.input_tokens) + n(u.input_tokens),
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: n(base.output_tokens) + n(u.output_tokens),
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: n(base.total_tokens) + n(u.total_tokens),
  };
}
