/**
 * A completion from vLLM made into vllm_model's answer: reasoning into `<think>` text, the token
 * ids for training, the call's capture entry, and the stand-in for a prompt that no longer fits.
 */
import type { CallCapture } from '@nemo-gym/core/capture';
import { UpstreamError, wrapThink } from '@nemo-gym/core/openai';
import { rootUrl, type BackendCaller } from './backend-call.js';
import type { VLLMConfig } from './config.js';
import { readTokenSources, tokenizeBody } from './tokens.js';

type Json = Record<string, unknown>;

/** Reasoning into `<think>` text and, for training, the token fields on choice 0's message. */
export async function finishCompletion(caller: BackendCaller, completion: Json, body: Json, base: string, signal?: AbortSignal, capture: CallCapture | null = null): Promise<Json> {
  const cfg = caller.config;
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
  if (cfg.return_token_id_information) await attachTokenIds(caller, completion, choice, body, base, signal);
  if (capture) captureCall(cfg, capture, completion, choice);
  return completion;
}

/**
 * The call's entry in its rollout's capture: the exact ids just read from vLLM (before the
 * answer is streamed or converted), or, with token ids off, an entry that says why there are none.
 * The answer then leaves the ids out unless rollout_capture.answer_token_ids is on.
 */
function captureCall(cfg: VLLMConfig, capture: CallCapture, completion: Json, choice: Json): void {
  const message = choice.message as Json;
  if (!cfg.return_token_id_information) {
    capture.recordWithoutIds(`model server \`${cfg.name}\` has return_token_id_information: false, so vLLM was not asked for token ids (use vllm_model_for_training.yaml)`);
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
 * Puts prompt_token_ids, generation_token_ids and generation_log_probs on choice 0's message,
 * read from the sources readTokenSources checks; without prompt ids in the answer, they come
 * from `/tokenize` with every prompt-affecting field of the generation's request.
 */
async function attachTokenIds(caller: BackendCaller, completion: Json, choice: Json, body: Json, base: string, signal?: AbortSignal): Promise<void> {
  const message = choice.message as Json;
  const sources = readTokenSources(completion, choice, base);
  let bundle;
  if (sources.kind === 'needs_prompt') {
    const tok = (await caller.post(`${rootUrl(base)}/tokenize`, tokenizeBody(body), 'idempotent', signal)) as Json;
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
export function emptyCompletion(cfg: VLLMConfig, finishReason: string, capture: CallCapture | null = null): Json {
  capture?.record({ prompt_token_ids: [], generation_token_ids: [], generation_log_probs: [], finish_reason: finishReason, model: cfg.model });
  return {
    id: 'chtcmpl-123',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: cfg.model,
    choices: [{ index: 0, finish_reason: finishReason, message: { role: 'assistant', content: null, tool_calls: null } }],
  };
}
