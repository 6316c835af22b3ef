/**
 * The vLLM model server's logic: Responses requests are converted to Chat Completions, sent to
 * one of the configured vLLM endpoints (pinned per session), and converted back. With
 * `return_token_id_information`, each generation carries prompt token ids, generation token ids
 * and their log-probs, for training.
 */
import { request, type Agent } from 'undici';
import { z } from 'zod';
import { createPool, type RequestClass } from '@nemo-gym/core/client';
import { ConfigError, InternalError, HttpError } from '@nemo-gym/core/errors';
import { ImageFetchFields, RemoteImageFetcher, type ImageFetchConfig, ChatChunkAccumulator, chatChunks, chunkEvent, ConversionError, DONE_EVENT, ResponsesEventStream, ImageLimitsFields, openBackendStream, UpstreamError, chatCompletionToResponse, listBackendModels, checkRequestImages, noteDroppedOnce, postJson, responsesToChatParams, wrapThink, type ChatCompletionCreateParams, type ImageLimits, type NeMoGymResponse, type ResponseCreateParams } from '@nemo-gym/core/openai';
import type { CallCapture } from '@nemo-gym/core/capture';
import { RawJson, SseReply, type SseEvent } from '@nemo-gym/core/server';
import { EndpointPool, type Endpoint } from './endpoints.js';
import { buildChatBody, OPENAI_ONLY_CHAT_FIELDS, type ChatBodySettings } from './request.js';
import { readTokenSources, tokenizeBody, TOKEN_FORWARDING_MODES } from './tokens.js';

const JsonObject = z.record(z.string(), z.unknown());

export const VLLMModelConfigFields = {
  base_url: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((v) => (typeof v === 'string' ? [v] : v)),
  api_key: z.string(),
  model: z.string(),
  return_token_id_information: z.boolean(),
  uses_reasoning_parser: z.boolean(),
  /** Earlier reasoning goes back to vLLM as `reasoning_content` (false: it is left out of the history). */
  uses_interleaved_reasoning: z.boolean().default(true),
  /** Keep `<think>` blocks in the assistant content of the history, byte for byte (no `reasoning_content`). */
  preserve_reasoning_in_assistant_content: z.boolean().default(false),
  replace_developer_role_with_system: z.boolean().default(false),
  /** Upstream's name: ask vLLM (>= 0.10.2) to return prompt and generation token ids inline instead of calling /tokenize. */
  request_prompt_and_generation_token_ids: z.boolean().optional(),
  /** This port's earlier name for request_prompt_and_generation_token_ids (kept as an alias). */
  request_inline_token_ids: z.boolean().optional(),
  /** Which earlier assistant messages carry their token bundle back to vLLM: last (default), all (upstream's bytes) or none. */
  token_id_forwarding: z.enum(TOKEN_FORWARDING_MODES).default('last'),
  /** Chat-template switches sent with every request (and to /tokenize); a row's metadata.chat_template_kwargs is merged over them. */
  chat_template_kwargs: JsonObject.nullable().default(null),
  /** Extra fields for every vLLM request (the OpenAI client's extra_body); the request's own fields win. */
  extra_body: JsonObject.nullable().default(null),
  /** Sampling parameters put on every request to vLLM, replacing what the caller sent (on-policy training). */
  sampling_overrides: JsonObject.nullable().default(null),
  /** Headers sent with every request to vLLM. */
  default_headers: z.record(z.string(), z.string()).default({}),
  /** false: a call whose last message is an empty assistant message is answered at once with finish_reason content_filter. */
  sequential_reasoning_allowed: z.boolean().default(true),
  /** Longest wait for one backend answer. */
  request_timeout_s: z.number().positive().default(600),
  /**
   * Attempts in total for one backend call. A generation is resent only when it provably did not
   * reach the backend (connection refused, 429, 503); /tokenize also on other transient failures.
   */
  max_attempts: z.number().int().min(1).default(3),
  retry_sleep_s: z.number().min(0).default(0.5),
  /** Size of the session -> endpoint LRU. */
  max_pinned_sessions: z.number().int().min(1).default(100_000),
  /** Health probe period for multiple endpoints (0 = no periodic probes). */
  health_check_interval_s: z.number().min(0).default(10),
  /** Consecutive failures (requests or probes) that take an endpoint out of placement. */
  unhealthy_after_failures: z.number().int().min(1).default(2),
  ...ImageLimitsFields,
  ...ImageFetchFields,
};

export { OPENAI_ONLY_CHAT_FIELDS };

export interface VLLMConfig extends ImageLimits, ImageFetchConfig, ChatBodySettings {
  base_url: string[];
  api_key: string;
  request_inline_token_ids?: boolean;
  default_headers: Record<string, string>;
  sequential_reasoning_allowed: boolean;
  request_timeout_s: number;
  max_attempts: number;
  retry_sleep_s: number;
  max_pinned_sessions: number;
  health_check_interval_s: number;
  unhealthy_after_failures: number;
}

/**
 * The parsed config block as the backend uses it: the two names of the inline-ids switch folded
 * into one (they must agree when both are given).
 */
export function resolveVLLMConfig(raw: Record<string, unknown>): VLLMConfig {
  const cfg = raw as unknown as VLLMConfig & { request_prompt_and_generation_token_ids?: boolean };
  const a = cfg.request_prompt_and_generation_token_ids;
  const b = cfg.request_inline_token_ids;
  if (a !== undefined && b !== undefined && a !== b) {
    throw new ConfigError(
      `model server \`${cfg.name}\`: request_prompt_and_generation_token_ids (${a}) and request_inline_token_ids (${b}) are the same setting and disagree; keep request_prompt_and_generation_token_ids`,
    );
  }
  return { ...cfg, request_prompt_and_generation_token_ids: a ?? b ?? false };
}

type Json = Record<string, unknown>;

/** A streamed chat call: vLLM's chunks as they come, then the finished completion. */
export interface ChatStream {
  chunks: AsyncGenerator<Json>;
  final: () => Promise<Json>;
  abort: () => void;
}

/** `http://host:8000/v1` -> `http://host:8000` (vLLM serves /tokenize and /health at the root). */
export function rootUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith('/v1') ? trimmed.slice(0, -3) : trimmed;
}

function isContextLengthError(err: unknown): boolean {
  return (
    err instanceof UpstreamError &&
    err.kind === 'status' &&
    err.upstreamStatus === 400 &&
    typeof err.upstreamBody === 'string' &&
    (err.upstreamBody.includes('context length') || err.upstreamBody.includes('max_tokens'))
  );
}

export class VLLMBackend {
  readonly pool: EndpointPool;
  private readonly dispatcher: Agent;
  private readonly timeoutMs: number;
  private readonly noteDropped: (fields: string[]) => void;
  private readonly fetcher: RemoteImageFetcher | null;

  constructor(
    readonly config: VLLMConfig,
    private readonly log: { info(m: string): void; warn(m: string): void } = { info: () => {}, warn: () => {} },
  ) {
    this.timeoutMs = config.request_timeout_s * 1000;
    if (config.sampling_overrides) {
      this.log.info(`model server \`${config.name}\` pins sampling on every request to vLLM: ${JSON.stringify(config.sampling_overrides)} (a request's own values are replaced)`);
    }
    this.noteDropped = noteDroppedOnce(this.log, 'vLLM');
    this.fetcher = config.fetch_remote_images ? new RemoteImageFetcher(config) : null;
    this.dispatcher = createPool({ connections: 1024, headersTimeoutMs: this.timeoutMs, bodyTimeoutMs: this.timeoutMs });
    this.pool = new EndpointPool(config.base_url, {
      maxSessions: config.max_pinned_sessions,
      failureThreshold: config.unhealthy_after_failures,
      healthCheckIntervalMs: config.base_url.length > 1 ? config.health_check_interval_s * 1000 : 0,
      probe: (url) => this.probe(url),
      onChange: (e, healthy) =>
        healthy
          ? this.log.info(`endpoint ${e.url} is healthy again; new sessions may be placed on it`)
          : this.log.warn(`endpoint ${e.url} failed ${e.consecutiveFailures} times in a row; no new sessions go there until it recovers`),
    });
    this.pool.startHealthChecks();
  }

  async close(): Promise<void> {
    this.pool.stop();
    await this.fetcher?.close();
    await this.dispatcher.close();
  }

  /** The model list of every endpoint (`GET <base_url>/models`): the first failure, or the first list. */
  async models(): Promise<RawJson> {
    const headers: Record<string, string> = { ...this.config.default_headers, ...(this.config.api_key ? { authorization: `Bearer ${this.config.api_key}` } : {}) };
    const answers = await Promise.all(this.config.base_url.map((u) => listBackendModels(u, { headers, apiKey: this.config.api_key, dispatcher: this.dispatcher })));
    return answers.find((a) => a.status < 200 || a.status >= 300) ?? answers[0]!;
  }

  /** Any HTTP answer below 500 from `<root>/health` counts as alive. */
  async probe(url: string): Promise<boolean> {
    try {
      const res = await request(`${rootUrl(url)}/health`, {
        method: 'GET',
        dispatcher: this.dispatcher,
        headersTimeout: 5000,
        bodyTimeout: 5000,
        headers: this.config.api_key ? { authorization: `Bearer ${this.config.api_key}` } : {},
      });
      await res.body.dump();
      return res.statusCode < 500;
    } catch {
      return false;
    }
  }

  /** `idempotent`: a call without effects (e.g. /tokenize) may be resent after any transient failure. */
  private post(url: string, body: unknown, requestClass?: RequestClass, signal?: AbortSignal): Promise<unknown> {
    return postJson(url, body, {
      apiKey: this.config.api_key,
      timeoutMs: this.timeoutMs,
      // With several endpoints a refused connection fails over to another one (callPinned) instead.
      retry: { maxAttempts: this.config.max_attempts, initialDelayMs: this.config.retry_sleep_s * 1000, retryConnectionErrors: this.config.base_url.length === 1 },
      requestClass,
      signal,
      dispatcher: this.dispatcher,
      headers: this.config.default_headers,
      log: (m) => this.log.warn(m),
    });
  }

  /**
   * Sends one call for this session: to its pinned endpoint, or, when that endpoint cannot be
   * reached or times out, once more to each other endpoint (re-pinning the session).
   */
  private async callPinned<T>(sessionId: string, fn: (endpoint: Endpoint) => Promise<T>): Promise<T> {
    const tried = new Set<Endpoint>();
    for (;;) {
      const endpoint = this.pool.select(sessionId, tried);
      if (tried.has(endpoint)) throw new InternalError('the endpoint pool chose an endpoint this call already tried');
      tried.add(endpoint);
      try {
        const out = await this.pool.track(endpoint, () => fn(endpoint));
        this.pool.reportSuccess(endpoint);
        return out;
      } catch (err) {
        const transport = err instanceof UpstreamError && (err.kind === 'connect' || err.kind === 'timeout');
        if (transport) this.pool.reportFailure(endpoint);
        else if (err instanceof UpstreamError) this.pool.reportSuccess(endpoint);
        if (!transport || tried.size >= this.pool.endpoints.length) throw err;
        this.log.warn(`${err.message}; trying another endpoint`);
      }
    }
  }

  /** The request body for vLLM (see buildChatBody), after the image limits are checked. */
  private chatBody(params: ChatCompletionCreateParams | Json, imagesChecked: boolean): Json {
    if (!imagesChecked) checkRequestImages(params as Json, this.config);
    return buildChatBody(params as Json, this.config, this.noteDropped);
  }

  /** Chat Completions through vLLM, with reasoning and token-id handling. */
  async chatCompletions(params: ChatCompletionCreateParams | Json, sessionId: string, signal?: AbortSignal, imagesChecked = false, capture: CallCapture | null = null): Promise<Json> {
    if (!this.config.sequential_reasoning_allowed) {
      // The model may not be asked to go on after a turn that produced nothing (upstream's rule).
      const last = ((params as Json).messages as Json[]).at(-1);
      if (last?.role === 'assistant' && !last.content && !(Array.isArray(last.tool_calls) && last.tool_calls.length)) return this.emptyCompletion('content_filter', capture);
    }
    if (!imagesChecked) params = await this.inlineImages(params);
    const body = this.chatBody(params, imagesChecked);
    return this.callPinned(sessionId, async (endpoint) => {
      const base = endpoint.url.replace(/\/+$/, '');
      let completion: Json;
      try {
        completion = (await this.post(`${base}/chat/completions`, body, undefined, signal)) as Json;
      } catch (err) {
        if (isContextLengthError(err)) return this.emptyCompletion('length', capture);
        throw err;
      }
      return this.finishCompletion(completion, body, base, signal, capture);
    });
  }

  /** Reasoning into `<think>` text and, for training, the token fields on choice 0's message. */
  private async finishCompletion(completion: Json, body: Json, base: string, signal?: AbortSignal, capture: CallCapture | null = null): Promise<Json> {
    const cfg = this.config;
    const choices = completion?.choices;
    if (!Array.isArray(choices) || choices.length === 0 || typeof (choices[0] as Json)?.message !== 'object') {
      throw new UpstreamError(502, `the model backend at ${base}/chat/completions answered without choices[0].message`, 'invalid_json', base);
    }
    const choice = choices[0] as Json;
    const message = choice.message as Json;
    const reasoning = message.reasoning_content || message.reasoning;
    if (cfg.uses_reasoning_parser) {
      if (reasoning) {
        delete message.reasoning_content;
        delete message.reasoning;
        message.content = wrapThink([String(reasoning)]) + ((message.content as string | null) || '');
      }
    } else if (reasoning) {
      throw new UpstreamError(
        502,
        `model server \`${cfg.name}\` has uses_reasoning_parser: false, but the backend at ${base} returned separate reasoning; ` +
          'start vLLM without a reasoning parser, or set uses_reasoning_parser: true',
        'status',
        base,
      );
    }
    if (cfg.return_token_id_information) await this.attachTokenIds(completion, choice, body, base, signal);
    if (capture) this.captureCall(capture, completion, choice);
    return completion;
  }

  /**
   * The call's entry in its rollout's capture: the exact ids just read from vLLM (before the
   * answer is streamed or converted), or, with token ids off, an entry that says why there are none.
   * The answer then leaves the ids out unless rollout_capture.answer_token_ids is on.
   */
  private captureCall(capture: CallCapture, completion: Json, choice: Json): void {
    const message = choice.message as Json;
    if (!this.config.return_token_id_information) {
      capture.recordWithoutIds(`model server \`${this.config.name}\` has return_token_id_information: false, so vLLM was not asked for token ids (use vllm_model_for_training.yaml)`);
      return;
    }
    capture.record({
      prompt_token_ids: message.prompt_token_ids as number[],
      generation_token_ids: message.generation_token_ids as number[],
      generation_log_probs: message.generation_log_probs as number[],
      finish_reason: (choice.finish_reason as string | null | undefined) ?? null,
      chat_message: message,
      model: typeof completion.model === 'string' ? completion.model : null,
    });
    // The capture holds the ids (and the trajectory will carry them): the caller's answer goes without, unless asked.
    if (!capture.answerTokenIds) {
      delete message.prompt_token_ids;
      delete message.generation_token_ids;
      delete message.generation_log_probs;
    }
  }

  /**
   * A streamed Chat Completions call to the session's endpoint (one attempt: a streamed
   * generation is never resent). Resolves once vLLM answered 2xx; `chunks` yields vLLM's chunks
   * as they arrive (without the token options we added), `final()` then gives the whole
   * completion as chatCompletions would have returned it. `abort()` cancels the vLLM request.
   */
  async openChatStream(params: ChatCompletionCreateParams | Json, sessionId: string, imagesChecked = false, capture: CallCapture | null = null): Promise<ChatStream> {
    if (!imagesChecked) params = await this.inlineImages(params);
    const body = this.chatBody(params, imagesChecked);
    body.stream = true;
    body.stream_options = { include_usage: true };
    const endpoint = this.pool.select(sessionId);
    const base = endpoint.url.replace(/\/+$/, '');
    const url = `${base}/chat/completions`;
    const abort = new AbortController();
    let events: AsyncGenerator<SseEvent>;
    endpoint.inFlight++;
    try {
      events = await openBackendStream(url, JSON.stringify(body), this.headers(), {
        dispatcher: this.dispatcher,
        timeoutMs: this.timeoutMs,
        signal: abort.signal,
        apiKey: this.config.api_key,
      });
    } catch (err) {
      endpoint.inFlight--;
      if (err instanceof UpstreamError && (err.kind === 'connect' || err.kind === 'timeout')) this.pool.reportFailure(endpoint);
      if (isContextLengthError(err)) {
        const empty = this.emptyCompletion('length', capture);
        return { chunks: (async function* () {})(), final: async () => empty, abort: () => {} };
      }
      throw err;
    }
    const acc = new ChatChunkAccumulator();
    const stripTokens = this.config.return_token_id_information;
    let result: Promise<Json> | null = null;
    const self = this;
    const chunks = (async function* () {
      try {
        for await (const chunk of chatChunks(events, url)) {
          acc.add(chunk);
          if (stripTokens) {
            delete chunk.prompt_token_ids;
            for (const c of (chunk.choices as Json[] | undefined) ?? []) {
              delete c.logprobs;
              delete c.token_ids;
            }
          }
          yield chunk;
        }
        self.pool.reportSuccess(endpoint);
      } finally {
        endpoint.inFlight--;
      }
    })();
    return {
      chunks,
      final: () => (result ??= this.finishCompletion(acc.completion(), body, base, abort.signal, capture)),
      abort: () => abort.abort(),
    };
  }

  /** With fetch_remote_images, the request with its http(s) images fetched and inlined. */
  private async inlineImages<T extends object>(params: T): Promise<T> {
    return this.fetcher ? this.fetcher.inline(params) : params;
  }

  private headers(): Record<string, string> {
    const h: Record<string, string> = { ...this.config.default_headers, 'content-type': 'application/json' };
    if (this.config.api_key) h.authorization = `Bearer ${this.config.api_key}`;
    return h;
  }

  /**
   * Puts prompt_token_ids, generation_token_ids and generation_log_probs on choice 0's message,
   * read from the sources readTokenSources checks; without prompt ids in the answer, they come
   * from `/tokenize` with every prompt-affecting field of the generation's request.
   */
  private async attachTokenIds(completion: Json, choice: Json, body: Json, base: string, signal?: AbortSignal): Promise<void> {
    const message = choice.message as Json;
    const sources = readTokenSources(completion, choice, base);
    let bundle;
    if (sources.kind === 'needs_prompt') {
      const tok = (await this.post(`${rootUrl(base)}/tokenize`, tokenizeBody(body), 'idempotent', signal)) as Json;
      if (!Array.isArray(tok?.tokens) || !tok.tokens.every((x: unknown) => Number.isInteger(x))) {
        throw new UpstreamError(502, `the model backend at ${base} returned unusable token information: /tokenize answered without a "tokens" list of integers`, 'invalid_json', base);
      }
      bundle = { prompt_token_ids: tok.tokens as number[], generation_token_ids: sources.generation_token_ids, generation_log_probs: sources.generation_log_probs };
    } else {
      bundle = sources.bundle;
    }
    Object.assign(message, bundle);
    delete choice.logprobs;
    delete choice.token_ids;
    delete completion.prompt_token_ids;
  }

  /**
   * Stand-in completion when the prompt no longer fits the context: one empty message (captured as
   * a call that generated nothing, which the trajectory builder leaves out of the chain).
   */
  private emptyCompletion(finishReason: string, capture: CallCapture | null = null): Json {
    capture?.record({ prompt_token_ids: [], generation_token_ids: [], generation_log_probs: [], finish_reason: finishReason, model: this.config.model });
    return {
      id: 'chtcmpl-123',
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: this.config.model,
      choices: [{ index: 0, finish_reason: finishReason, message: { role: 'assistant', content: null, tool_calls: null } }],
    };
  }

  /**
   * `/v1/chat/completions` with `stream: true`: vLLM's chunks are relayed as they arrive; the
   * finish chunk is held back until the stream ends so that, for training, the token fields can
   * ride on its delta. Usage is sent when the client asked for it (stream_options.include_usage).
   */
  async chatCompletionsStream(params: ChatCompletionCreateParams | Json, sessionId: string, capture: CallCapture | null = null): Promise<SseReply> {
    const includeUsage = ((params as Json).stream_options as Json | null | undefined)?.include_usage === true;
    const stream = await this.openChatStream(params, sessionId, false, capture);
    const withTokens = this.config.return_token_id_information;
    async function* events(): AsyncGenerator<SseEvent> {
      const held: Json[] = [];
      for await (const chunk of stream.chunks) {
        const choices = (chunk.choices as Json[] | undefined) ?? [];
        if (choices.length === 0) {
          if (includeUsage) held.push(chunk);
          continue;
        }
        if (held.length || choices.some((c) => c.finish_reason)) held.push(chunk);
        else yield chunkEvent(chunk);
      }
      const final = await stream.final();
      const message = ((final.choices as Json[])[0]?.message ?? {}) as Json;
      const finish = held.find((c) => ((c.choices as Json[] | undefined) ?? []).length > 0);
      if (withTokens && finish) {
        const delta = (((finish.choices as Json[])[0]!.delta ??= {}) as Json);
        for (const k of ['prompt_token_ids', 'generation_token_ids', 'generation_log_probs']) delta[k] = message[k];
      }
      for (const c of held) yield chunkEvent(c);
      yield DONE_EVENT;
    }
    return new SseReply(events(), stream.abort);
  }

  /**
   * `/v1/responses` with `stream: true`: a Responses event stream. With a reasoning parser, vLLM
   * sends reasoning and answer text apart, so the answer text is streamed live as output_text
   * deltas; without one the text may still hold `<think>` blocks, so items are sent when the
   * generation is done. The final items are those of the non-streaming answer (token fields
   * included).
   */
  async responsesStream(params: ResponseCreateParams, sessionId: string, capture: CallCapture | null = null): Promise<SseReply> {
    params = await this.inlineImages(params);
    const cfg = this.config;
    const opts = { returnTokenIdInformation: cfg.return_token_id_information, onDropped: this.noteDropped };
    checkRequestImages(params as Json, cfg);
    let chatParams: Json;
    try {
      chatParams = responsesToChatParams({ ...params, stream: undefined }, opts);
    } catch (err) {
      if (err instanceof ConversionError) throw new HttpError(400, err.message);
      throw err;
    }
    const stream = await this.openChatStream(chatParams, sessionId, true, capture);
    const p = params as Json;
    const writer = new ResponsesEventStream({
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      model: cfg.model,
      output: [],
      parallel_tool_calls: p.parallel_tool_calls ?? true,
      tool_choice: p.tool_choice ?? 'auto',
      tools: p.tools ?? [],
    });
    const live = cfg.uses_reasoning_parser;
    async function* events(): AsyncGenerator<SseEvent> {
      yield* writer.start();
      let reasoning = '';
      let textStarted = false;
      for await (const chunk of stream.chunks) {
        const delta = (((chunk.choices as Json[] | undefined) ?? [])[0]?.delta ?? {}) as Json;
        const r = delta.reasoning_content ?? delta.reasoning;
        if (typeof r === 'string' && !textStarted) reasoning += r;
        if (!live || typeof delta.content !== 'string' || !delta.content) continue;
        if (!textStarted) {
          textStarted = true;
          // vLLM's reasoning parser sends all reasoning before the answer: it is one finished item now.
          if (reasoning) yield* writer.item({ type: 'reasoning', summary: [{ text: reasoning, type: 'summary_text' }], encrypted_content: null }, 0);
        }
        yield* writer.textDelta(delta.content, reasoning ? 1 : 0);
      }
      const completion = await stream.final();
      const response = chatCompletionToResponse({ ...params, model: cfg.model }, completion, { ...opts, model: cfg.model });
      yield* writer.finish(response as unknown as Json);
    }
    return new SseReply(events(), stream.abort);
  }

  /**
   * Input tokens of a Responses request as vLLM's `/tokenize` counts its chat prompt (tools and
   * chat-template switches included): `POST /v1/messages/count_tokens`. Nothing is generated.
   */
  async countTokens(params: ResponseCreateParams, sessionId: string, signal?: AbortSignal): Promise<number> {
    let chatParams: Json;
    try {
      chatParams = responsesToChatParams({ ...params, stream: undefined }, { returnTokenIdInformation: false, onDropped: this.noteDropped });
    } catch (err) {
      if (err instanceof ConversionError) throw new HttpError(400, err.message);
      throw err;
    }
    const body = this.chatBody(chatParams, false);
    return this.callPinned(sessionId, async (endpoint) => {
      const base = endpoint.url.replace(/\/+$/, '');
      const tok = (await this.post(`${rootUrl(base)}/tokenize`, tokenizeBody(body), 'idempotent', signal)) as Json;
      if (!Array.isArray(tok?.tokens)) throw new UpstreamError(502, `the model backend at ${base} answered /tokenize without a "tokens" list`, 'invalid_json', base);
      return tok.tokens.length;
    });
  }

  /** Responses API on top of chatCompletions. */
  async responses(params: ResponseCreateParams, sessionId: string, signal?: AbortSignal, capture: CallCapture | null = null): Promise<NeMoGymResponse> {
    params = await this.inlineImages(params);
    const opts = { returnTokenIdInformation: this.config.return_token_id_information, onDropped: this.noteDropped };
    checkRequestImages(params as Json, this.config);
    let chatParams: Json;
    try {
      chatParams = responsesToChatParams(params, opts);
    } catch (err) {
      if (err instanceof ConversionError) throw new HttpError(400, err.message);
      throw err;
    }
    const completion = await this.chatCompletions(chatParams, sessionId, signal, true, capture);
    return chatCompletionToResponse({ ...params, model: this.config.model }, completion, { ...opts, model: this.config.model });
  }
}
