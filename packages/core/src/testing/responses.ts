/** Model answers (Responses API shapes) for posting to /verify and for scripted model stubs. */

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
