/**
 * Streaming from vLLM: one streamed chat call to the session's endpoint, relayed as Chat
 * Completions chunks or turned into a Responses event stream.
 */
import type { CallCapture } from '@nemo-gym/core/capture';
import { ChatChunkAccumulator, chatChunks, chatCompletionToResponse, chunkEvent, DONE_EVENT, openBackendStream, ResponsesEventStream, type ResponseCreateParams } from '@nemo-gym/core/openai';
import { SseReply, type SseEvent } from '@nemo-gym/core/server';
import { isContextLengthError, isTransportError, type BackendCaller } from './backend-call.js';
import { emptyCompletion, finishCompletion } from './completion.js';

type Json = Record<string, unknown>;

/** A streamed chat call: vLLM's chunks as they come, then the finished completion. */
export interface ChatStream {
  chunks: AsyncGenerator<Json>;
  final: () => Promise<Json>;
  abort: () => void;
}

/**
 * A streamed Chat Completions call of `body` (built for vLLM) to the session's endpoint (one
 * attempt: a streamed generation is never resent). Resolves once vLLM answered 2xx; `chunks`
 * yields vLLM's chunks as they arrive (without the token options we added), `final()` then gives
 * the whole completion as a plain call would have returned it. `abort()` cancels the vLLM request.
 */
export async function openChatStream(caller: BackendCaller, body: Json, sessionId: string, capture: CallCapture | null): Promise<ChatStream> {
  body.stream = true;
  body.stream_options = { include_usage: true };
  const pool = caller.pool;
  const endpoint = pool.select(sessionId);
  const base = endpoint.url.replace(/\/+$/, '');
  const url = `${base}/chat/completions`;
  const abort = new AbortController();
  let events: AsyncGenerator<SseEvent>;
  endpoint.inFlight++;
  try {
    events = await openBackendStream(url, JSON.stringify(body), caller.headers(), {
      dispatcher: caller.dispatcher,
      timeoutMs: caller.timeoutMs,
      signal: abort.signal,
      apiKey: caller.config.api_key,
    });
  } catch (err) {
    endpoint.inFlight--;
    if (isTransportError(err)) pool.reportFailure(endpoint);
    if (isContextLengthError(err)) {
      const empty = emptyCompletion(caller.config, 'length', capture);
      return { chunks: (async function* () {})(), final: async () => empty, abort: () => {} };
    }
    throw err;
  }
  const acc = new ChatChunkAccumulator();
  const stripTokens = caller.config.return_token_id_information;
  let result: Promise<Json> | null = null;
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
      pool.reportSuccess(endpoint);
    } finally {
      endpoint.inFlight--;
    }
  })();
  return {
    chunks,
    final: () => (result ??= finishCompletion(caller, acc.completion(), body, base, abort.signal, capture)),
    abort: () => abort.abort(),
  };
}

/**
 * `/v1/chat/completions` with `stream: true`: vLLM's chunks are relayed as they arrive; the
 * finish chunk is held back until the stream ends so that, for training, the token fields can
 * ride on its delta. Usage is sent when the client asked for it (stream_options.include_usage).
 */
export function chatCompletionsReply(stream: ChatStream, includeUsage: boolean, withTokens: boolean): SseReply {
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
 * `/v1/responses` with `stream: true`: a Responses event stream. With a reasoning parser (`live`),
 * vLLM sends reasoning and answer text apart, so the answer text is streamed live as output_text
 * deltas; without one the text may still hold `<think>` blocks, so items are sent when the
 * generation is done. The final items are those of the non-streaming answer (token fields
 * included).
 */
export function responsesReply(
  stream: ChatStream,
  params: ResponseCreateParams,
  model: string,
  live: boolean,
  opts: { returnTokenIdInformation: boolean; onDropped: (fields: string[]) => void },
): SseReply {
  const p = params as Json;
  const writer = new ResponsesEventStream({
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model,
    output: [],
    parallel_tool_calls: p.parallel_tool_calls ?? true,
    tool_choice: p.tool_choice ?? 'auto',
    tools: p.tools ?? [],
  });
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
    const response = chatCompletionToResponse({ ...params, model }, completion, { ...opts, model });
    yield* writer.finish(response as unknown as Json);
  }
  return new SseReply(events(), stream.abort);
}
