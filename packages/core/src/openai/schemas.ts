/**
 * OpenAI Responses API and Chat Completions shapes as NeMo Gym uses them.
 *
 * Parsing keeps the caller's keys exactly (no defaults are filled in), which matches the
 * `exclude_unset` dumps that the Python implementation sends between servers. The
 * `full*Dump` helpers produce the complete serialized form (every field, nulls for absent
 * values) in the Python implementation's key order, as written to rollout files and sent to
 * `/verify` and `/seed_session`.
 */
import { z } from 'zod';
import { compiled } from '../compiled-schema.js';

/**
 * The OpenAI API surface these schemas follow: the request fields of the `openai` npm client at
 * this version (its ResponseCreateParamsBase and ChatCompletionCreateParamsBase types).
 */
export const OPENAI_API_REFERENCE = 'openai@7.57.0';

// ---------------------------------------------------------------------------------------------
// Training fields
// ---------------------------------------------------------------------------------------------

export const TOKEN_FIELD_KEYS = ['prompt_token_ids', 'generation_token_ids', 'generation_log_probs'] as const;

export const TokenFieldsSchema = z.object({
  prompt_token_ids: z.array(z.number().int()),
  generation_token_ids: z.array(z.number().int()),
  generation_log_probs: z.array(z.number()),
});
export type TokenFields = z.infer<typeof TokenFieldsSchema>;

const optionalTokenFields = {
  prompt_token_ids: z.array(z.number().int()).optional(),
  generation_token_ids: z.array(z.number().int()).optional(),
  generation_log_probs: z.array(z.number()).optional(),
};

/** Token fields travel as a bundle: either all three are present or none is. */
function checkTokenBundle(value: Record<string, unknown>, ctx: z.RefinementCtx): void {
  // The common case (no token fields at all) allocates nothing.
  if (value.prompt_token_ids === undefined && value.generation_token_ids === undefined && value.generation_log_probs === undefined) return;
  const present = TOKEN_FIELD_KEYS.filter((k) => value[k] !== undefined);
  if (present.length > 0 && present.length < TOKEN_FIELD_KEYS.length) {
    const missing = TOKEN_FIELD_KEYS.filter((k) => value[k] === undefined);
    ctx.addIssue({
      code: 'custom',
      message:
        `token fields must be given together: found ${present.join(', ')} but not ${missing.join(', ')}; ` +
        'send all of prompt_token_ids, generation_token_ids and generation_log_probs, or none',
      path: [missing[0]!],
    });
  }
}

/** True when the value carries the three training fields. */
export function hasTokenFields(value: unknown): value is TokenFields {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return TOKEN_FIELD_KEYS.every((k) => Array.isArray(v[k]));
}

/** Re-reports issues found by a nested parse, keeping their code and prefixing their path. */
function forwardIssues(ctx: z.RefinementCtx, issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[] = []): void {
  for (const issue of issues) {
    ctx.addIssue({ ...issue, path: [...prefix, ...issue.path] } as unknown as z.core.$ZodRawIssue);
  }
}

// ---------------------------------------------------------------------------------------------
// Responses API items
// ---------------------------------------------------------------------------------------------

const ItemStatus = z.enum(['in_progress', 'completed', 'incomplete']);

/** Input content part (`input_text`, `input_image`, `input_file`) or output part (`output_text`, `refusal`). */
export const ResponseInputTextSchema = z.looseObject({ type: z.literal('input_text'), text: z.string() });
export const ResponseOutputTextSchema = z.looseObject({
  type: z.literal('output_text'),
  text: z.string(),
  annotations: z.array(z.unknown()).optional(),
  logprobs: z.array(z.unknown()).nullable().optional(),
});
export const ResponseOutputRefusalSchema = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
export const IMAGE_DETAILS = ['low', 'high', 'auto', 'original'] as const;
/** An image given by URL (remote or base64 `data:`) or by uploaded file id; `detail` defaults to auto. */
export const ResponseInputImageSchema = z
  .looseObject({
    type: z.literal('input_image'),
    image_url: z.string().nullable().optional(),
    file_id: z.string().nullable().optional(),
    detail: z.enum(IMAGE_DETAILS).optional(),
  })
  .refine((p) => typeof p.image_url === 'string' || typeof p.file_id === 'string', {
    message: 'an input_image needs "image_url" (an http(s) URL or a data:image/...;base64 URL) or "file_id"',
    path: ['image_url'],
  });
export const ResponseContentPartSchema = z.looseObject({ type: z.string() }).superRefine((part, ctx) => {
  const check = (schema: z.ZodType) => {
    const r = compiled(schema).safeParse(part);
    if (!r.success) forwardIssues(ctx, r.error.issues);
  };
  if (part.type === 'input_text') check(ResponseInputTextSchema);
  else if (part.type === 'output_text') check(ResponseOutputTextSchema);
  else if (part.type === 'refusal') check(ResponseOutputRefusalSchema);
  else if (part.type === 'input_image') check(ResponseInputImageSchema);
});
export type ResponseContentPart = z.infer<typeof ResponseContentPartSchema>;

/**
 * A message item: EasyInputMessage, Message or OutputMessage. `type` may be absent (an item with
 * a `role` and no `type` is a message).
 */
export const ResponseMessageItemSchema = z
  .looseObject({
    type: z.literal('message').optional(),
    id: z.string().optional(),
    role: z.enum(['user', 'assistant', 'system', 'developer', 'tool']),
    content: z.union([z.string(), z.array(ResponseContentPartSchema)]).nullable().optional(),
    status: ItemStatus.optional(),
    tool_call_id: z.string().optional(),
    ...optionalTokenFields,
  })
  .superRefine((msg, ctx) => {
    checkTokenBundle(msg, ctx);
    // Assistant turns that only carry tool calls may leave out content; every other role needs it.
    if (msg.role !== 'assistant' && (msg.content === undefined || msg.content === null)) {
      ctx.addIssue({ code: 'custom', message: `a "${msg.role}" message needs "content" (a string or a list of parts)`, path: ['content'] });
    }
    if (msg.role === 'tool' && msg.tool_call_id === undefined) {
      ctx.addIssue({ code: 'custom', message: 'a "tool" message needs "tool_call_id"', path: ['tool_call_id'] });
    }
  });
export type ResponseMessageItem = z.infer<typeof ResponseMessageItemSchema>;

export const ResponseSummarySchema = z.looseObject({ text: z.string(), type: z.literal('summary_text') });

export const ResponseReasoningItemSchema = z
  .looseObject({
    type: z.literal('reasoning'),
    id: z.string(),
    summary: z.array(ResponseSummarySchema),
    encrypted_content: z.string().nullable().optional(),
    ...optionalTokenFields,
  })
  .superRefine(checkTokenBundle);
export type ResponseReasoningItem = z.infer<typeof ResponseReasoningItemSchema>;

export const ResponseFunctionToolCallSchema = z
  .looseObject({
    type: z.literal('function_call'),
    arguments: z.string(),
    call_id: z.string(),
    name: z.string(),
    id: z.string().nullable().optional(),
    status: ItemStatus.nullable().optional(),
    ...optionalTokenFields,
  })
  .superRefine(checkTokenBundle);
export type ResponseFunctionToolCall = z.infer<typeof ResponseFunctionToolCallSchema>;

export const ResponseFunctionCallOutputSchema = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string(),
  output: z.string(),
  id: z.string().nullable().optional(),
  status: ItemStatus.nullable().optional(),
});
export type ResponseFunctionCallOutput = z.infer<typeof ResponseFunctionCallOutputSchema>;

const KNOWN_ITEM_TYPES = new Set(['message', 'reasoning', 'function_call', 'function_call_output']);

/** Items of other types (hosted tools such as web search or MCP calls) pass through untouched. */
export const ResponseOtherItemSchema = z
  .looseObject({ type: z.string() })
  .refine((item) => !KNOWN_ITEM_TYPES.has(item.type), { message: 'known item type handled elsewhere' });
export type ResponseOtherItem = z.infer<typeof ResponseOtherItemSchema>;

export type ResponseItem =
  | ResponseMessageItem
  | ResponseReasoningItem
  | ResponseFunctionToolCall
  | ResponseFunctionCallOutput
  | ResponseOtherItem;

/**
 * Any Responses input or output item. The item's `type` (or, without one, its `role`) selects the
 * schema, so a malformed item reports the errors of its own kind.
 */
export const ResponseItemSchema: z.ZodType<ResponseItem> = z.unknown().transform((value, ctx): ResponseItem => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    ctx.addIssue({ code: 'custom', message: 'each item must be an object with a "type" (or a "role" for messages)' });
    return z.NEVER;
  }
  const v = value as Record<string, unknown>;
  let schema: z.ZodType;
  if (v.type === undefined) {
    if (v.role === undefined) {
      ctx.addIssue({ code: 'custom', message: 'item has neither "type" nor "role"; messages need "role", other items need "type"' });
      return z.NEVER;
    }
    schema = ResponseMessageItemSchema;
  } else if (v.type === 'message') schema = ResponseMessageItemSchema;
  else if (v.type === 'reasoning') schema = ResponseReasoningItemSchema;
  else if (v.type === 'function_call') schema = ResponseFunctionToolCallSchema;
  else if (v.type === 'function_call_output') schema = ResponseFunctionCallOutputSchema;
  else if (typeof v.type === 'string') return value as ResponseOtherItem;
  else {
    ctx.addIssue({ code: 'custom', message: '"type" must be a string', path: ['type'] });
    return z.NEVER;
  }
  const r = compiled(schema).safeParse(value);
  if (!r.success) {
    forwardIssues(ctx, r.error.issues);
    return z.NEVER;
  }
  return r.data as ResponseItem;
});

// ---------------------------------------------------------------------------------------------
// Responses API request
// ---------------------------------------------------------------------------------------------

export const FunctionToolParamSchema = z.looseObject({
  type: z.literal('function'),
  name: z.string(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
  description: z.string().nullable().optional(),
});
export type FunctionToolParam = z.infer<typeof FunctionToolParamSchema>;

/** A tool: function tools are checked; other tool kinds (web search, MCP, ...) pass through. */
export const ToolParamSchema = z.looseObject({ type: z.string() }).superRefine((tool, ctx) => {
  if (tool.type !== 'function') return;
  const r = compiled(FunctionToolParamSchema).safeParse(tool);
  if (!r.success) forwardIssues(ctx, r.error.issues);
});
export type ToolParam = z.infer<typeof ToolParamSchema>;

export const ResponsesToolChoiceSchema = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.string() }),
]);

/** Reasoning effort values of the current API (`none` and `xhigh`/`max` are recent additions). */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;

export const ReasoningParamSchema = z.looseObject({
  effort: z.enum(REASONING_EFFORTS).nullable().optional(),
  generate_summary: z.enum(['auto', 'concise', 'detailed']).nullable().optional(),
  summary: z.enum(['auto', 'concise', 'detailed']).nullable().optional(),
  context: z.enum(['auto', 'current_turn', 'all_turns']).nullable().optional(),
  mode: z.string().optional(),
});

const ResponseItemListSchema = z.array(ResponseItemSchema);

const SERVICE_TIERS = ['auto', 'default', 'flex', 'scale', 'priority', 'fast', 'ultrafast'] as const;

/**
 * Responses create parameters. The field list follows the `openai` npm client named in
 * OPENAI_API_REFERENCE (ResponseCreateParamsBase); an unknown top-level key is still refused
 * (422 extra_forbidden), so a misspelt field fails loudly instead of being ignored. To take a
 * field OpenAI added later: add it here (and, when a Chat Completions backend has an
 * equivalent, map it in converter.ts), then bump OPENAI_API_REFERENCE.
 */
export const ResponseCreateParamsSchema = z.strictObject({
  access_programs: z.looseObject({}).optional(),
  background: z.boolean().nullable().optional(),
  context_management: z.array(z.looseObject({ type: z.string() })).nullable().optional(),
  conversation: z.union([z.string(), z.looseObject({ id: z.string() })]).nullable().optional(),
  image: z.looseObject({}).optional(),
  include: z.array(z.string()).nullable().optional(),
  input: z.unknown().transform((value, ctx): string | ResponseItem[] => {
    if (typeof value === 'string') return value;
    if (!Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: '"input" must be a string or a list of items', input: value });
      return z.NEVER;
    }
    const r = compiled(ResponseItemListSchema).safeParse(value);
    if (!r.success) {
      forwardIssues(ctx, r.error.issues);
      return z.NEVER;
    }
    return r.data;
  }),
  instructions: z.string().nullable().optional(),
  max_output_tokens: z.number().int().nullable().optional(),
  max_tool_calls: z.number().int().nullable().optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  model: z.string().nullable().optional(),
  moderation: z.looseObject({ model: z.string() }).nullable().optional(),
  // null is accepted for the three defaulted fields: rollout files written before the current
  // defaults carry `parallel_tool_calls: null` / `tool_choice: null`, and they are fed back to /verify.
  parallel_tool_calls: z.boolean().nullable().optional(),
  previous_response_id: z.string().nullable().optional(),
  prompt: z.looseObject({ id: z.string() }).nullable().optional(),
  prompt_cache_key: z.string().nullable().optional(),
  prompt_cache_options: z.looseObject({}).optional(),
  prompt_cache_retention: z.enum(['in_memory', '24h']).nullable().optional(),
  reasoning: ReasoningParamSchema.nullable().optional(),
  safety_identifier: z.string().nullable().optional(),
  service_tier: z.enum(SERVICE_TIERS).nullable().optional(),
  store: z.boolean().nullable().optional(),
  stream_options: z.looseObject({}).nullable().optional(),
  temperature: z.number().nullable().optional(),
  text: z.looseObject({}).nullable().optional(),
  tool_choice: ResponsesToolChoiceSchema.nullable().optional(),
  tools: z.array(ToolParamSchema).nullable().optional(),
  top_logprobs: z.number().int().nullable().optional(),
  top_p: z.number().nullable().optional(),
  truncation: z.enum(['auto', 'disabled']).nullable().optional(),
  user: z.string().nullable().optional(),
  stream: z.boolean().nullable().optional(),
});
export type ResponseCreateParams = z.infer<typeof ResponseCreateParamsSchema>;

/** Field order of the full request dump. */
export const RESPONSE_CREATE_PARAMS_KEYS = [
  'background', 'include', 'input', 'instructions', 'max_output_tokens', 'max_tool_calls', 'metadata', 'model',
  'parallel_tool_calls', 'previous_response_id', 'prompt', 'reasoning', 'service_tier', 'store', 'temperature',
  'text', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'truncation', 'user', 'stream',
] as const;

/** Defaults of the full request dump; `tools` gets a fresh list per dump. */
function createParamsDefault(k: string): unknown {
  if (k === 'parallel_tool_calls') return true;
  if (k === 'tool_choice') return 'auto';
  if (k === 'tools') return [];
  return null;
}

/** `obj`'s keys in `order` first (null for a missing one when `fill`), then its other keys in their own order. */
function orderKeys(obj: Record<string, unknown>, order: readonly string[], fill: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < order.length; i++) {
    const k = order[i]!;
    if (k in obj) out[k] = obj[k];
    else if (fill) out[k] = null;
  }
  for (const k in obj) if (!(k in out) && Object.prototype.hasOwnProperty.call(obj, k)) out[k] = obj[k];
  return out;
}

const FUNCTION_TOOL_KEYS = ['name', 'parameters', 'strict', 'type', 'description'];

/** Function tools are serialized as name, parameters, strict, type, description. */
function fullToolDump(tool: Record<string, unknown>): Record<string, unknown> {
  if (tool.type !== 'function') return tool;
  return orderKeys(tool, FUNCTION_TOOL_KEYS, false);
}

/**
 * The complete request dump (every field, nulls and defaults filled in, key order of the
 * Python model), as written into rollout files and sent to `/seed_session` and `/verify`.
 */
export function fullCreateParamsDump(params: ResponseCreateParams | Record<string, unknown>): Record<string, unknown> {
  const p = params as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of RESPONSE_CREATE_PARAMS_KEYS) {
    const v = p[k];
    out[k] = v !== undefined ? v : createParamsDefault(k);
  }
  // Fields newer than the Python model (prompt_cache_key, conversation, ...) follow, only when set.
  for (const k in p) {
    if (!Object.prototype.hasOwnProperty.call(p, k) || k in out) continue;
    const v = p[k];
    if (v !== undefined) out[k] = v;
  }
  if (Array.isArray(out.input)) out.input = (out.input as unknown[]).map((it) => fullItemDump(it as ResponseItem));
  if (Array.isArray(out.tools)) out.tools = (out.tools as Record<string, unknown>[]).map(fullToolDump);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Full item dumps
// ---------------------------------------------------------------------------------------------

function withTokenFieldsFirst(item: Record<string, unknown>, body: Record<string, unknown>): Record<string, unknown> {
  if (!hasTokenFields(item)) return body;
  return {
    prompt_token_ids: item.prompt_token_ids,
    generation_token_ids: item.generation_token_ids,
    generation_log_probs: item.generation_log_probs,
    ...body,
  };
}

const OUTPUT_TEXT_KEYS = ['annotations', 'text', 'type', 'logprobs'];
const REFUSAL_KEYS = ['refusal', 'type'];
const SUMMARY_KEYS = ['text', 'type'];

function fullContentPartDump(part: Record<string, unknown>): Record<string, unknown> {
  if (part.type === 'output_text') {
    // As orderKeys({ annotations: [], logprobs: null, ...part }, OUTPUT_TEXT_KEYS), without the copy.
    const out: Record<string, unknown> = { annotations: 'annotations' in part ? part.annotations : [] };
    if ('text' in part) out.text = part.text;
    if ('type' in part) out.type = part.type;
    out.logprobs = 'logprobs' in part ? part.logprobs : null;
    for (const k in part) if (!(k in out) && Object.prototype.hasOwnProperty.call(part, k)) out[k] = part[k];
    return out;
  }
  if (part.type === 'refusal') return orderKeys(part, REFUSAL_KEYS, false);
  return part;
}

const TOKEN_FIELDS: ReadonlySet<string> = new Set(TOKEN_FIELD_KEYS);
const NO_KEYS: ReadonlySet<string> = new Set();
const ASSISTANT_OUTPUT_KEYS = ['id', 'content', 'role', 'status', 'type'];
const MESSAGE_WITH_STATUS_KEYS = ['content', 'role', 'status', 'type'];
const EASY_MESSAGE_KEYS = ['content', 'role', 'type'];
const REASONING_KEYS = ['id', 'summary', 'type', 'encrypted_content'];
const FUNCTION_CALL_KEYS = ['arguments', 'call_id', 'name', 'type', 'id', 'status'];
const FUNCTION_CALL_OUTPUT_KEYS = ['call_id', 'output', 'type', 'id', 'status'];
const COMPLETED = { status: 'completed' };
const NO_DEFAULTS = {};
const REASONING_DEFAULTS = { encrypted_content: null };
const ID_STATUS_DEFAULTS = { id: null, status: null };

/**
 * Full dump of one item as the Python union resolves it: string content -> EasyInputMessage
 * (content, role, type); an assistant message with an id -> OutputMessage (id, content, role,
 * status, type); a non-assistant message with a status -> Message; training variants put the
 * three token fields first. Extra keys are kept after the known ones.
 */
export function fullItemDump(item: ResponseItem | Record<string, unknown>): Record<string, unknown> {
  const it = item as Record<string, unknown>;
  const skip = TOKEN_FIELDS;
  const type = it.type ?? (it.role !== undefined ? 'message' : undefined);
  if (type === 'message') {
    const base: Record<string, unknown> = it.type === 'message' ? it : { ...it, type: 'message' };
    if (Array.isArray(it.content) && it.role === 'assistant' && typeof it.id === 'string') {
      const body = orderAndFill(base, ASSISTANT_OUTPUT_KEYS, COMPLETED, skip);
      body.content = (it.content as Record<string, unknown>[]).map(fullContentPartDump);
      return withTokenFieldsFirst(it, body);
    }
    if (Array.isArray(it.content) && it.role !== 'assistant' && it.status !== undefined) {
      return withTokenFieldsFirst(it, orderAndFill(base, MESSAGE_WITH_STATUS_KEYS, NO_DEFAULTS, skip));
    }
    return withTokenFieldsFirst(it, orderAndFill(base, EASY_MESSAGE_KEYS, NO_DEFAULTS, skip));
  }
  if (type === 'reasoning') {
    const body = orderAndFill(it, REASONING_KEYS, REASONING_DEFAULTS, skip);
    delete body.status;
    if (Array.isArray(it.summary)) {
      body.summary = (it.summary as Record<string, unknown>[]).map((s) => orderKeys(s, SUMMARY_KEYS, false));
    }
    return withTokenFieldsFirst(it, body);
  }
  if (type === 'function_call') {
    return withTokenFieldsFirst(it, orderAndFill(it, FUNCTION_CALL_KEYS, ID_STATUS_DEFAULTS, skip));
  }
  if (type === 'function_call_output') {
    return orderAndFill(it, FUNCTION_CALL_OUTPUT_KEYS, ID_STATUS_DEFAULTS, NO_KEYS);
  }
  return it;
}

function orderAndFill(
  obj: Record<string, unknown>,
  order: readonly string[],
  defaults: Record<string, unknown>,
  skip: ReadonlySet<string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < order.length; i++) {
    const k = order[i]!;
    const v = obj[k];
    if (v !== undefined) out[k] = v;
    else if (k in defaults) out[k] = defaults[k];
  }
  for (const k in obj) {
    if (!(k in out) && !skip.has(k) && Object.prototype.hasOwnProperty.call(obj, k)) {
      const v = obj[k];
      // Object.entries kept undefined values; so does this.
      out[k] = v;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Responses API response
// ---------------------------------------------------------------------------------------------

export const ResponseUsageSchema = z.looseObject({
  input_tokens: z.number(),
  input_tokens_details: z.looseObject({ cached_tokens: z.number() }).nullable().optional(),
  output_tokens: z.number(),
  output_tokens_details: z.looseObject({ reasoning_tokens: z.number() }).nullable().optional(),
  total_tokens: z.number(),
});
export type ResponseUsage = z.infer<typeof ResponseUsageSchema>;

export const ResponseSchema = z.looseObject({
  id: z.string(),
  created_at: z.number(),
  error: z.looseObject({}).nullable().optional(),
  incomplete_details: z.looseObject({ reason: z.string().nullable().optional() }).nullable().optional(),
  instructions: z.union([z.string(), z.array(z.unknown())]).nullable().optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  model: z.string(),
  object: z.literal('response'),
  output: z.array(ResponseItemSchema),
  parallel_tool_calls: z.boolean(),
  temperature: z.number().nullable().optional(),
  tool_choice: ResponsesToolChoiceSchema,
  tools: z.array(ToolParamSchema),
  top_p: z.number().nullable().optional(),
  status: z.string().nullable().optional(),
  usage: ResponseUsageSchema.nullable().optional(),
});
export type NeMoGymResponse = z.infer<typeof ResponseSchema>;

/** Serialized key order of a Response. */
export const RESPONSE_KEYS = [
  'id', 'created_at', 'error', 'incomplete_details', 'instructions', 'metadata', 'model', 'object', 'output',
  'parallel_tool_calls', 'temperature', 'tool_choice', 'tools', 'top_p', 'background', 'conversation',
  'max_output_tokens', 'max_tool_calls', 'previous_response_id', 'prompt', 'prompt_cache_key', 'reasoning',
  'safety_identifier', 'service_tier', 'status', 'text', 'top_logprobs', 'truncation', 'usage', 'user',
] as const;

/** The complete Response dump: every key of the SDK model (null when absent), extra keys kept after them. */
export function fullResponseDump(resp: NeMoGymResponse | Record<string, unknown>): Record<string, unknown> {
  const r = resp as Record<string, unknown>;
  const out = orderKeys(r, RESPONSE_KEYS, true);
  for (const k of RESPONSE_KEYS) if (out[k] === undefined) out[k] = null;
  if (Array.isArray(out.output)) out.output = (out.output as Record<string, unknown>[]).map((it) => fullItemDump(it));
  if (Array.isArray(out.tools)) out.tools = (out.tools as Record<string, unknown>[]).map(fullToolDump);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Chat Completions
// ---------------------------------------------------------------------------------------------

const TextPartSchema = z.looseObject({ type: z.literal('text'), text: z.string() });
const TextContent = z.union([z.string(), z.array(TextPartSchema)]);

export const ChatToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});
export type ChatToolCall = z.infer<typeof ChatToolCallSchema>;

export const ChatSystemMessageSchema = z.looseObject({ role: z.literal('system'), content: TextContent, name: z.string().optional() });
export const ChatDeveloperMessageSchema = z.looseObject({ role: z.literal('developer'), content: TextContent, name: z.string().optional() });
/** A Chat Completions image part: `{type: "image_url", image_url: {url, detail?}}`. */
export const ChatImagePartSchema = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({ url: z.string(), detail: z.enum(IMAGE_DETAILS).optional() }),
});
const ChatUserPartSchema = z.looseObject({ type: z.string() }).superRefine((part, ctx) => {
  if (part.type !== 'image_url') return;
  const r = compiled(ChatImagePartSchema).safeParse(part);
  if (!r.success) forwardIssues(ctx, r.error.issues);
});
export const ChatUserMessageSchema = z.looseObject({
  role: z.literal('user'),
  content: z.union([z.string(), z.array(ChatUserPartSchema)]),
  name: z.string().optional(),
});
export const ChatToolMessageSchema = z.looseObject({ role: z.literal('tool'), content: TextContent, tool_call_id: z.string() });
export const ChatAssistantMessageSchema = z
  .looseObject({
    role: z.literal('assistant'),
    content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).nullable().optional(),
    tool_calls: z.array(ChatToolCallSchema).nullable().optional(),
    ...optionalTokenFields,
  })
  .superRefine(checkTokenBundle);

export const ChatMessageSchema = z.discriminatedUnion('role', [
  ChatSystemMessageSchema,
  ChatDeveloperMessageSchema,
  ChatUserMessageSchema,
  ChatToolMessageSchema,
  ChatAssistantMessageSchema,
]);
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

export const ChatToolParamSchema = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string(),
    description: z.string().nullable().optional(),
    parameters: z.record(z.string(), z.unknown()).nullable().optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

/**
 * Chat Completions request. Unknown top-level keys are dropped (as the Python model does), so
 * backend-specific parameters do not reach the backend through this schema.
 */
export const ChatCompletionCreateParamsSchema = z.object({
  messages: z.array(ChatMessageSchema),
  model: z.string().nullable().optional(),
  audio: z.looseObject({}).nullable().optional(),
  frequency_penalty: z.number().nullable().optional(),
  logit_bias: z.record(z.string(), z.number()).nullable().optional(),
  logprobs: z.boolean().nullable().optional(),
  max_completion_tokens: z.number().int().nullable().optional(),
  max_tokens: z.number().int().nullable().optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  modalities: z.array(z.enum(['text', 'audio'])).nullable().optional(),
  n: z.number().int().nullable().optional(),
  parallel_tool_calls: z.boolean().optional(),
  prediction: z.looseObject({}).nullable().optional(),
  presence_penalty: z.number().nullable().optional(),
  moderation: z.looseObject({ model: z.string() }).nullable().optional(),
  prompt_cache_key: z.string().nullable().optional(),
  prompt_cache_options: z.looseObject({}).optional(),
  prompt_cache_retention: z.enum(['in_memory', '24h']).nullable().optional(),
  reasoning_effort: z.string().nullable().optional(),
  response_format: z.looseObject({ type: z.string() }).nullable().optional(),
  safety_identifier: z.string().nullable().optional(),
  seed: z.number().int().nullable().optional(),
  service_tier: z.enum(SERVICE_TIERS).nullable().optional(),
  stop: z.union([z.string(), z.array(z.string())]).nullable().optional(),
  store: z.boolean().nullable().optional(),
  stream_options: z.looseObject({}).nullable().optional(),
  temperature: z.number().nullable().optional(),
  tool_choice: z.union([z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.string() })]).nullable().optional(),
  tools: z.array(ChatToolParamSchema).nullable().optional(),
  top_logprobs: z.number().int().nullable().optional(),
  top_p: z.number().nullable().optional(),
  user: z.string().nullable().optional(),
  verbosity: z.enum(['low', 'medium', 'high']).nullable().optional(),
  web_search_options: z.looseObject({}).nullable().optional(),
  stream: z.boolean().nullable().optional(),
});
export type ChatCompletionCreateParams = z.infer<typeof ChatCompletionCreateParamsSchema>;

export const ChatCompletionMessageSchema = z
  .looseObject({
    role: z.literal('assistant'),
    content: z.string().nullable().optional(),
    refusal: z.string().nullable().optional(),
    tool_calls: z.array(ChatToolCallSchema).nullable().optional(),
    reasoning_content: z.string().nullable().optional(),
    ...optionalTokenFields,
  })
  .superRefine(checkTokenBundle);
export type ChatCompletionMessage = z.infer<typeof ChatCompletionMessageSchema>;

export const ChatChoiceSchema = z.looseObject({
  index: z.number().int(),
  finish_reason: z.string().nullable().optional(),
  message: ChatCompletionMessageSchema,
  logprobs: z.looseObject({}).nullable().optional(),
});

export const ChatUsageSchema = z.looseObject({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
});

export const ChatCompletionSchema = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number(),
  model: z.string(),
  choices: z.array(ChatChoiceSchema),
  usage: ChatUsageSchema.nullable().optional(),
});
export type ChatCompletion = z.infer<typeof ChatCompletionSchema>;
