/**
 * Conversion between the Responses API and Chat Completions, as used by model servers that sit
 * on top of a Chat Completions endpoint (vLLM, Azure OpenAI).
 *
 * Responses input items map many-to-one onto chat messages: consecutive assistant text,
 * reasoning (wrapped in `<think>` tags) and function calls merge into one assistant message,
 * which is flushed when a user/system/developer/tool message arrives.
 */
import { randomUUID } from 'node:crypto';
import { NgError } from '../errors.js';
import type { ChatCompletion, ChatToolCall, NeMoGymResponse, ResponseCreateParams, ResponseItem, TokenFields } from './schemas.js';
import { TOKEN_FIELD_KEYS, hasTokenFields } from './schemas.js';

/** Raised for input that has no Chat Completions equivalent; servers answer it with a 400. */
export class ConversionError extends NgError {
  constructor(message: string) {
    super('NG_ERR_CONVERSION', message);
  }
}

export interface ConverterOptions {
  /** Carry prompt/generation token ids and log-probs on assistant messages and output items. */
  returnTokenIdInformation: boolean;
  /** Told the request fields that were set but have no Chat Completions equivalent (so were not sent). */
  onDropped?: (fields: string[]) => void;
}

/**
 * A callback for `onDropped` that logs each dropped field once per server process: the first
 * request that sets it is noted, later ones are not (a collection would repeat it per row).
 */
export function noteDroppedOnce(log: { info(msg: string): void }, backend: string): (fields: string[]) => void {
  const seen = new Set<string>();
  return (fields) => {
    const fresh = fields.filter((f) => !seen.has(f));
    if (fresh.length === 0) return;
    for (const f of fresh) seen.add(f);
    log.info(
      `request field(s) ${fresh.map((f) => `\`${f}\``).join(', ')} have no equivalent for ${backend} and are not sent to it ` +
        '(noted once per field; the rest of the request is served as usual)',
    );
  };
}

type Json = Record<string, unknown>;

const THINK_RE = /<think>([\s\S]*?)<\/think>/g;

/** All `<think>...</think>` blocks (text kept exactly) and the content with them removed. */
export function extractThink(content: string): { reasoning: string[]; remaining: string } {
  const reasoning: string[] = [];
  for (const m of content.matchAll(THINK_RE)) reasoning.push(m[1]!);
  return { reasoning, remaining: reasoning.length ? content.replace(THINK_RE, '') : content };
}

/** Wraps each non-empty text in `<think>` tags and concatenates them. */
export function wrapThink(texts: string[]): string {
  return texts.filter((t) => t).map((t) => `<think>${t}</think>`).join('');
}

function tokenFieldsOf(item: Json): TokenFields | null {
  const present = TOKEN_FIELD_KEYS.filter((k) => item[k] !== undefined && item[k] !== null);
  if (present.length === 0) return null;
  if (present.length < 3) {
    throw new ConversionError(
      `item carries partial token information (${present.join(', ')}); give prompt_token_ids, generation_token_ids and generation_log_probs together`,
    );
  }
  return {
    prompt_token_ids: item.prompt_token_ids as number[],
    generation_token_ids: item.generation_token_ids as number[],
    generation_log_probs: item.generation_log_probs as number[],
  };
}

class ConversionState {
  messages: Json[] = [];
  contentBuffer = '';
  toolCallsBuffer: ChatToolCall[] = [];
  assistantBuffered = false;
  tokenInformation: TokenFields | null = null;

  constructor(private readonly withTokens: boolean) {}

  flushAssistant(): void {
    if (this.assistantBuffered || this.contentBuffer || this.toolCallsBuffer.length) {
      const msg: Json = { role: 'assistant', content: this.contentBuffer || null };
      // An empty tool_calls list is left out: OpenAI rejects `tool_calls: []`.
      if (this.toolCallsBuffer.length) msg.tool_calls = this.toolCallsBuffer;
      if (this.withTokens && this.tokenInformation) Object.assign(msg, this.tokenInformation);
      this.messages.push(msg);
    }
    this.contentBuffer = '';
    this.toolCallsBuffer = [];
    this.assistantBuffered = false;
    // Token information belongs to the assistant message it was flushed with, never to a later one.
    this.tokenInformation = null;
  }
}

/** Text of a chat content value: a string, or the concatenated `text` of a list of parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof (p as Json).text === 'string' ? (p as Json).text : '')).join('');
  return '';
}

/**
 * A Responses `input_image` part -> a Chat Completions `image_url` part (the URL, remote or
 * `data:`, is carried as given; `detail` is kept when set).
 */
export function imagePartToChat(part: Json, where: string): Json {
  const url = part.image_url;
  if (typeof url !== 'string' || url.length === 0) {
    throw new ConversionError(
      `${where} is an input_image without "image_url"${part.file_id ? ' (uploaded files, "file_id", cannot be sent to a Chat Completions model)' : ''}; give the image as a URL or a data: URL`,
    );
  }
  const imageUrl: Json = { url };
  if (part.detail !== undefined && part.detail !== null) imageUrl.detail = part.detail;
  return { type: 'image_url', image_url: imageUrl };
}

function convertMessage(m: Json, index: number, state: ConversionState): void {
  let content = m.content as unknown;
  const role = m.role as string;
  if (Array.isArray(content) && role !== 'assistant') {
    content = content.map((part: Json, j: number) => {
      if (part.type === 'input_text' || part.type === 'text') return { ...part, type: 'text' };
      if (part.type === 'input_image' && role === 'user') return imagePartToChat(part, `input[${index}].content[${j}]`);
      throw new ConversionError(
        `input[${index}].content[${j}] has type "${String(part.type)}"; only input_text parts (and input_image parts in user messages) can be sent to a Chat Completions model`,
      );
    });
  }
  switch (role) {
    case 'assistant': {
      state.assistantBuffered = true;
      if (content !== undefined && content !== null && typeof content !== 'string' && !Array.isArray(content)) {
        throw new ConversionError(`input[${index}].content must be a string or a list of parts`);
      }
      state.contentBuffer += contentText(content);
      const toolCalls = m.tool_calls;
      if (Array.isArray(toolCalls)) {
        for (const tc of toolCalls as Json[]) {
          const fn = (tc.function ?? {}) as Json;
          state.toolCallsBuffer.push({
            id: tc.id as string,
            function: { arguments: fn.arguments as string, name: fn.name as string },
            type: 'function',
          });
        }
      }
      return;
    }
    case 'tool':
      state.flushAssistant();
      state.messages.push({ content, role: 'tool', tool_call_id: m.tool_call_id });
      return;
    case 'user':
    case 'system':
    case 'developer':
      state.flushAssistant();
      state.messages.push({ content, role });
      return;
    default:
      throw new ConversionError(`input[${index}].role "${role}" is not one of user, assistant, system, developer, tool`);
  }
}

/** Key order of the chat request as the Python model serializes it. */
const CHAT_PARAM_KEYS = [
  'messages', 'model', 'audio', 'frequency_penalty', 'logit_bias', 'logprobs', 'max_completion_tokens', 'max_tokens',
  'metadata', 'modalities', 'n', 'parallel_tool_calls', 'prediction', 'presence_penalty', 'reasoning_effort',
  'response_format', 'seed', 'service_tier', 'stop', 'store', 'stream_options', 'temperature', 'tool_choice', 'tools',
  'top_logprobs', 'top_p', 'user', 'web_search_options', 'stream',
  // Newer than the Python model; produced only when the caller set them.
  'moderation', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention', 'safety_identifier', 'verbosity',
] as const;

/** Responses fields carried to Chat Completions under the same name. */
const SAME_NAME_FIELDS = ['moderation', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention', 'safety_identifier'] as const;

/** Responses fields a Chat Completions request cannot carry; reported through `onDropped` when set. */
const NO_CHAT_EQUIVALENT = [
  'access_programs', 'background', 'context_management', 'conversation', 'image', 'include', 'max_tool_calls',
  'previous_response_id', 'prompt', 'stream_options', 'truncation',
] as const;

function isSet(v: unknown): boolean {
  return v !== undefined && v !== null;
}

const TOKEN_KEY_SET: ReadonlySet<string> = new Set(TOKEN_FIELD_KEYS);

/**
 * A deep copy of JSON data in which the token-id arrays of earlier turns are shared rather than
 * copied: they are most of a long rollout's request (over 95 % of a 64-turn one) and nothing here
 * changes them.
 */
export function copySharingTokenIds<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(copySharingTokenIds) as T;
  const out: Json = {};
  for (const [k, x] of Object.entries(v as Json)) {
    const value = TOKEN_KEY_SET.has(k) && Array.isArray(x) ? x : copySharingTokenIds(x);
    // A key named __proto__ (from JSON.parse, an own property) stays an own property.
    if (k === '__proto__') Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
    else out[k] = value;
  }
  return out as T;
}

/**
 * Responses create params -> Chat Completions create params. Only keys the caller set are
 * produced (keys without a Chat equivalent are dropped), in the chat model's key order.
 */
export function responsesToChatParams(params: ResponseCreateParams, opts: ConverterOptions): Json {
  const p = copySharingTokenIds(params as unknown as Json);
  const state = new ConversionState(opts.returnTokenIdInformation);
  const input: Json[] =
    typeof p.input === 'string'
      ? [{ content: [{ text: p.input, type: 'input_text' }], role: 'user', type: 'message' }]
      : ((p.input as Json[]) ?? []);

  input.forEach((m, i) => {
    const type = m.type ?? (m.role !== undefined ? 'message' : undefined);
    switch (type) {
      case 'message':
        convertMessage(m, i, state);
        break;
      case 'reasoning': {
        const summary = (m.summary as Json[] | undefined) ?? [];
        if (summary.length) state.contentBuffer += wrapThink(summary.map((s) => s.text as string));
        break;
      }
      case 'function_call':
        state.toolCallsBuffer.push({
          id: m.call_id as string,
          function: { arguments: m.arguments as string, name: m.name as string },
          type: 'function',
        });
        break;
      case 'function_call_output':
        state.flushAssistant();
        state.messages.push({ content: m.output, role: 'tool', tool_call_id: m.call_id });
        break;
      default:
        throw new ConversionError(
          `input[${i}] has type "${String(type)}", which has no Chat Completions equivalent; use a model server that accepts Responses input directly`,
        );
    }
    if (opts.returnTokenIdInformation) {
      const tokens = tokenFieldsOf(m);
      if (tokens) state.tokenInformation = tokens;
    }
  });
  state.flushAssistant();

  // `instructions` is the system prompt of the Responses API. Chat Completions has no such
  // parameter, so it becomes the leading system message; a leading run of system/developer
  // messages is folded into it, since chat templates commonly allow one system message only.
  if (typeof p.instructions === 'string' && p.instructions) {
    const parts = [p.instructions];
    while (state.messages.length && ['system', 'developer'].includes(state.messages[0]!.role as string)) {
      parts.push(contentText(state.messages.shift()!.content));
    }
    state.messages.unshift({ content: parts.join('\n\n'), role: 'system' });
  }

  const rest: Json = {};
  if (p.model !== undefined && p.model !== null) rest.model = p.model;
  if (p.max_output_tokens !== undefined && p.max_output_tokens !== null) rest.max_tokens = p.max_output_tokens;
  for (const k of ['temperature', 'top_p', 'top_logprobs', 'metadata', 'service_tier', 'store', 'user', 'stream'] as const) {
    if (p[k] !== undefined) rest[k] = p[k];
  }
  for (const k of SAME_NAME_FIELDS) if (isSet(p[k])) rest[k] = p[k];
  const dropped: string[] = NO_CHAT_EQUIVALENT.filter((k) => isSet(p[k]) && !(k === 'truncation' && p[k] === 'disabled'));
  // reasoning.effort -> reasoning_effort and text.verbosity -> verbosity; the rest of both objects
  // (summaries, output format) has no Chat Completions field.
  if (p.reasoning && typeof p.reasoning === 'object') {
    const { effort, ...other } = p.reasoning as Json;
    if (isSet(effort)) rest.reasoning_effort = effort;
    for (const [k, v] of Object.entries(other)) if (isSet(v)) dropped.push(`reasoning.${k}`);
  }
  if (p.text && typeof p.text === 'object') {
    const { verbosity, ...other } = p.text as Json;
    if (isSet(verbosity)) rest.verbosity = verbosity;
    for (const [k, v] of Object.entries(other)) if (isSet(v)) dropped.push(`text.${k}`);
  }
  if (dropped.length && opts.onDropped) opts.onDropped(dropped);
  if (Array.isArray(p.tools) && p.tools.length > 0) {
    rest.tools = (p.tools as Json[]).map((tool, i) => {
      if (tool.type !== 'function') {
        throw new ConversionError(`tools[${i}] has type "${String(tool.type)}"; only function tools can be sent to a Chat Completions model`);
      }
      const { type: _type, ...fn } = tool;
      return { type: 'function', function: fn };
    });
    if (p.parallel_tool_calls !== undefined && p.parallel_tool_calls !== null) rest.parallel_tool_calls = p.parallel_tool_calls;
    if (p.tool_choice !== undefined && p.tool_choice !== null) {
      const tc = p.tool_choice as unknown;
      // Responses names a forced function as {type, name}; Chat Completions as {type, function: {name}}.
      if (tc && typeof tc === 'object' && (tc as Json).type === 'function' && typeof (tc as Json).name === 'string') {
        rest.tool_choice = { type: 'function', function: { name: (tc as Json).name } };
      } else rest.tool_choice = tc;
    }
  } else if (p.tool_choice === 'required' || (p.tool_choice && typeof p.tool_choice === 'object')) {
    throw new ConversionError('tool_choice asks for a tool call but "tools" is empty; add the tools or leave tool_choice out');
  }
  // Without tools, tools/tool_choice/parallel_tool_calls are left out: OpenAI rejects an empty
  // tools list, and vLLM rejects tool_choice "auto" unless started with auto tool choice.

  const out: Json = {};
  for (const k of CHAT_PARAM_KEYS) {
    if (k === 'messages') out.messages = state.messages;
    else if (rest[k] !== undefined) out[k] = rest[k];
  }
  return out;
}

/** A Chat Completions `image_url` part -> a Responses `input_image` part. */
export function imagePartFromChat(part: Json): Json {
  const image = (part.image_url ?? {}) as Json;
  const url = typeof image === 'string' ? image : image.url;
  const detail = typeof image === 'object' && isSet(image.detail) ? image.detail : 'auto';
  return { type: 'input_image', image_url: url, detail };
}

/**
 * Chat Completions messages -> Responses input items (for recorded chat requests and round
 * trips): text parts become input_text (output_text for the assistant), image_url parts
 * input_image, tool calls function_call items, tool messages function_call_output items.
 * Token fields on an assistant message stay on the last item made from it.
 */
export function chatMessagesToResponsesInput(messages: readonly Json[]): Json[] {
  const out: Json[] = [];
  for (const m of messages) {
    const role = m.role as string;
    if (role === 'tool') {
      out.push({ type: 'function_call_output', call_id: m.tool_call_id, output: contentText(m.content) });
      continue;
    }
    const first = out.length;
    if (role === 'assistant') {
      const text = contentText(m.content);
      if (text) out.push({ role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }], type: 'message' });
      for (const tc of (m.tool_calls as Json[] | null | undefined) ?? []) {
        const fn = tc.function as Json;
        out.push({ type: 'function_call', call_id: tc.id, name: fn.name, arguments: fn.arguments });
      }
      if (out.length === first) out.push({ role: 'assistant', content: [{ type: 'output_text', text: '', annotations: [] }], type: 'message' });
      if (hasTokenFields(m)) {
        const { prompt_token_ids, generation_token_ids, generation_log_probs } = m;
        out[out.length - 1] = { ...out[out.length - 1], prompt_token_ids, generation_token_ids, generation_log_probs };
      }
      continue;
    }
    const content = Array.isArray(m.content)
      ? (m.content as Json[]).map((part) => (part.type === 'image_url' ? imagePartFromChat(part) : part.type === 'text' ? { ...part, type: 'input_text' } : part))
      : m.content;
    out.push({ role, content, type: 'message' });
  }
  return out;
}

/** Source of random hex ids; replaceable in tests. */
export type IdSource = () => string;
const uuidHex: IdSource = () => randomUUID().replace(/-/g, '');

/**
 * One chat completion choice's message -> Responses output items: a reasoning item (from
 * `<think>` blocks), then a message (if text remains, or if nothing else was produced), then one
 * function_call per tool call. With token information on, the last item carries the three fields.
 */
export function chatMessageToOutputItems(message: Json, opts: ConverterOptions, newId: IdSource = uuidHex): ResponseItem[] {
  const out: Json[] = [];
  const { reasoning, remaining } = extractThink((message.content as string | null | undefined) || '');
  if (reasoning.length) {
    out.push({
      id: `rs_${newId()}`,
      summary: reasoning.map((text) => ({ text, type: 'summary_text' })),
      type: 'reasoning',
      encrypted_content: null,
    });
  }
  const toolCalls = (message.tool_calls as Json[] | null | undefined) ?? [];
  if (remaining || (!out.length && !toolCalls.length)) {
    out.push({
      id: `msg_${newId()}`,
      content: [{ annotations: [], text: remaining, type: 'output_text', logprobs: null }],
      role: (message.role as string) ?? 'assistant',
      status: 'completed',
      type: 'message',
    });
  }
  for (const tc of toolCalls) {
    const fn = tc.function as Json;
    out.push({
      arguments: fn.arguments,
      call_id: tc.id,
      name: fn.name,
      type: 'function_call',
      id: tc.id,
      status: 'completed',
    });
  }
  if (opts.returnTokenIdInformation && hasTokenFields(message)) {
    const last = out[out.length - 1]!;
    out[out.length - 1] = {
      prompt_token_ids: message.prompt_token_ids,
      generation_token_ids: message.generation_token_ids,
      generation_log_probs: message.generation_log_probs,
      ...last,
    };
  }
  return out as ResponseItem[];
}

function count(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null;
}

/** Chat usage -> Responses usage (detail counters default to 0; unknown usage keys are kept). */
export function chatUsageToResponseUsage(usage: Json | null | undefined): Json | null {
  if (!usage) return null;
  const { prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details, completion_tokens_details, ...extra } = usage;
  const cached = count((prompt_tokens_details as Json | undefined)?.cached_tokens) ?? 0;
  const reasoningTokens = count((completion_tokens_details as Json | undefined)?.reasoning_tokens) ?? 0;
  return {
    input_tokens: prompt_tokens,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: completion_tokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens,
    ...extra,
  };
}

/**
 * Builds the Response for a chat completion: choice 0 becomes the output items; request fields
 * are echoed (including the real tool_choice); usage, status and incomplete_details come from
 * the completion (`length` -> max_output_tokens, `content_filter` -> content_filter).
 */
export function chatCompletionToResponse(
  params: ResponseCreateParams,
  completion: ChatCompletion | Json,
  opts: ConverterOptions & { model: string },
  newId: IdSource = uuidHex,
): NeMoGymResponse {
  const c = completion as Json;
  const choice = (c.choices as Json[])[0]!;
  const output = chatMessageToOutputItems(choice.message as Json, opts, newId);
  let incomplete: Json | null = null;
  if (choice.finish_reason === 'length') incomplete = { reason: 'max_output_tokens' };
  else if (choice.finish_reason === 'content_filter') incomplete = { reason: 'content_filter' };
  const p = params as Json;
  const echo = (k: string) => (p[k] === undefined ? null : p[k]);
  return {
    id: `resp_${newId()}`,
    created_at: typeof c.created === 'number' ? c.created : Math.floor(Date.now() / 1000),
    error: null,
    incomplete_details: incomplete,
    instructions: echo('instructions'),
    metadata: echo('metadata'),
    model: opts.model,
    object: 'response',
    output,
    parallel_tool_calls: p.parallel_tool_calls ?? true,
    temperature: echo('temperature'),
    tool_choice: p.tool_choice ?? 'auto',
    tools: p.tools ?? [],
    top_p: echo('top_p'),
    background: echo('background'),
    conversation: null,
    max_output_tokens: echo('max_output_tokens'),
    max_tool_calls: echo('max_tool_calls'),
    previous_response_id: echo('previous_response_id'),
    prompt: echo('prompt'),
    prompt_cache_key: null,
    reasoning: echo('reasoning'),
    safety_identifier: null,
    service_tier: echo('service_tier'),
    status: incomplete ? 'incomplete' : 'completed',
    text: echo('text'),
    top_logprobs: echo('top_logprobs'),
    truncation: echo('truncation'),
    usage: chatUsageToResponseUsage(c.usage as Json | null | undefined),
    user: echo('user'),
  } as unknown as NeMoGymResponse;
}

/**
 * Moves reasoning of assistant messages in a chat request out of `<think>` tags into
 * `reasoning_content` (first block only; all blocks are removed from the text), for backends
 * that run a reasoning parser. Mutates and returns the messages.
 */
export function moveThinkToReasoningContent(messages: Json[]): Json[] {
  for (const m of messages) {
    if (m.role !== 'assistant' || !('content' in m)) continue;
    const content = m.content;
    if (typeof content === 'string') {
      const { reasoning, remaining } = extractThink(content);
      m.content = remaining;
      if (reasoning.length) m.reasoning_content = reasoning[0];
    } else if (Array.isArray(content)) {
      for (const part of content as Json[]) {
        if (typeof part.text !== 'string') continue;
        const { reasoning, remaining } = extractThink(part.text);
        part.text = remaining;
        if (reasoning.length) m.reasoning_content = reasoning[0];
      }
    }
  }
  return messages;
}
