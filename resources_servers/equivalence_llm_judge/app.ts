/**
 * equivalence_llm_judge: an LLM judge decides whether the model's answer (optionally narrowed by
 * a regex, possibly per row) is equivalent to the gold answer. Optional checks: the same judgement
 * with the two answers swapped (position bias), and a partial-credit retry on the full generation
 * when a per-row extraction regex may have cut the answer wrongly.
 */
import { z } from 'zod';
import { type ServerClient } from '@nemo-gym/core/client';
import { ModelServerRefSchema } from '@nemo-gym/core/config';
import { ConfigError } from '@nemo-gym/core/errors';
import { ResponseCreateParamsSchema, askJudgeForVerdict, fullCreateParamsDump, fullResponseDump, noVerdict, outputText, verdictOf } from '@nemo-gym/core/openai';
import { ResourcesServerConfigSchema, BaseVerifyRequestSchema, defineResourcesServer, startIfMain, validationDetail, validationError } from '@nemo-gym/core/server';
import { extractExpectedAnswer, extractLastAssistantText, extractQuestionText } from './src/extract.js';
import { TemplateError, parseTemplate, renderTemplate, type TemplatePart } from './src/template.js';

export const EquivalenceLLMJudgeConfigSchema = ResourcesServerConfigSchema.extend({
  judge_model_server: ModelServerRefSchema,
  judge_responses_create_params: ResponseCreateParamsSchema,
  judge_system_message: z.string().nullable().default(null),
  judge_prompt_template: z.string(),
  judge_equal_label: z.string().default('[[A=B]]'),
  judge_not_equal_label: z.string().default('[[A!=B]]'),
  question_extract_regex: z.string().nullable().default(null),
  response_extract_regex: z.string().nullable().default(null),
  check_twice_swap: z.boolean().default(false),
  reward_if_swap_fails: z.number().default(0.0),
  use_per_record_regex: z.boolean().default(true),
  extraction_length_threshold: z.number().int().nullable().default(120),
  check_full_generation_on_fail: z.boolean().default(true),
  reward_if_full_generation_succeeds: z.number().default(0.5),
  /**
   * A judge answer with neither label scores as "not equal" (upstream 818984b8e) instead of being
   * recorded as a judge failure (NG_ERR_JUDGE_FAILED).
   */
  unparseable_verdict_is_wrong: z.boolean().default(false),
});
export type EquivalenceLLMJudgeConfig = z.output<typeof EquivalenceLLMJudgeConfigSchema>;

/** Upstream's request model allows extra keys (template_metadata, question, reward_profiles, ...). */
export const EquivalenceLLMJudgeVerifyRequestSchema = BaseVerifyRequestSchema.extend({
  uuid: z.union([z.string(), z.number().int()]).nullable().optional(),
  expected_answer: z.string().nullable().optional(),
  options: z.array(z.record(z.string(), z.string())).nullable().optional(),
  metadata: z.record(z.string(), z.unknown()).nullable().optional(),
}).loose();
type VerifyRequest = z.output<typeof EquivalenceLLMJudgeVerifyRequestSchema>;

export interface JudgeEvaluation {
  responses_create_params: Record<string, unknown>;
  response: Record<string, unknown>;
  verdict_label: string | null;
}

interface State {
  template: TemplatePart[];
}

type Ctx = { config: EquivalenceLLMJudgeConfig; state: State; client: ServerClient; log: { warn(msg: string): void }; signal?: AbortSignal };

const TEMPLATE_FIELDS = ['question', 'expected_answer', 'generated_answer'] as const;

/** The verdict: equal label found first -> equal; not-equal label first -> not equal; neither -> not equal, no label. */
export function parseVerdict(response: { output?: unknown }, equalLabel: string, notEqualLabel: string): { equal: boolean; label: string | null } {
  const output = Array.isArray(response.output) ? response.output : [];
  const last = output[output.length - 1] as Record<string, unknown> | undefined;
  if (!last || last.type !== 'message') return { equal: false, label: null };
  const content = Array.isArray(last.content) ? last.content : [];
  if (content.length === 0) return { equal: false, label: null };
  const part = content[content.length - 1] as Record<string, unknown> | null;
  const text = part && typeof part === 'object' && typeof part.text === 'string' ? part.text : '';
  const equal = verdictOf(text, equalLabel, notEqualLabel);
  if (equal === null) return { equal: false, label: null };
  return equal ? { equal: true, label: equalLabel } : { equal: false, label: notEqualLabel };
}

async function judge(ctx: Ctx, question: string, expectedAnswer: string, generatedAnswer: string): Promise<[boolean, JudgeEvaluation]> {
  const cfg = ctx.config;
  const prompt = renderTemplate(ctx.state.template, { question, expected_answer: expectedAnswer, generated_answer: generatedAnswer });
  const input: Record<string, unknown>[] = [];
  if (cfg.judge_system_message) input.push({ role: 'system', content: cfg.judge_system_message, type: 'message' });
  input.push({ role: 'user', content: prompt, type: 'message' });
  // The defaults pydantic fills on upstream's request model are part of the request it sends.
  const params = ResponseCreateParamsSchema.parse({
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    ...structuredClone(cfg.judge_responses_create_params),
    input,
  });
  const name = cfg.judge_model_server.name;
  const response = await askJudgeForVerdict(ctx.client, name, params, ctx.signal);
  const verdict = parseVerdict(response, cfg.judge_equal_label, cfg.judge_not_equal_label);
  if (verdict.label === null && !cfg.unparseable_verdict_is_wrong) throw noVerdict(name, [cfg.judge_equal_label, cfg.judge_not_equal_label], outputText(response));
  return [
    verdict.equal,
    {
      responses_create_params: fullCreateParamsDump(params),
      response: fullResponseDump(response as Record<string, unknown>),
      verdict_label: verdict.label,
    },
  ];
}

function perRecordRegex(body: VerifyRequest): unknown {
  const tm = (body as Record<string, unknown>).template_metadata;
  if (tm && typeof tm === 'object' && !Array.isArray(tm)) {
    const r = (tm as Record<string, unknown>).output_regex;
    return r ? r : null;
  }
  return null;
}

export async function verifyEquivalence(body: VerifyRequest, ctx: Ctx) {
  const cfg = ctx.config;
  const warn = (msg: string) => ctx.log.warn(msg);
  const expected = extractExpectedAnswer(body.expected_answer, body.metadata);
  const question = extractQuestionText(body.responses_create_params.input, cfg.question_extract_regex, warn);

  const recordRegex = cfg.use_per_record_regex ? perRecordRegex(body) : null;
  const tooLong = cfg.extraction_length_threshold !== null && [...expected].length > cfg.extraction_length_threshold;
  let extractRegex: string | null = cfg.response_extract_regex;
  if (recordRegex) {
    if (typeof recordRegex !== 'string' && !tooLong) {
      throw validationError(
        validationDetail('string_type', ['template_metadata', 'output_regex'], 'template_metadata.output_regex must be a string (a Python regular expression)', recordRegex),
      );
    }
    extractRegex = tooLong ? null : (recordRegex as string);
  }
  const skipForLength = Boolean(recordRegex) && tooLong;

  const output = body.response.output as unknown[];
  const generated = extractLastAssistantText(output, extractRegex, warn);
  const [firstEqual, firstEval] = await judge(ctx, question, expected, generated);

  const make = (reward: number, evaluations: JudgeEvaluation[]) => ({
    responses_create_params: body.responses_create_params,
    response: body.response,
    reward,
    expected_answer: expected,
    judge_evaluations: evaluations,
  });

  if (!firstEqual) {
    if (skipForLength) return make(0.0, [firstEval]);
    if (cfg.check_full_generation_on_fail && recordRegex) {
      const full = extractLastAssistantText(output, null);
      const [secondEqual, secondEval] = await judge(ctx, question, expected, full);
      return make(secondEqual ? cfg.reward_if_full_generation_succeeds : 0.0, [firstEval, secondEval]);
    }
    return make(0.0, [firstEval]);
  }
  if (!cfg.check_twice_swap || skipForLength) return make(1.0, [firstEval]);
  // Swap check: the same question with the two answers in the other positions.
  const [secondEqual, secondEval] = await judge(ctx, question, generated, expected);
  return make(secondEqual ? 1.0 : cfg.reward_if_swap_fails, [firstEval, secondEval]);
}

export const server = defineResourcesServer({
  className: 'LLMJudgeResourcesServer',
  configSchema: EquivalenceLLMJudgeConfigSchema,
  setup: (ctx): State => {
    try {
      return { template: parseTemplate(ctx.config.judge_prompt_template, TEMPLATE_FIELDS) };
    } catch (err) {
      if (err instanceof TemplateError) {
        throw new ConfigError(`equivalence_llm_judge instance \`${ctx.config.name}\`: judge_prompt_template is not a usable Python format string: ${err.message}`);
      }
      throw err;
    }
  },
  verify: {
    body: EquivalenceLLMJudgeVerifyRequestSchema,
    handler: (body, ctx) => verifyEquivalence(body, ctx),
  },
});

startIfMain(import.meta.url, server);
