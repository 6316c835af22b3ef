/**
 * The Chat Completions body vllm_model sends to vLLM, built from a caller's chat request in one
 * place for every path (plain, streamed, from Responses): the configured model, chat-template
 * switches, extra body fields, the token-id options, the token bundles of earlier turns, reasoning
 * in the history, and pinned sampling.
 */
import { HttpError } from '@nemo-gym/core/errors';
import { copySharingTokenIds, moveThinkToReasoningContent } from '@nemo-gym/core/openai';
import { forwardTokenBundles, type TokenForwarding } from './tokens.js';

type Json = Record<string, unknown>;

/**
 * Chat Completions fields of OpenAI's own service that vLLM does not take: left out of what is
 * sent (noted once in the log) rather than sent to be ignored or refused.
 */
export const OPENAI_ONLY_CHAT_FIELDS = ['moderation', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention', 'reasoning_effort', 'safety_identifier', 'verbosity'] as const;

/** The config settings that shape a backend request. */
export interface ChatBodySettings {
  name: string;
  model: string;
  return_token_id_information: boolean;
  request_prompt_and_generation_token_ids: boolean;
  token_id_forwarding: TokenForwarding;
  uses_reasoning_parser: boolean;
  uses_interleaved_reasoning: boolean;
  preserve_reasoning_in_assistant_content: boolean;
  replace_developer_role_with_system: boolean;
  chat_template_kwargs: Json | null;
  extra_body: Json | null;
  sampling_overrides: Json | null;
}

/** `metadata.<key>` of a request: a JSON object written as a string (Responses metadata values are strings). */
function metadataObject(metadata: unknown, key: string): Json | null {
  if (metadata === null || typeof metadata !== 'object') return null;
  const raw = (metadata as Json)[key];
  if (raw === undefined || raw === null || raw === '') return null;
  let parsed: unknown;
  try {
    parsed = typeof raw === 'string' ? JSON.parse(raw) : raw;
  } catch (err) {
    throw new HttpError(400, `metadata.${key} is not valid JSON (${(err as Error).message}); give a JSON object as a string, e.g. "{\\"enable_thinking\\": false}"`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new HttpError(400, `metadata.${key} must be a JSON object as a string, e.g. "{\\"enable_thinking\\": false}"; got ${JSON.stringify(raw).slice(0, 100)}`);
  }
  return parsed as Json;
}

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The backend body for a chat request (the caller's object is not changed). Precedence, lowest
 * first: `extra_body` (config, then the row's `metadata.extra_body`) < the request itself < the
 * token-id options < `sampling_overrides`. `chat_template_kwargs` merge key by key: extra_body's,
 * then the config's, then the row's `metadata.chat_template_kwargs`.
 */
export function buildChatBody(params: Json, cfg: ChatBodySettings, noteDropped: (fields: string[]) => void): Json {
  const forwarded = forwardTokenBundles(params.messages as Json[], cfg.return_token_id_information ? cfg.token_id_forwarding : 'none');
  // The caller's object is not changed; the forwarded bundle's arrays are shared, not copied.
  let body: Json = copySharingTokenIds({ ...params, messages: forwarded });
  const messages = body.messages as Json[];
  const dropped = OPENAI_ONLY_CHAT_FIELDS.filter((k) => body[k] !== undefined && body[k] !== null);
  for (const k of OPENAI_ONLY_CHAT_FIELDS) delete body[k];
  if (dropped.length) noteDropped(dropped);
  if (cfg.replace_developer_role_with_system) {
    for (const m of messages) if (m.role === 'developer') m.role = 'system';
  }
  body.model = cfg.model;

  const rowExtra = metadataObject(body.metadata, 'extra_body');
  const extra: Json = { ...(cfg.extra_body ?? {}), ...(rowExtra ?? {}) };
  const kwargs: Json = {
    ...(isObject(extra.chat_template_kwargs) ? extra.chat_template_kwargs : {}),
    ...(cfg.chat_template_kwargs ?? {}),
    ...(isObject(body.chat_template_kwargs) ? body.chat_template_kwargs : {}),
    ...(metadataObject(body.metadata, 'chat_template_kwargs') ?? {}),
  };
  delete extra.chat_template_kwargs;
  if (Object.keys(kwargs).length) body.chat_template_kwargs = kwargs;

  if (cfg.return_token_id_information) {
    if (body.n !== undefined && body.n !== null && body.n !== 1) {
      throw new HttpError(400, `n=${String(body.n)} is not supported when return_token_id_information is on; send n=1 or leave it out`);
    }
    body.logprobs = true;
    // Only the chosen token's log-prob is needed; a null top_logprobs would turn log-probs off in vLLM.
    body.top_logprobs = 0;
    body.return_tokens_as_token_ids = true;
    if (cfg.request_prompt_and_generation_token_ids) body.return_token_ids = true;
  } else if (body.top_logprobs === null) {
    delete body.top_logprobs;
  }

  if (cfg.uses_reasoning_parser && !cfg.preserve_reasoning_in_assistant_content) {
    moveThinkToReasoningContent(messages);
    if (!cfg.uses_interleaved_reasoning) for (const m of messages) delete m.reasoning_content;
  }

  if (Object.keys(extra).length) {
    const merged: Json = { ...extra };
    for (const [k, v] of Object.entries(body)) merged[k] = v;
    body = merged;
  }
  if (cfg.sampling_overrides) Object.assign(body, cfg.sampling_overrides);
  if (cfg.return_token_id_information && body.n !== undefined && body.n !== null && body.n !== 1) {
    throw new HttpError(400, `n=${String(body.n)} (from extra_body or sampling_overrides of model server \`${cfg.name}\`) is not supported when return_token_id_information is on`);
  }
  return body;
}
