/**
 * mcqa: multiple-choice QA. The answer letter is taken from the assistant text with the row's
 * `template_metadata.output_regex` (a Python regex) when present, else with the row's grading mode,
 * and compared with `expected_answer`.
 */
import { z } from 'zod';
import { BaseVerifyRequestSchema, defineResourcesServer, HttpError, ResourcesServerConfigSchema, startIfMain } from '@nemo-gym/core';
import { grade, GRADING_MODES, OutputRegexError } from './src/grade.js';

export const MCQARunFieldsSchema = z.object({
  uuid: z.string().nullable().optional(),
  /** e.g. `[{"A": "Karyotyping"}, {"B": "PCR"}]` */
  options: z.array(z.record(z.string(), z.string())).nullable().optional(),
  expected_answer: z.string().nullable().optional(),
  /** Carried along for dataset bookkeeping; never read. */
  metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  grading_mode: z.enum(GRADING_MODES).default('strict_single_letter_boxed'),
  /** Only `output_regex` is read. */
  template_metadata: z.record(z.string(), z.unknown()).nullable().optional(),
});

export const MCQAVerifyRequestSchema = BaseVerifyRequestSchema.extend(MCQARunFieldsSchema.shape);

export const server = defineResourcesServer({
  className: 'MCQAResourcesServer',
  configSchema: ResourcesServerConfigSchema,
  verify: {
    body: MCQAVerifyRequestSchema,
    handler: (body) => {
      let result;
      try {
        result = grade({
          output: body.response.output as unknown[],
          options: body.options,
          expected_answer: body.expected_answer,
          grading_mode: body.grading_mode,
          template_metadata: body.template_metadata,
        });
      } catch (e) {
        if (e instanceof OutputRegexError) {
          throw new HttpError(422, [
            {
              type: 'value_error',
              loc: ['body', 'template_metadata', 'output_regex'],
              msg: e.message,
              input: body.template_metadata?.output_regex ?? null,
            },
          ]);
        }
        throw e;
      }
      return {
        responses_create_params: body.responses_create_params,
        response: body.response,
        reward: result.reward,
        expected_answer: result.expected_answer,
        extracted_answer: result.extracted_answer,
      };
    },
  },
});

startIfMain(import.meta.url, server);
