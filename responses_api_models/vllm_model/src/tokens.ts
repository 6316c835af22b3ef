/**
 * Token ids for training: which assistant messages carry their generation's token bundle back to
 * the backend, what `/tokenize` is sent, and where a completion's token ids are read from.
 *
 * A trainer's vLLM server (NeMo-RL's `NeMoRLOpenAIChatRequestMixin`, VeRL's NeMo Gym recipe) keeps
 * a multi-turn rollout token-contiguous by taking `prompt_token_ids + generation_token_ids` from
 * the LAST message that carries them and splicing those exact tokens in place of the re-templated
 * history up to the last assistant message. So the bundle has to reach the backend on the
 * assistant message it belongs to; the earlier ones are never read.
 */
import { UpstreamError } from '@nemo-gym/core/openai';

type Json = Record<string, unknown>;

export const TOKEN_BUNDLE_KEYS = ['prompt_token_ids', 'generation_token_ids', 'generation_log_probs'] as const;

/**
 * Which assistant messages keep their token bundle on the way to the backend:
 * `last` — only the last one that has a bundle (what trainers read; requests grow linearly);
 * `all` — every one (upstream's bytes; requests grow quadratically with turns);
 * `none` — none (a backend that re-tokenizes history; multi-turn rollouts may not be contiguous).
 */
export const TOKEN_FORWARDING_MODES = ['last', 'all', 'none'] as const;
export type TokenForwarding = (typeof TOKEN_FORWARDING_MODES)[number];

function hasBundleKey(m: Json): boolean {
  return m.prompt_token_ids !== undefined || m.generation_token_ids !== undefined || m.generation_log_probs !== undefined;
}

/**
 * The messages of a backend request under a forwarding mode: the same message objects where
 * nothing changes, shallow copies without the bundle where one is dropped (so the bundles that
 * are not sent are never copied either).
 */
export function forwardTokenBundles(messages: Json[], mode: TokenForwarding): Json[] {
  if (mode === 'all') return messages;
  let keep = -1;
  if (mode === 'last') {
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i]!;
      if (m.role === 'assistant' && Array.isArray(m.prompt_token_ids) && Array.isArray(m.generation_token_ids)) {
        keep = i;
        break;
      }
    }
  }
  return messages.map((m, i) => {
    // Bundles only ever belong on assistant messages; anywhere else they are dropped.
    if (i === keep || !hasBundleKey(m)) return m;
    const { prompt_token_ids: _p, generation_token_ids: _g, generation_log_probs: _l, ...rest } = m;
    return rest;
  });
}

/**
 * Fields of a chat request that change the prompt, so `/tokenize` renders the same prompt the
 * generation got (vLLM's TokenizeChatRequest fields, as upstream's vllm_model sends them, plus
 * the template switches vLLM reads from a chat request).
 */
export const TOKENIZE_CHAT_FIELDS = [
  'model',
  'messages',
  'tools',
  'chat_template',
  'chat_template_kwargs',
  'add_generation_prompt',
  'continue_final_message',
  'add_special_tokens',
  'documents',
  'mm_processor_kwargs',
  'required_prefix_token_ids',
] as const;

/** The `/tokenize` body for a chat request body (add_generation_prompt made explicit: vLLM's default for chat is true). */
export function tokenizeBody(body: Json): Json {
  const out: Json = {};
  for (const k of TOKENIZE_CHAT_FIELDS) if (body[k] !== undefined && body[k] !== null) out[k] = body[k];
  out.add_generation_prompt ??= true;
  return out;
}

export interface TokenBundle {
  prompt_token_ids: number[];
  generation_token_ids: number[];
  generation_log_probs: number[];
}

function isIntList(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((x) => Number.isInteger(x));
}

function isNumList(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'number' && Number.isFinite(x));
}

/** `first difference at index k (a vs b)`, or the lengths when one is a prefix of the other. */
function firstDifference(a: number[], b: number[]): string {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return `first difference at index ${i} (${a[i]} vs ${b[i]})`;
  return `lengths ${a.length} vs ${b.length}`;
}

function sameIds(a: number[], b: number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A completion's token information, before any `/tokenize` call. */
export type TokenSources =
  | { kind: 'bundle'; bundle: TokenBundle }
  | { kind: 'inline'; bundle: TokenBundle }
  | { kind: 'needs_prompt'; generation_token_ids: number[]; generation_log_probs: number[] };

/**
 * Reads the token ids of choice 0, in upstream's order: a complete bundle on `choice.message`;
 * else top-level `prompt_token_ids` with `choices[0].token_ids`; else the log-prob tokens
 * (`token_id:<n>`), whose prompt ids then come from `/tokenize`. A partial source, or two sources
 * that disagree, is an error that names both — never a silent pick.
 */
export function readTokenSources(completion: Json, choice: Json, base: string): TokenSources {
  const bad = (what: string) =>
    new UpstreamError(502, `the model backend at ${base} returned unusable token information: ${what}`, 'invalid_json', base);
  const message = choice.message as Json;

  const onMessage = TOKEN_BUNDLE_KEYS.filter((k) => message[k] !== undefined && message[k] !== null);
  let bundle: TokenBundle | null = null;
  if (onMessage.length === 3) {
    if (!isIntList(message.prompt_token_ids) || !isIntList(message.generation_token_ids)) throw bad('choices[0].message token ids are not lists of integers');
    if (!isNumList(message.generation_log_probs)) throw bad('choices[0].message.generation_log_probs is not a list of numbers');
    bundle = {
      prompt_token_ids: message.prompt_token_ids,
      generation_token_ids: message.generation_token_ids,
      generation_log_probs: message.generation_log_probs,
    };
  } else if (onMessage.length > 0) {
    const missing = TOKEN_BUNDLE_KEYS.filter((k) => !onMessage.includes(k));
    throw bad(`choices[0].message has ${onMessage.join(', ')} but not ${missing.join(', ')} (a partial bundle)`);
  }

  const inlinePrompt = completion.prompt_token_ids ?? undefined;
  const inlineGen = choice.token_ids ?? undefined;
  if ((inlinePrompt === undefined) !== (inlineGen === undefined)) {
    throw bad(inlinePrompt === undefined ? 'choices[0].token_ids without the top-level prompt_token_ids' : 'the top-level prompt_token_ids without choices[0].token_ids');
  }
  if (inlinePrompt !== undefined && (!isIntList(inlinePrompt) || !isIntList(inlineGen))) {
    throw bad('the top-level prompt_token_ids or choices[0].token_ids are not lists of integers');
  }

  if (bundle) {
    if (inlinePrompt !== undefined) {
      if (!sameIds(inlinePrompt as number[], bundle.prompt_token_ids)) {
        throw bad(`choices[0].message.prompt_token_ids disagree with the top-level prompt_token_ids (${firstDifference(bundle.prompt_token_ids, inlinePrompt as number[])})`);
      }
      if (!sameIds(inlineGen as number[], bundle.generation_token_ids)) {
        throw bad(`choices[0].message.generation_token_ids disagree with choices[0].token_ids (${firstDifference(bundle.generation_token_ids, inlineGen as number[])})`);
      }
    }
    checkLengths(bundle, bad, 'choices[0].message');
    return { kind: 'bundle', bundle };
  }

  const lp = (choice.logprobs as Json | null | undefined)?.content;
  if (!Array.isArray(lp)) {
    throw bad('choices[0].logprobs.content is missing although logprobs were requested (is this a vLLM server started with logprobs allowed?)');
  }
  const genIds: number[] = new Array(lp.length);
  const logProbs: number[] = new Array(lp.length);
  for (let i = 0; i < lp.length; i++) {
    const entry = lp[i] as Json | null;
    const tok = entry?.token;
    const m = typeof tok === 'string' ? /^token_id:(-?\d+)$/.exec(tok) : null;
    if (!m) throw bad(`choices[0].logprobs.content[${i}].token is ${JSON.stringify(tok)}, expected "token_id:<n>" (return_tokens_as_token_ids)`);
    const logprob = entry!.logprob;
    if (typeof logprob !== 'number') throw bad(`choices[0].logprobs.content[${i}].logprob is not a number`);
    genIds[i] = Number(m[1]);
    logProbs[i] = logprob;
  }
  if (inlinePrompt !== undefined) {
    if (!sameIds(inlineGen as number[], genIds)) {
      throw bad(`choices[0].token_ids disagree with the log-prob tokens in choices[0].logprobs.content (${firstDifference(inlineGen as number[], genIds)})`);
    }
    return { kind: 'inline', bundle: { prompt_token_ids: inlinePrompt as number[], generation_token_ids: genIds, generation_log_probs: logProbs } };
  }
  return { kind: 'needs_prompt', generation_token_ids: genIds, generation_log_probs: logProbs };
}

function checkLengths(bundle: TokenBundle, bad: (what: string) => Error, where: string): void {
  if (bundle.generation_token_ids.length !== bundle.generation_log_probs.length) {
    throw bad(`${where} has ${bundle.generation_token_ids.length} generation token ids but ${bundle.generation_log_probs.length} log-probs`);
  }
}
