/**
 * A stand-in for an RL trainer's vLLM OpenAI server: real HTTP on 127.0.0.1, the real Qwen3
 * tokenizer and chat template, scripted generations, and NeMo-RL's prompt repair
 * (nemo_rl/models/generation/vllm/vllm_worker_async.py: the last message carrying
 * `prompt_token_ids` gives the required prefix; the history up to the last assistant message is
 * rendered without a generation prompt and `replace_prefix_tokens` splices the model's own tokens in),
 * on `/v1/chat/completions` and on `/tokenize`.
 */
import { randomBytes } from 'node:crypto';
import { AssertionError } from 'node:assert';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeLogProbs, parseHermesToolCalls, parseReasoning, turnText, type ScriptedTurn } from './generation.js';
import { replacePrefixTokens } from './prefix.js';
import { ChatInputError, qwenTokenizer, type Json, type JsonObject, type QwenTokenizer } from './tokenizer.js';

export interface PolicyContext {
  messages: Json[];
  tools: Json[] | undefined;
  /** 0 for the first /v1/chat/completions call of this server, then 1, 2, … */
  callIndex: number;
  body: Json;
  path: '/v1/chat/completions';
}

export type Policy = (ctx: PolicyContext) => ScriptedTurn | Promise<ScriptedTurn>;

export interface TrainerVllmOptions {
  policy: Policy;
  /**
   * Where the token bundle is returned: 'message' = NeMo-RL's server (prompt_token_ids,
   * generation_token_ids, generation_log_probs on choices[0].message, plus logprobs token_id:N when
   * asked); 'vllm' = plain vLLM (logprobs as token_id:N when return_tokens_as_token_ids; top-level
   * prompt_token_ids + choices[0].token_ids only when the request has return_token_ids: true).
   * Default 'message'.
   */
  tokenSource?: 'message' | 'vllm';
  /** Repair prompts from the last message carrying the bundle (NeMo-RL). Default true. false = a plain vLLM that re-tokenizes history. */
  repair?: boolean;
  /** Server-side default chat_template_kwargs (vLLM's default_chat_template_kwargs); the request's are merged over them. */
  defaultChatTemplateKwargs?: Record<string, unknown>;
  /** Run the Qwen3 reasoning parser: <think>…</think> goes to message.reasoning_content (and `reasoning`); otherwise it stays in content. */
  reasoningParser?: boolean;
  /** 'token_ids_disagree' = choices[0].token_ids differ from the log-prob tokens; 'partial_bundle' = message has prompt_token_ids but no generation_log_probs. */
  fault?: 'token_ids_disagree' | 'partial_bundle';
  /** Default 'Qwen/Qwen3-8B'. */
  modelName?: string;
  /** Default 40960; a longer prompt is answered 400 with vLLM's "maximum context length" text. */
  maxModelLen?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
}

export interface RecordedCall {
  path: string;
  /** The parsed body (null when it was not JSON). */
  body: Json;
  /** Byte length of the raw body. */
  bytes: number;
  /** The template's ids before repair. */
  templateIds: number[];
  /** The ids actually used as the prompt. */
  promptIds: number[];
  /** The required prefix taken from the last message with a bundle (or the request's required_prefix_token_ids), else null. */
  requiredPrefix: number[] | null;
  /** templateIds do not start with requiredPrefix (its final EOS left out, as replace_prefix_tokens leaves it out). */
  drifted: boolean;
  generationIds?: number[];
  /** HTTP status of the answer. */
  status?: number;
}

export interface TrainerVllm {
  /** http://127.0.0.1:PORT/v1 */
  url: string;
  /** http://127.0.0.1:PORT */
  rootUrl: string;
  calls: RecordedCall[];
  close(): Promise<void>;
  tokenizer: QwenTokenizer;
}

/** An answer other than 200, in vLLM's error shape. */
class Reply {
  constructor(
    readonly status: number,
    readonly message: string,
    readonly type: string = status === 404 ? 'NotFoundError' : status >= 500 ? 'InternalServerError' : 'BadRequestError',
  ) {}
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function idList(v: Json | undefined, where: string): number[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isInteger(x))) throw new Reply(400, `${where} must be a list of token ids`);
  return v as number[];
}

function startsWith(ids: number[], prefix: number[]): boolean {
  if (prefix.length > ids.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}

function hex32(): string {
  return randomBytes(16).toString('hex');
}

interface PromptResult {
  templateIds: number[];
  promptIds: number[];
  requiredPrefix: number[] | null;
  drifted: boolean;
}

export async function startTrainerVllm(opts: TrainerVllmOptions): Promise<TrainerVllm> {
  const tokenizer = qwenTokenizer();
  const modelName = opts.modelName ?? 'Qwen/Qwen3-8B';
  const maxModelLen = opts.maxModelLen ?? 40960;
  const repair = opts.repair ?? true;
  const tokenSource = opts.tokenSource ?? 'message';
  const calls: RecordedCall[] = [];
  const created = Math.floor(Date.now() / 1000);
  let chatCalls = 0;

  const checkModel = (body: JsonObject) => {
    if (body.model !== undefined && body.model !== null && body.model !== modelName) {
      throw new Reply(404, `The model \`${String(body.model)}\` does not exist.`);
    }
  };

  const templateKwargs = (body: JsonObject): Record<string, unknown> => {
    const own = body.chat_template_kwargs;
    if (own !== undefined && own !== null && !isObject(own)) throw new Reply(400, 'chat_template_kwargs must be an object');
    return { ...(opts.defaultChatTemplateKwargs ?? {}), ...(own ?? {}) };
  };

  const toolsOf = (body: JsonObject): Json[] | undefined => {
    if (body.tools === undefined || body.tools === null) return undefined;
    if (!Array.isArray(body.tools)) throw new Reply(400, 'tools must be a list');
    return body.tools;
  };

  /** The prompt of a chat request: the template's ids, repaired as NeMo-RL's server repairs them. */
  const chatPrompt = (body: JsonObject, messages: Json[], tools: Json[] | undefined): PromptResult => {
    const kwargs = templateKwargs(body);
    const continueFinalMessage = body.continue_final_message === true;
    const addGenerationPrompt = body.add_generation_prompt === undefined || body.add_generation_prompt === null ? true : body.add_generation_prompt === true;
    if (continueFinalMessage && addGenerationPrompt && body.add_generation_prompt === true) {
      throw new Reply(400, 'Cannot set both `continue_final_message` and `add_generation_prompt` to True.');
    }
    const render = (msgs: Json[], gen: boolean): number[] => {
      try {
        return tokenizer.chatIds(msgs, { tools, addGenerationPrompt: gen, chatTemplateKwargs: kwargs, continueFinalMessage });
      } catch (err) {
        if (err instanceof ChatInputError) throw new Reply(400, err.message);
        throw new Reply(400, `the chat template failed: ${(err as { message?: string }).message ?? String(err)}`);
      }
    };
    const templateIds = render(messages, addGenerationPrompt && !continueFinalMessage);
    // NeMo-RL renders the prefix from a copy of the request with add_generation_prompt false (continue_final_message as sent).

    // NeMoRLOpenAIChatRequestMixin.model_post_init: the request's own field, else the last message with prompt_token_ids.
    let requiredPrefix: number[] | null = null;
    if (body.required_prefix_token_ids !== undefined && body.required_prefix_token_ids !== null) {
      requiredPrefix = idList(body.required_prefix_token_ids, 'required_prefix_token_ids');
    } else {
      for (let i = messages.length - 1; i >= 0; i--) {
        const m = messages[i];
        if (isObject(m) && 'prompt_token_ids' in m) {
          if (!('generation_token_ids' in m)) throw new Reply(400, `messages[${i}] has prompt_token_ids but no generation_token_ids`);
          requiredPrefix = idList(m.prompt_token_ids, `messages[${i}].prompt_token_ids`).concat(idList(m.generation_token_ids, `messages[${i}].generation_token_ids`));
          break;
        }
      }
    }
    if (requiredPrefix === null) return { templateIds, promptIds: templateIds, requiredPrefix, drifted: false };

    const comparable = requiredPrefix.length > 0 && requiredPrefix[requiredPrefix.length - 1] === tokenizer.eosTokenId ? requiredPrefix.slice(0, -1) : requiredPrefix;
    const drifted = !startsWith(templateIds, comparable);
    if (!repair) return { templateIds, promptIds: templateIds, requiredPrefix, drifted };

    let lastAssistant = -1;
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i];
      if (isObject(m) && m.role === 'assistant') {
        lastAssistant = i;
        break;
      }
    }
    const upToAssistant = lastAssistant < 0 ? messages : messages.slice(0, lastAssistant + 1);
    const templatePrefixIds = render(upToAssistant, false);
    let promptIds: number[];
    try {
      promptIds = replacePrefixTokens(tokenizer.eosTokenId, requiredPrefix, templatePrefixIds, templateIds, tokenizer.decode);
    } catch (err) {
      // vLLM does not map an AssertionError to a 400: the request fails with a 500.
      if (err instanceof AssertionError) throw new Reply(500, err.message);
      throw err;
    }
    return { templateIds, promptIds, requiredPrefix, drifted };
  };

  const checkLength = (promptIds: number[]) => {
    if (promptIds.length >= maxModelLen) {
      throw new Reply(
        400,
        `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${promptIds.length} input tokens. Please reduce the length of the input messages.`,
      );
    }
  };

  const messagesOf = (body: JsonObject): Json[] => {
    const messages = body.messages;
    if (!Array.isArray(messages) || messages.length === 0) throw new Reply(400, 'messages must be a non-empty list');
    for (const [i, m] of messages.entries()) {
      if (!isObject(m) || typeof m.role !== 'string') throw new Reply(400, `messages[${i}] must be an object with a string role`);
    }
    return messages;
  };

  const chatCompletion = async (body: JsonObject, call: RecordedCall): Promise<JsonObject> => {
    checkModel(body);
    if (body.stream === true) throw new Reply(400, 'stream=true is not supported by this stand-in; send stream=false');
    const n = body.n ?? 1;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw new Reply(400, 'n must be a positive integer');
    const wantsTokens = tokenSource === 'message' || body.logprobs === true || body.return_token_ids === true || opts.fault !== undefined;
    if (n > 1 && wantsTokens) throw new Reply(400, 'n > 1 is not supported together with token information (logprobs, return_token_ids or the token bundle)');
    const topLogprobs = body.top_logprobs ?? null;
    if (topLogprobs !== null && (typeof topLogprobs !== 'number' || !Number.isInteger(topLogprobs) || topLogprobs < 0 || topLogprobs > 20)) {
      throw new Reply(400, 'top_logprobs must be an integer between 0 and 20');
    }
    if (typeof topLogprobs === 'number' && topLogprobs > 0 && body.logprobs !== true) throw new Reply(400, 'when using `top_logprobs`, `logprobs` must be set to true.');
    const maxTokensRaw = body.max_completion_tokens ?? body.max_tokens ?? null;
    if (maxTokensRaw !== null && (typeof maxTokensRaw !== 'number' || !Number.isInteger(maxTokensRaw) || maxTokensRaw < 1)) {
      throw new Reply(400, 'max_tokens must be a positive integer');
    }

    const messages = messagesOf(body);
    const tools = toolsOf(body);
    const prompt = chatPrompt(body, messages, tools);
    Object.assign(call, prompt);
    checkLength(prompt.promptIds);

    const callIndex = chatCalls++;
    let turn: ScriptedTurn;
    try {
      turn = await opts.policy({ messages, tools, callIndex, body, path: '/v1/chat/completions' });
    } catch (err) {
      throw new Reply(500, `the policy failed on call ${callIndex}: ${(err as { message?: string }).message ?? String(err)}`);
    }
    if (typeof turn !== 'object' || turn === null) throw new Reply(500, `the policy returned no ScriptedTurn for call ${callIndex}`);

    // NeMo-RL's server clamps max_tokens to what is left of the context.
    const room = maxModelLen - prompt.promptIds.length;
    const maxTokens = Math.min(typeof maxTokensRaw === 'number' ? maxTokensRaw : room, room);
    let generationIds = tokenizer.encode(turnText(turn));
    if (turn.eos !== false) generationIds.push(tokenizer.eosTokenId);
    const truncated = generationIds.length > maxTokens;
    if (truncated) generationIds = generationIds.slice(0, maxTokens);
    const stoppedByEos = !truncated && turn.eos !== false;
    call.generationIds = generationIds;
    const logProbs = fakeLogProbs(callIndex, generationIds);

    // vLLM detokenizes with skip_special_tokens, then runs the reasoning parser, then the tool parser on the content.
    const text = tokenizer.decodeGeneration(generationIds);
    let reasoning: string | null = null;
    let content: string | null = text;
    if (opts.reasoningParser) ({ reasoning, content } = parseReasoning(text));
    const toolChoice = body.tool_choice;
    const autoTools = tools !== undefined && tools.length > 0 && (toolChoice === undefined || toolChoice === null || toolChoice === 'auto' || toolChoice === 'required' || isObject(toolChoice));
    let toolCalls: Json[] = [];
    let toolsCalled = false;
    if (autoTools) {
      const parsed = parseHermesToolCalls(content ?? '');
      toolsCalled = parsed.toolsCalled;
      if (parsed.toolsCalled) {
        toolCalls = parsed.toolCalls as unknown as Json[];
        content = parsed.content;
      }
    }
    const finishReason = toolsCalled ? 'tool_calls' : stoppedByEos ? 'stop' : 'length';

    const message: JsonObject = {
      role: 'assistant',
      content,
      refusal: null,
      annotations: null,
      audio: null,
      function_call: null,
      tool_calls: toolCalls,
      reasoning,
      reasoning_content: reasoning,
    };
    if (tokenSource === 'message') {
      message.prompt_token_ids = prompt.promptIds;
      message.generation_token_ids = generationIds;
      if (opts.fault !== 'partial_bundle') message.generation_log_probs = logProbs;
    }

    let logprobs: Json = null;
    if (body.logprobs === true) {
      const asIds = body.return_tokens_as_token_ids === true;
      const k = typeof topLogprobs === 'number' ? topLogprobs : 0;
      logprobs = {
        content: generationIds.map((id, i) => {
          const token = asIds ? `token_id:${id}` : tokenizer.tokenText(id);
          const lp = logProbs[i]!;
          const top: Json[] = [];
          for (let j = 0; j < k; j++) {
            const alt = j === 0 ? id : (id + j * 7919) % 151643;
            const altToken = asIds ? `token_id:${alt}` : tokenizer.tokenText(alt);
            top.push({ token: altToken, logprob: j === 0 ? lp : lp - j, bytes: Array.from(Buffer.from(altToken, 'utf8')) });
          }
          return { token, logprob: lp, bytes: Array.from(Buffer.from(token, 'utf8')), top_logprobs: top };
        }),
      };
    }

    const choice: JsonObject = { index: 0, message, logprobs, finish_reason: finishReason, stop_reason: null };
    const answer: JsonObject = {
      id: `chatcmpl-${hex32()}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: modelName,
      choices: [choice],
      usage: { prompt_tokens: prompt.promptIds.length, total_tokens: prompt.promptIds.length + generationIds.length, completion_tokens: generationIds.length, prompt_tokens_details: null },
      prompt_logprobs: null,
      kv_transfer_params: null,
    };
    if (body.return_token_ids === true || opts.fault === 'token_ids_disagree') {
      answer.prompt_token_ids = prompt.promptIds;
      let tokenIds = generationIds;
      if (opts.fault === 'token_ids_disagree') {
        // One token off: the first generated token replaced by its neighbour.
        tokenIds = generationIds.slice();
        tokenIds[0] = (tokenIds[0]! + 1) % 151643;
      }
      choice.token_ids = tokenIds;
    }
    if (n > 1) answer.choices = Array.from({ length: n }, (_, index) => ({ ...choice, index }));
    return answer;
  };

  const tokenize = (body: JsonObject, call: RecordedCall): JsonObject => {
    checkModel(body);
    let prompt: PromptResult;
    if (body.messages !== undefined) {
      prompt = chatPrompt(body, messagesOf(body), toolsOf(body));
      // add_special_tokens defaults to false for chat; Qwen3 adds no BOS either way.
    } else if (typeof body.prompt === 'string') {
      const ids = tokenizer.encode(body.prompt);
      prompt = { templateIds: ids, promptIds: ids, requiredPrefix: null, drifted: false };
    } else {
      throw new Reply(400, '/tokenize needs `messages` (a chat) or `prompt` (a string)');
    }
    Object.assign(call, prompt);
    return {
      count: prompt.promptIds.length,
      max_model_len: maxModelLen,
      tokens: prompt.promptIds,
      token_strs: body.return_token_strs === true ? prompt.promptIds.map((id) => tokenizer.tokenText(id)) : null,
    };
  };

  const send = (res: ServerResponse, status: number, payload: Json | undefined) => {
    const text = payload === undefined ? '' : JSON.stringify(payload);
    res.writeHead(status, payload === undefined ? {} : { 'content-type': 'application/json' });
    res.end(text);
  };
  const sendError = (res: ServerResponse, reply: Reply) => {
    send(res, reply.status, { object: 'error', message: reply.message, type: reply.type, param: null, code: reply.status });
  };

  const readBody = (req: IncomingMessage): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks)));
      req.on('error', reject);
    });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'GET' && path === '/health') return send(res, 200, undefined);
    if (req.method === 'GET' && path === '/v1/models') {
      return send(res, 200, {
        object: 'list',
        data: [{ id: modelName, object: 'model', created, owned_by: 'vllm', root: modelName, parent: null, max_model_len: maxModelLen, permission: [] }],
      });
    }
    if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/tokenize')) {
      return send(res, 404, { detail: 'Not Found' });
    }
    const raw = await readBody(req);
    const call: RecordedCall = { path, body: null, bytes: raw.length, templateIds: [], promptIds: [], requiredPrefix: null, drifted: false };
    calls.push(call);
    try {
      let body: Json;
      try {
        body = JSON.parse(raw.toString('utf8')) as Json;
      } catch (err) {
        throw new Reply(400, `the request body is not JSON: ${(err as { message?: string }).message ?? String(err)}`);
      }
      call.body = body;
      if (!isObject(body)) throw new Reply(400, 'the request body must be a JSON object');
      const answer = path === '/tokenize' ? tokenize(body, call) : await chatCompletion(body, call);
      call.status = 200;
      send(res, 200, answer);
    } catch (err) {
      const reply = err instanceof Reply ? err : new Reply(500, (err as { message?: string }).message ?? String(err));
      call.status = reply.status;
      sendError(res, reply);
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, new Reply(500, (err as { message?: string }).message ?? String(err)));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const rootUrl = `http://${host}:${address.port}`;
  return {
    url: `${rootUrl}/v1`,
    rootUrl,
    calls,
    tokenizer,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
