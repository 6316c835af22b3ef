/**
 * vllm_model's settings: the config block's fields (zod), and the block as the backend reads it.
 */
import { z } from 'zod';
import { ConfigError } from '@nemo-gym/core/errors';
import { ImageFetchFields, ImageLimitsFields, type ImageFetchConfig, type ImageLimits } from '@nemo-gym/core/openai';
import type { ChatBodySettings } from './request.js';
import { TOKEN_FORWARDING_MODES } from './tokens.js';

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
