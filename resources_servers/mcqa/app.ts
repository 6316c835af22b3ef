/**
 * mcqa: multiple-choice QA. The answer letter is taken from the assistant text with the row's
 * `template_metadata.output_regex` (a Python regex) when present, else with the row's grading mode,
 * and compared with `expected_answer`. Matching runs in worker threads with a time limit, because
 * dataset-supplied regexes can backtrack catastrophically on long model output.
 */
import { z } from 'zod';
import { HttpError, TimeoutError } from '@nemo-gym/core/errors';
import { BaseVerifyRequestSchema, defineResourcesServer, ResourcesServerConfigSchema, startIfMain, validationDetail, validationError } from '@nemo-gym/core/server';
import { WorkerPool } from '@nemo-gym/core/workers';
import { extractAssistantText, GRADING_MODES, outputRegexOf, OutputRegexError, type GradeOutcome } from './src/grade.js';

export const MCQAConfigSchema = ResourcesServerConfigSchema.extend({
  /** Worker threads that run the answer extraction (default 2). */
  num_workers: z.number().int().positive().default(2),
  /** Time limit for extracting one answer, in milliseconds. */
  grading_timeout_ms: z.number().int().positive().default(10_000),
});

export const MCQARunFieldsSchema = z.object({
  uuid: z.string().nullable().optional(),
  /** e.g. `[{"A": "Karyotyping"}, {"B": "PCR"}]`; a null text marks an option that does not exist. */
  options: z.array(z.record(z.string(), z.string().nullable())).nullable().optional(),
  expected_answer: z.string().nullable().optional(),
  /** Carried along for dataset bookkeeping; never read. */
  metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  grading_mode: z.enum(GRADING_MODES).default('strict_single_letter_boxed'),
  /** Only `output_regex` is read. */
  template_metadata: z.record(z.string(), z.unknown()).nullable().optional(),
});

export const MCQAVerifyRequestSchema = BaseVerifyRequestSchema.extend(MCQARunFieldsSchema.shape);

/** Null-valued options are dropped: they are neither allowed letters nor matchable text. */
function withoutNullOptions(options: Record<string, string | null>[] | null | undefined): Record<string, string>[] | null | undefined {
  if (!options) return options;
  return options.map((entry) => Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== null)) as Record<string, string>);
}

function regexProblem(msg: string, input: unknown): HttpError {
  return validationError(validationDetail('value_error', ['template_metadata', 'output_regex'], msg, input ?? null));
}

export const server = defineResourcesServer({
  className: 'MCQAResourcesServer',
  configSchema: MCQAConfigSchema,
  setup: ({ config }) => ({
    pool: new WorkerPool(new URL('./src/grade.ts', import.meta.url), {
      size: config.num_workers,
      taskTimeoutMs: config.grading_timeout_ms,
    }),
  }),
  close: async ({ state }) => {
    await state.pool.close();
  },
  verify: {
    body: MCQAVerifyRequestSchema,
    handler: async (body, ctx) => {
      const regexInput = body.template_metadata?.output_regex;
      try {
        outputRegexOf(body.template_metadata); // a non-string regex is reported before any work
      } catch (e) {
        if (e instanceof OutputRegexError) throw regexProblem(e.message, regexInput);
        throw e;
      }
      const input = {
        text: extractAssistantText(body.response.output as unknown[]),
        options: withoutNullOptions(body.options),
        expected_answer: body.expected_answer,
        grading_mode: body.grading_mode,
        template_metadata: body.template_metadata,
      };
      let outcome: GradeOutcome;
      try {
        outcome = await ctx.state.pool.run<GradeOutcome>('gradeTask', [input]);
      } catch (e) {
        if ((e instanceof TimeoutError || (e as { code?: unknown }).code === 'NG_ERR_TIMEOUT') && typeof regexInput === 'string') {
          throw regexProblem(
            `template_metadata.output_regex did not finish within ${ctx.config.grading_timeout_ms} ms on this response ` +
              `(catastrophic backtracking, e.g. nested quantifiers like (a+)+); simplify the pattern`,
            regexInput,
          );
        }
        throw e;
      }
      if (!outcome.ok) throw regexProblem(outcome.regexError, regexInput);
      return {
        responses_create_params: body.responses_create_params,
        response: body.response,
        reward: outcome.result.reward,
        expected_answer: outcome.result.expected_answer,
        extracted_answer: outcome.result.extracted_answer,
      };
    },
  },
});

startIfMain(import.meta.url, server);
