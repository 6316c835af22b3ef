/**
 * The vLLM model server's logic: Responses requests are converted to Chat Completions, sent to
 * one of the configured vLLM endpoints (pinned per session), and converted back. With
 * `return_token_id_information`, each generation carries prompt token ids, generation token ids
 * and their log-probs, for training.
 *
 * This class is the façade the app uses; the work is done by concern: settings (config.ts), the
 * request body (request.ts), calls to the endpoints with placement, health and failover
 * (backend-call.ts), finishing a completion with reasoning, token ids and capture
 * (completion.ts, tokens.ts), and streaming (stream.ts).
 */
import type { CallCapture } from '@nemo-gym/core/capture';
import { HttpError } from '@nemo-gym/core/errors';
import { chatCompletionToResponse, checkRequestImages, ConversionError, noteDroppedOnce, RemoteImageFetcher, responsesToChatParams, UpstreamError, type ChatCompletionCreateParams, type NeMoGymResponse, type ResponseCreateParams } from '@nemo-gym/core/openai';
import type { RawJson, SseReply } from '@nemo-gym/core/server';
import { BackendCaller, isContextLengthError, rootUrl, type BackendLog } from './backend-call.js';
import type { VLLMConfig } from './config.js';
import { emptyCompletion, finishCompletion } from './completion.js';
import type { EndpointPool } from './endpoints.js';
import { buildChatBody } from './request.js';
import { chatCompletionsReply, openChatStream, responsesReply, type ChatStream } from './stream.js';
import { tokenizeBody } from './tokens.js';

type Json = Record<string, unknown>;

export class VLLMBackend {
  private readonly caller: BackendCaller;
  private readonly noteDropped: (fields: string[]) => void;
  private readonly fetcher: RemoteImageFetcher | null;

  constructor(
    readonly config: VLLMConfig,
    log: BackendLog = { info: () => {}, warn: () => {} },
  ) {
    if (config.sampling_overrides) {
      log.info(`model server \`${config.name}\` pins sampling on every request to vLLM: ${JSON.stringify(config.sampling_overrides)} (a request's own values are replaced)`);
    }
    this.noteDropped = noteDroppedOnce(log, 'vLLM');
    this.fetcher = config.fetch_remote_images ? new RemoteImageFetcher(config) : null;
    this.caller = new BackendCaller(config, log);
  }

  /** The endpoints, with the session placement and their health. */
  get pool(): EndpointPool {
    return this.caller.pool;
  }

  async close(): Promise<void> {
    await this.fetcher?.close();
    await this.caller.close();
  }

  /** The model list of every endpoint (`GET <base_url>/models`): the first failure, or the first list. */
  models(): Promise<RawJson> {
    return this.caller.models();
  }

  /** Any HTTP answer below 500 from `<root>/health` counts as alive. */
  probe(url: string): Promise<boolean> {
    return this.caller.probe(url);
  }

  /** Chat Completions through vLLM, with reasoning and token-id handling. */
  async chatCompletions(params: ChatCompletionCreateParams | Json, sessionId: string, signal?: AbortSignal, imagesChecked = false, capture: CallCapture | null = null): Promise<Json> {
    if (!this.config.sequential_reasoning_allowed) {
      // The model may not be asked to go on after a turn that produced nothing (upstream's rule).
      const last = ((params as Json).messages as Json[]).at(-1);
      if (last?.role === 'assistant' && !last.content && !(Array.isArray(last.tool_calls) && last.tool_calls.length)) return emptyCompletion(this.config, 'content_filter', capture);
    }
    const body = await this.chatBody(params, imagesChecked);
    return this.caller.callPinned(sessionId, async (endpoint) => {
      const base = endpoint.url.replace(/\/+$/, '');
      let completion: Json;
      try {
        completion = (await this.caller.post(`${base}/chat/completions`, body, undefined, signal)) as Json;
      } catch (err) {
        if (isContextLengthError(err)) return emptyCompletion(this.config, 'length', capture);
        throw err;
      }
      return finishCompletion(this.caller, completion, body, base, signal, capture);
    });
  }

  /** A streamed Chat Completions call to the session's endpoint (see stream.ts `openChatStream`). */
  async openChatStream(params: ChatCompletionCreateParams | Json, sessionId: string, imagesChecked = false, capture: CallCapture | null = null): Promise<ChatStream> {
    return openChatStream(this.caller, await this.chatBody(params, imagesChecked), sessionId, capture);
  }

  /** `/v1/chat/completions` with `stream: true` (see stream.ts `chatCompletionsReply`). */
  async chatCompletionsStream(params: ChatCompletionCreateParams | Json, sessionId: string, capture: CallCapture | null = null): Promise<SseReply> {
    const includeUsage = ((params as Json).stream_options as Json | null | undefined)?.include_usage === true;
    const stream = await this.openChatStream(params, sessionId, false, capture);
    return chatCompletionsReply(stream, includeUsage, this.config.return_token_id_information);
  }

  /** `/v1/responses` with `stream: true` (see stream.ts `responsesReply`). */
  async responsesStream(params: ResponseCreateParams, sessionId: string, capture: CallCapture | null = null): Promise<SseReply> {
    params = await this.inlineImages(params);
    const opts = this.conversionOptions(this.config.return_token_id_information);
    checkRequestImages(params as Json, this.config);
    const chatParams = toChatParams({ ...params, stream: undefined }, opts);
    const stream = await this.openChatStream(chatParams, sessionId, true, capture);
    return responsesReply(stream, params, this.config.model, this.config.uses_reasoning_parser, opts);
  }

  /**
   * Input tokens of a Responses request as vLLM's `/tokenize` counts its chat prompt (tools and
   * chat-template switches included): `POST /v1/messages/count_tokens`. Nothing is generated.
   */
  async countTokens(params: ResponseCreateParams, sessionId: string, signal?: AbortSignal): Promise<number> {
    const chatParams = toChatParams({ ...params, stream: undefined }, this.conversionOptions(false));
    const body = await this.chatBody(chatParams, false, false);
    return this.caller.callPinned(sessionId, async (endpoint) => {
      const base = endpoint.url.replace(/\/+$/, '');
      const tok = (await this.caller.post(`${rootUrl(base)}/tokenize`, tokenizeBody(body), 'idempotent', signal)) as Json;
      if (!Array.isArray(tok?.tokens)) throw new UpstreamError(502, `the model backend at ${base} answered /tokenize without a "tokens" list`, 'invalid_json', base);
      return tok.tokens.length;
    });
  }

  /** Responses API on top of chatCompletions. */
  async responses(params: ResponseCreateParams, sessionId: string, signal?: AbortSignal, capture: CallCapture | null = null): Promise<NeMoGymResponse> {
    params = await this.inlineImages(params);
    const opts = this.conversionOptions(this.config.return_token_id_information);
    checkRequestImages(params as Json, this.config);
    const chatParams = toChatParams(params, opts);
    const completion = await this.chatCompletions(chatParams, sessionId, signal, true, capture);
    return chatCompletionToResponse({ ...params, model: this.config.model }, completion, { ...opts, model: this.config.model });
  }

  private conversionOptions(returnTokenIdInformation: boolean): { returnTokenIdInformation: boolean; onDropped: (fields: string[]) => void } {
    return { returnTokenIdInformation, onDropped: this.noteDropped };
  }

  /**
   * The request body for vLLM (see buildChatBody): unless the images were checked already, with
   * fetch_remote_images its http(s) images fetched and inlined (`inline`), then the image limits checked.
   */
  private async chatBody(params: ChatCompletionCreateParams | Json, imagesChecked: boolean, inline = true): Promise<Json> {
    if (!imagesChecked) {
      if (inline) params = await this.inlineImages(params);
      checkRequestImages(params as Json, this.config);
    }
    return buildChatBody(params as Json, this.config, this.noteDropped);
  }

  /** With fetch_remote_images, the request with its http(s) images fetched and inlined. */
  private async inlineImages<T extends object>(params: T): Promise<T> {
    return this.fetcher ? this.fetcher.inline(params) : params;
  }
}

/** A Responses request as Chat Completions params; a request that cannot be converted is the caller's 400. */
function toChatParams(params: ResponseCreateParams, opts: { returnTokenIdInformation: boolean; onDropped: (fields: string[]) => void }): Json {
  try {
    return responsesToChatParams(params, opts);
  } catch (err) {
    if (err instanceof ConversionError) throw new HttpError(400, err.message);
    throw err;
  }
}
