/**
 * Anthropic Messages on top of the Responses API: the one converter behind `POST /v1/messages`
 * of every model server. A Messages request becomes the Responses request the server already
 * serves; its Response (or its Responses event stream) becomes an Anthropic Message (or the
 * Messages event stream: message_start, content_block_start / _delta / _stop, message_delta,
 * message_stop). Shapes follow the `@anthropic-ai/sdk` types (`resources/messages`).
 *
 * What has no Responses equivalent is dropped and reported through `onDropped` (top-level
 * fields such as `top_k`, `thinking`, `metadata`; block types such as `document` and
 * `redacted_thinking`). `stop_sequences` is applied here, to the text the backend returns:
 * the text ends before the first stop sequence and `stop_reason` is `stop_sequence`.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { compiled } from '../compiled-schema.js';
import type { SseEvent } from '../http/sse.js';
import { TOKEN_FIELD_KEYS, hasTokenFields, type TokenFields } from './schemas.js';

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Request schema
// ---------------------------------------------------------------------------------------------

const TextBlockParamSchema = z.looseObject({ type: z.literal('text'), text: z.string() });
const ImageBlockParamSchema = z.looseObject({
  type: z.literal('image'),
  source: z.union([
    z.looseObject({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
    z.looseObject({ type: z.literal('url'), url: z.string() }),
  ]),
});
const ToolUseBlockParamSchema = z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() });
const ToolResultBlockParamSchema = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  is_error: z.boolean().optional(),
});
const ThinkingBlockParamSchema = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().optional() });

const BLOCK_SCHEMAS: Record<string, z.ZodType> = {
  text: TextBlockParamSchema,
  image: ImageBlockParamSchema,
  tool_use: ToolUseBlockParamSchema,
  tool_result: ToolResultBlockParamSchema,
  thinking: ThinkingBlockParamSchema,
};

/** A content block: the kinds this converter maps are checked; other kinds pass (and are dropped). */
const ContentBlockParamSchema = z.looseObject({ type: z.string() }).superRefine((block, ctx) => {
  const schema = Object.hasOwn(BLOCK_SCHEMAS, block.type) ? BLOCK_SCHEMAS[block.type] : undefined;
  if (!schema) return;
  const r = compiled(schema).safeParse(block);
  if (!r.success) for (const issue of r.error.issues) ctx.addIssue({ ...issue, path: issue.path } as unknown as z.core.$ZodRawIssue);
});

const MessageParamSchema = z.looseObject({
  role: z.enum(['user', 'assistant', 'system']),
  content: z.union([z.string(), z.array(ContentBlockParamSchema)]),
  prompt_token_ids: z.array(z.number().int()).optional(),
  generation_token_ids: z.array(z.number().int()).optional(),
  generation_log_probs: z.array(z.number()).optional(),
});

const MessagesToolSchema = z.looseObject({
  name: z.string(),
  type: z.string().nullable().optional(),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()).optional(),
});

const MessagesToolChoiceSchema = z.looseObject({
  type: z.enum(['auto', 'any', 'tool', 'none']),
  name: z.string().optional(),
  disable_parallel_tool_use: z.boolean().optional(),
});

const countTokensShape = {
  model: z.string(),
  messages: z.array(MessageParamSchema),
  system: z.union([z.string(), z.array(TextBlockParamSchema)]).optional(),
  tools: z.array(MessagesToolSchema).optional(),
  tool_choice: MessagesToolChoiceSchema.optional(),
};

/**
 * `POST /v1/messages` body. Unknown top-level fields are accepted and dropped (clients such as
 * Claude Code send beta fields freely); the fields mapped are checked.
 */
export const MessagesCreateParamsSchema = z.looseObject({
  ...countTokensShape,
  max_tokens: z.number().int().positive(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  top_k: z.number().optional(),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
});
export type MessagesCreateParams = z.infer<typeof MessagesCreateParamsSchema>;

/** `POST /v1/messages/count_tokens` body (no `max_tokens`). */
export const MessagesCountTokensParamsSchema = z.looseObject(countTokensShape);

type MessageParam = z.infer<typeof MessageParamSchema>;
type ContentBlockParam = z.infer<typeof ContentBlockParamSchema>;

// ---------------------------------------------------------------------------------------------
// Response types (the subset of the SDK's `Message` this converter produces)
// ---------------------------------------------------------------------------------------------

export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

export type AnthropicContentBlock =
  | { type: 'text'; text: string; citations: null }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface AnthropicMessage extends Partial<TokenFields> {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

// ---------------------------------------------------------------------------------------------
// Messages request -> Responses request
// ---------------------------------------------------------------------------------------------

export interface MessagesConversion {
  /** The Responses request (to be checked with ResponseCreateParamsSchema by the caller). */
  params: Json;
  /** Applied to the answer's text (Responses has no stop sequences). */
  stopSequences: string[];
  /** The model the client named (echoed when the backend names none). */
  model: string;
  /** Fields and block types set in the request that have no Responses equivalent. */
  dropped: string[];
}

/** Top-level fields mapped onto the Responses request (everything else set is reported as dropped). */
const MAPPED_FIELDS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'max_tokens', 'temperature', 'top_p', 'stop_sequences', 'stream']);

const textOf = (blocks: readonly Json[]): string => blocks.map((b) => (typeof b.text === 'string' ? b.text : '')).join('');

function imageUrl(block: ContentBlockParam): string {
  const source = block.source as Json;
  return source.type === 'base64' ? `data:${String(source.media_type)};base64,${String(source.data)}` : String(source.url);
}

/** A thinking block's signature carries its reasoning item's id (see responseToMessage). */
function reasoningId(signature: unknown, fallback: string): string {
  return typeof signature === 'string' && signature.startsWith('rs_') ? signature : fallback;
}

/** One Messages turn -> Responses input items, in block order. */
function turnItems(msg: MessageParam, at: number, dropped: Set<string>): Json[] {
  const role = msg.role;
  if (typeof msg.content === 'string') {
    return role === 'assistant'
      ? [{ type: 'message', role, content: [{ type: 'output_text', text: msg.content, annotations: [] }] }]
      : [{ type: 'message', role, content: msg.content }];
  }
  if (role === 'system') return [{ type: 'message', role, content: textOf(msg.content) }];
  const items: Json[] = [];
  let parts: Json[] = [];
  // Images of tool results go after the run of tool outputs (a backend wants the outputs right after the calls).
  let toolImages: Json[] = [];
  const flush = () => {
    if (toolImages.length) {
      parts = [...toolImages, ...parts];
      toolImages = [];
    }
    if (parts.length) items.push({ type: 'message', role, content: parts });
    parts = [];
  };
  msg.content.forEach((block, b) => {
    switch (block.type) {
      case 'text':
        parts.push(role === 'assistant' ? { type: 'output_text', text: block.text, annotations: [] } : { type: 'input_text', text: block.text });
        return;
      case 'image':
        if (role === 'assistant') dropped.add('messages[].content[].type=image (assistant)');
        else parts.push({ type: 'input_image', image_url: imageUrl(block), detail: 'auto' });
        return;
      case 'tool_result': {
        const pending = toolImages;
        toolImages = [];
        flush();
        toolImages = pending;
        const content = block.content;
        const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : ((content ?? []) as Json[]);
        for (const c of blocks) {
          if (c.type === 'image') toolImages.push({ type: 'input_image', image_url: imageUrl(c as ContentBlockParam), detail: 'auto' });
          else if (c.type !== 'text') dropped.add(`tool_result.content[].type=${String(c.type)}`);
        }
        if (block.is_error === true) dropped.add('tool_result.is_error');
        items.push({ type: 'function_call_output', call_id: block.tool_use_id, output: textOf(blocks.filter((c) => c.type === 'text')) });
        return;
      }
      case 'tool_use':
        flush();
        items.push({ type: 'function_call', call_id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
        return;
      case 'thinking':
        flush();
        items.push({ type: 'reasoning', id: reasoningId(block.signature, `rs_m${at}b${b}`), summary: [{ type: 'summary_text', text: block.thinking }] });
        return;
      default:
        dropped.add(`messages[].content[].type=${block.type}`);
    }
  });
  flush();
  return items;
}

/**
 * A Messages request -> the Responses request for it. Training fields on an assistant turn
 * (prompt_token_ids, generation_token_ids, generation_log_probs) ride on that turn's last item,
 * where the Responses converters look for them.
 */
export function messagesToResponsesParams(body: MessagesCreateParams): MessagesConversion {
  const dropped = new Set<string>();
  for (const [k, v] of Object.entries(body)) if (!MAPPED_FIELDS.has(k) && v !== undefined && v !== null) dropped.add(k);
  const input: Json[] = [];
  if (body.system !== undefined) {
    const system = typeof body.system === 'string' ? body.system : textOf(body.system);
    if (system) input.push({ type: 'message', role: 'system', content: system });
  }
  body.messages.forEach((msg, at) => {
    const items = turnItems(msg, at, dropped);
    if (msg.role === 'assistant' && hasTokenFields(msg) && items.length) {
      const last = items[items.length - 1]!;
      for (const k of TOKEN_FIELD_KEYS) last[k] = msg[k];
    }
    input.push(...items);
  });
  const params: Json = { model: body.model, input, max_output_tokens: body.max_tokens };
  if (body.temperature !== undefined) params.temperature = body.temperature;
  if (body.top_p !== undefined) params.top_p = body.top_p;
  if (body.stream !== undefined) params.stream = body.stream;
  const tools: Json[] = [];
  for (const tool of body.tools ?? []) {
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
      dropped.add(`tools[].type=${tool.type}`);
      continue;
    }
    const fn: Json = { type: 'function', name: tool.name, parameters: tool.input_schema ?? { type: 'object', properties: {} }, strict: false };
    if (tool.description !== undefined) fn.description = tool.description;
    tools.push(fn);
  }
  if (tools.length) params.tools = tools;
  const choice = body.tool_choice;
  if (choice) {
    params.tool_choice = choice.type === 'any' ? 'required' : choice.type === 'tool' ? { type: 'function', name: choice.name ?? '' } : choice.type;
    if (choice.disable_parallel_tool_use === true) params.parallel_tool_calls = false;
  }
  return { params, stopSequences: (body.stop_sequences ?? []).filter((s) => s !== ''), model: body.model, dropped: [...dropped] };
}

// ---------------------------------------------------------------------------------------------
// Response -> Message
// ---------------------------------------------------------------------------------------------

/** The earliest stop sequence in `text` at or after `from`, or null. */
function findStop(text: string, stops: readonly string[], from = 0): { at: number; sequence: string } | null {
  let best: { at: number; sequence: string } | null = null;
  for (const s of stops) {
    const at = text.indexOf(s, from);
    if (at >= 0 && (best === null || at < best.at)) best = { at, sequence: s };
  }
  return best;
}

/** A tool call's arguments as the `input` of a tool_use block (the raw text when it is not JSON). */
function toolInput(args: unknown): unknown {
  if (typeof args !== 'string') return args ?? {};
  if (args.trim() === '') return {};
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}

/** Between the summaries of one reasoning item in its thinking block. */
const SUMMARY_JOIN = '\n\n';

/** The thinking texts of a reasoning item: its summaries, else its reasoning_text parts. */
function reasoningTexts(item: Json): string[] {
  const summary = Array.isArray(item.summary) ? (item.summary as Json[]) : [];
  const parts = summary.length ? summary : Array.isArray(item.content) ? (item.content as Json[]) : [];
  return parts.map((p) => (typeof p.text === 'string' ? p.text : '')).filter((t) => t !== '');
}

function usageOf(response: Json): AnthropicUsage {
  const u = (response.usage ?? {}) as Json;
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const cached = count((u.input_tokens_details as Json | undefined)?.cached_tokens);
  // Anthropic's input_tokens leaves out the tokens read from the cache.
  return { input_tokens: Math.max(0, count(u.input_tokens) - cached), output_tokens: count(u.output_tokens), cache_creation_input_tokens: 0, cache_read_input_tokens: cached };
}

function stopReasonOf(response: Json, content: readonly AnthropicContentBlock[], refused: boolean): AnthropicStopReason {
  if (response.status === 'incomplete') {
    const reason = (response.incomplete_details as Json | null | undefined)?.reason;
    if (reason === 'content_filter') return 'refusal';
    return 'max_tokens';
  }
  if (content.some((b) => b.type === 'tool_use')) return 'tool_use';
  return refused ? 'refusal' : 'end_turn';
}

/** The training fields of the last output item that carries them. */
function tokenFieldsOf(output: readonly Json[]): TokenFields | null {
  for (let i = output.length - 1; i >= 0; i--) {
    const item = output[i]!;
    if (hasTokenFields(item)) return { prompt_token_ids: item.prompt_token_ids, generation_token_ids: item.generation_token_ids, generation_log_probs: item.generation_log_probs };
  }
  return null;
}

const messageId = (responseId: unknown): string =>
  typeof responseId === 'string' && responseId ? `msg_${responseId.replace(/^(resp|msg)_/, '')}` : `msg_${randomUUID().replace(/-/g, '')}`;

/**
 * A Response -> an Anthropic Message: reasoning items become thinking blocks (the signature is
 * the reasoning item's id, so the block finds its item again when sent back), output text and
 * refusals text blocks, function calls tool_use blocks. Other item kinds are left out.
 */
export function responseToMessage(response: Json, opts: { model: string; stopSequences?: readonly string[] }): AnthropicMessage {
  const content: AnthropicContentBlock[] = [];
  let refused = false;
  let stop: string | null = null;
  const output = (Array.isArray(response.output) ? response.output : []) as Json[];
  for (const item of output) {
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    if (type === 'reasoning') {
      const texts = reasoningTexts(item);
      if (texts.length) content.push({ type: 'thinking', thinking: texts.join(SUMMARY_JOIN), signature: typeof item.id === 'string' ? item.id : '' });
    } else if (type === 'message') {
      for (const part of (Array.isArray(item.content) ? item.content : []) as Json[]) {
        if (part.type === 'refusal' && typeof part.refusal === 'string') {
          refused = true;
          content.push({ type: 'text', text: part.refusal, citations: null });
        } else if (typeof part.text === 'string') content.push({ type: 'text', text: part.text, citations: null });
      }
    } else if (type === 'function_call') {
      content.push({ type: 'tool_use', id: String(item.call_id ?? item.id ?? ''), name: String(item.name ?? ''), input: toolInput(item.arguments) });
    }
  }
  // Stop sequences: the first text that holds one ends there, and so does the message.
  const stops = opts.stopSequences ?? [];
  if (stops.length) {
    for (let i = 0; i < content.length; i++) {
      const block = content[i]!;
      if (block.type !== 'text') continue;
      const hit = findStop(block.text, stops);
      if (hit) {
        content.splice(i, content.length - i, ...(hit.at > 0 ? [{ ...block, text: block.text.slice(0, hit.at) }] : []));
        stop = hit.sequence;
        break;
      }
    }
  }
  const message: AnthropicMessage = {
    id: messageId(response.id),
    type: 'message',
    role: 'assistant',
    model: typeof response.model === 'string' && response.model ? response.model : opts.model,
    content,
    stop_reason: stop !== null ? 'stop_sequence' : stopReasonOf(response, content, refused),
    stop_sequence: stop,
    usage: usageOf(response),
  };
  const tokens = tokenFieldsOf(output);
  if (tokens) Object.assign(message, tokens);
  return message;
}

// ---------------------------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------------------------

const ev = (type: string, fields: Json): SseEvent => ({ event: type, data: JSON.stringify({ type, ...fields }) });

/** One open content block of the Messages stream. */
interface OpenBlock {
  index: number;
  kind: 'text' | 'thinking' | 'tool_use';
  /** Everything received for it (text, thinking or argument JSON). */
  received: string;
  /** How much of `received` was sent (text is held back while it may be the start of a stop sequence). */
  sent: number;
}

/**
 * Turns a Responses event stream into the Messages event stream, event by event: text, reasoning
 * and tool-call argument deltas are passed on as they arrive; the final Response (from
 * response.completed / response.incomplete) gives stop_reason, usage and the training fields,
 * which ride on message_delta. Stop sequences end the text where they start.
 */
export class MessagesEventStream {
  private nextIndex = 0;
  private readonly blocks = new Map<string, OpenBlock>();
  /** Keys of blocks already closed (a later event for them, e.g. output_item.done after content_part.done, sends nothing). */
  private readonly closed = new Set<string>();
  private started = false;
  private ended = false;
  private stopped: string | null = null;
  private readonly maxStop: number;
  private readonly id: string;

  constructor(
    private readonly model: string,
    private readonly stopSequences: readonly string[] = [],
  ) {
    this.maxStop = Math.max(0, ...stopSequences.map((s) => s.length));
    this.id = messageId(undefined);
  }

  /** message_start (sent once, before anything else). */
  start(model?: string): SseEvent[] {
    if (this.started) return [];
    this.started = true;
    const message = { id: this.id, type: 'message', role: 'assistant', model: model || this.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } };
    return [ev('message_start', { message })];
  }

  private open(key: string, kind: OpenBlock['kind'], contentBlock: Json): SseEvent[] {
    if (this.blocks.has(key) || this.closed.has(key) || this.stopped !== null) return [];
    const block: OpenBlock = { index: this.nextIndex++, kind, received: '', sent: 0 };
    this.blocks.set(key, block);
    return [...this.start(), ev('content_block_start', { index: block.index, content_block: contentBlock })];
  }

  private deltaEvent(block: OpenBlock, piece: string): SseEvent {
    const delta = block.kind === 'text' ? { type: 'text_delta', text: piece } : block.kind === 'thinking' ? { type: 'thinking_delta', thinking: piece } : { type: 'input_json_delta', partial_json: piece };
    return ev('content_block_delta', { index: block.index, delta });
  }

  /** Adds text to a block and sends what can be sent; `final` sends the rest. */
  private push(key: string, piece: string, final = false): SseEvent[] {
    const block = this.blocks.get(key);
    if (!block || this.stopped !== null) return [];
    block.received += piece;
    if (block.kind !== 'text' || this.stopSequences.length === 0) {
      const out = block.received.length > block.sent ? [this.deltaEvent(block, block.received.slice(block.sent))] : [];
      block.sent = block.received.length;
      return out;
    }
    const hit = findStop(block.received, this.stopSequences, Math.max(0, block.sent - this.maxStop + 1));
    const upTo = hit ? hit.at : final ? block.received.length : Math.max(block.sent, block.received.length - this.maxStop + 1);
    const out = upTo > block.sent ? [this.deltaEvent(block, block.received.slice(block.sent, upTo))] : [];
    block.sent = upTo;
    if (hit) {
      this.stopped = hit.sequence;
      out.push(ev('content_block_stop', { index: block.index }));
    }
    return out;
  }

  /** Sends what a finished block holds beyond what was streamed, and closes it (`stop: false` leaves the stop event to the caller). */
  private close(key: string, full?: string, stop = true): SseEvent[] {
    const block = this.blocks.get(key);
    if (!block || this.stopped !== null) return [];
    const out: SseEvent[] = [];
    if (full !== undefined && full.length > block.received.length && full.startsWith(block.received)) out.push(...this.push(key, full.slice(block.received.length)));
    if (this.stopped === null) out.push(...this.push(key, '', true));
    if (this.stopped === null && stop) out.push(ev('content_block_stop', { index: block.index }));
    this.blocks.delete(key);
    this.closed.add(key);
    return out;
  }

  /** The Messages events for one Responses event. */
  event(e: Json): SseEvent[] {
    if (this.ended) return [];
    const type = String(e.type ?? '');
    const at = String(e.output_index ?? 0);
    const item = (e.item ?? {}) as Json;
    switch (type) {
      case 'response.created':
      case 'response.in_progress':
        return this.start(String(((e.response ?? {}) as Json).model ?? ''));
      case 'response.output_item.added':
        if (item.type === 'function_call') {
          const args = typeof item.arguments === 'string' ? item.arguments : '';
          return [...this.open(at, 'tool_use', { type: 'tool_use', id: String(item.call_id ?? item.id ?? ''), name: String(item.name ?? ''), input: {} }), ...(args ? this.push(at, args) : [])];
        }
        if (item.type === 'reasoning') {
          const out = this.open(at, 'thinking', { type: 'thinking', thinking: '', signature: '' });
          const texts = reasoningTexts(item);
          return texts.length ? [...out, ...this.push(at, texts.join(SUMMARY_JOIN))] : out;
        }
        return this.start();
      case 'response.content_part.added': {
        const part = (e.part ?? {}) as Json;
        if (part.type !== 'output_text' && part.type !== 'refusal') return [];
        return this.open(`${at}:${String(e.content_index ?? 0)}`, 'text', { type: 'text', text: '', citations: null });
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const key = `${at}:${String(e.content_index ?? 0)}`;
        return [...this.open(key, 'text', { type: 'text', text: '', citations: null }), ...this.push(key, String(e.delta ?? ''))];
      }
      case 'response.content_part.done': {
        const part = (e.part ?? {}) as Json;
        const full = typeof part.text === 'string' ? part.text : typeof part.refusal === 'string' ? part.refusal : undefined;
        return this.close(`${at}:${String(e.content_index ?? 0)}`, full);
      }
      case 'response.reasoning_summary_part.added':
        // A second summary of the same item: the thinking block goes on after a blank line.
        return Number(e.summary_index ?? 0) > 0 ? this.push(at, SUMMARY_JOIN) : [];
      case 'response.reasoning_text.delta':
      case 'response.reasoning_summary_text.delta':
        return [...this.open(at, 'thinking', { type: 'thinking', thinking: '', signature: '' }), ...this.push(at, String(e.delta ?? ''))];
      case 'response.function_call_arguments.delta':
        return this.push(at, String(e.delta ?? ''));
      case 'response.output_item.done':
        return this.itemDone(at, item);
      case 'response.completed':
      case 'response.incomplete':
        return this.finish((e.response ?? {}) as Json);
      case 'response.failed': {
        const error = ((e.response ?? {}) as Json).error as Json | null | undefined;
        return this.fail(typeof error?.message === 'string' ? error.message : 'the model backend failed to produce a response');
      }
      case 'error':
        return this.fail(typeof e.message === 'string' ? e.message : JSON.stringify(e).slice(0, 500));
      default:
        return [];
    }
  }

  private itemDone(at: string, item: Json): SseEvent[] {
    const out: SseEvent[] = [];
    if (item.type === 'reasoning') {
      const texts = reasoningTexts(item);
      if (!this.blocks.has(at) && texts.length) out.push(...this.open(at, 'thinking', { type: 'thinking', thinking: '', signature: '' }));
      const block = this.blocks.get(at);
      if (block && block.kind === 'thinking' && this.stopped === null) {
        out.push(...this.close(at, texts.join(SUMMARY_JOIN), false));
        if (typeof item.id === 'string' && item.id) out.push(ev('content_block_delta', { index: block.index, delta: { type: 'signature_delta', signature: item.id } }));
        out.push(ev('content_block_stop', { index: block.index }));
      }
      return out;
    }
    if (item.type === 'function_call') {
      if (!this.blocks.has(at)) out.push(...this.open(at, 'tool_use', { type: 'tool_use', id: String(item.call_id ?? item.id ?? ''), name: String(item.name ?? ''), input: {} }));
      out.push(...this.close(at, typeof item.arguments === 'string' ? item.arguments : undefined));
      return out;
    }
    if ((item.type ?? 'message') === 'message' && Array.isArray(item.content)) {
      // Parts that came without part events are sent whole; open ones are closed.
      (item.content as Json[]).forEach((part, c) => {
        const key = `${at}:${c}`;
        const full = typeof part.text === 'string' ? part.text : typeof part.refusal === 'string' ? part.refusal : undefined;
        if (full === undefined) return;
        if (this.closed.has(key)) return;
        out.push(...this.open(key, 'text', { type: 'text', text: '', citations: null }), ...this.close(key, full));
      });
    }
    return out;
  }

  /** Closes open blocks, then message_delta (stop reason, usage, training fields) and message_stop. */
  finish(response: Json): SseEvent[] {
    if (this.ended) return [];
    const out = this.start(String(response.model ?? ''));
    for (const key of [...this.blocks.keys()]) out.push(...this.close(key));
    this.ended = true;
    const final = responseToMessage(response, { model: this.model, stopSequences: this.stopSequences });
    const stopReason = this.stopped !== null ? 'stop_sequence' : final.stop_reason === 'stop_sequence' ? 'end_turn' : final.stop_reason;
    const delta = { stop_reason: stopReason, stop_sequence: this.stopped };
    const extra: Json = {};
    for (const k of TOKEN_FIELD_KEYS) if (final[k] !== undefined) extra[k] = final[k];
    out.push(ev('message_delta', { delta, usage: final.usage, ...extra }), ev('message_stop', {}));
    return out;
  }

  /** An `error` event (Anthropic's shape), which ends the stream. */
  fail(message: string, errorType = 'api_error'): SseEvent[] {
    if (this.ended) return [];
    this.ended = true;
    return [ev('error', { error: { type: errorType, message } })];
  }

  get done(): boolean {
    return this.ended;
  }
}

/** A finished Message as a whole Messages event stream. */
export function messageEvents(message: AnthropicMessage): SseEvent[] {
  const { id, type, role, model, usage } = message;
  const out: SseEvent[] = [ev('message_start', { message: { id, type, role, model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } } })];
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      out.push(ev('content_block_start', { index, content_block: { type: 'text', text: '', citations: null } }));
      if (block.text) out.push(ev('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } }));
    } else if (block.type === 'thinking') {
      out.push(ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      out.push(ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: block.thinking } }));
      if (block.signature) out.push(ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } }));
    } else {
      out.push(ev('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }));
      out.push(ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: typeof block.input === 'string' ? block.input : JSON.stringify(block.input) } }));
    }
    out.push(ev('content_block_stop', { index }));
  });
  const extra: Json = {};
  for (const k of TOKEN_FIELD_KEYS) if (message[k] !== undefined) extra[k] = message[k];
  out.push(ev('message_delta', { delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence }, usage: message.usage, ...extra }), ev('message_stop', {}));
  return out;
}

/**
 * A Responses event stream (SSE events with JSON data) -> the Messages event stream. A source
 * that fails mid-stream, or ends without a final response, ends with an Anthropic `error` event.
 */
export async function* responsesToMessagesEvents(source: AsyncIterable<SseEvent> | Iterable<SseEvent>, stream: MessagesEventStream): AsyncGenerator<SseEvent> {
  try {
    for await (const e of source) {
      let data: unknown;
      try {
        data = JSON.parse(e.data);
      } catch {
        continue;
      }
      if (data === null || typeof data !== 'object') continue;
      const event = data as Json;
      if (event.type === undefined && e.event !== undefined) event.type = e.event;
      yield* stream.event(event);
      if (stream.done) return;
    }
  } catch (err) {
    yield* stream.fail(err instanceof Error ? err.message : String(err));
    return;
  }
  if (!stream.done) yield* stream.fail('the model stream ended before the response was complete');
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** Anthropic's error type for an HTTP status. */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/**
 * An error answer's JSON text (ours: `{detail}`; a backend's: `{error: {message}}`) -> Anthropic's
 * error body `{type: "error", error: {type, message}}`. An NG_ERR_* code the answer carries is kept
 * as `error.code`.
 */
export function anthropicErrorBody(status: number, text: string): string {
  let message = text;
  let code: unknown;
  try {
    const body = JSON.parse(text) as unknown;
    if (body !== null && typeof body === 'object') {
      const b = body as Json;
      const error = (b.error !== null && typeof b.error === 'object' ? b.error : undefined) as Json | undefined;
      const detail = error?.message ?? b.detail ?? b.message ?? error;
      message = typeof detail === 'string' ? detail : JSON.stringify(detail ?? body);
      code = b.code ?? error?.code;
    }
  } catch {
    /* not JSON: the text is the message */
  }
  const error: Json = { type: anthropicErrorType(status), message };
  if (typeof code === 'string' && code.startsWith('NG_ERR_')) error.code = code;
  return JSON.stringify({ type: 'error', error });
}
