/**
 * structured_outputs: schema adherence. The model's text must be JSON that validates against the
 * row's JSON schema, made strict (every property required, no additional properties). Content is
 * not judged. Validation runs in worker threads so large schemas never stall the server.
 */
import { z } from 'zod';
import { PoolTaskError, TimeoutError } from '@nemo-gym/core/errors';
import { outputText } from '@nemo-gym/core/openai';
import { BaseVerifyRequestSchema, defineResourcesServer, ResourcesServerConfigSchema, startIfMain, validationDetail, validationError } from '@nemo-gym/core/server';
import { WorkerPool } from '@nemo-gym/core/workers';
import type { ScoreResult } from './src/validate.js';

export const StructuredOutputsConfigSchema = ResourcesServerConfigSchema.extend({
  /** Worker threads that validate (default 2). */
  num_workers: z.number().int().positive().default(2),
  /** Time limit for one validation, in milliseconds (a pathological `pattern` cannot hang the server). */
  validation_timeout_ms: z.number().int().positive().default(10_000),
  /**
   * Also answer `reward_components` (see {@link schemaComponents}), summing to the reward. Off by
   * default: upstream's answer has no such key.
   */
  reward_components: z.boolean().default(false),
});

/**
 * The reward split into JSON syntax and schema conformance, summing to the reward as NeMo-RL requires
 * of `reward_components`: `json_syntax` is 1 when the answer is JSON, `schema_conformance` -1 when
 * that JSON breaks the schema (0 otherwise). The content of the values is not judged here.
 */
export function schemaComponents(result: ScoreResult): Record<string, number> {
  const parsed = result.reward === 1 || result.stage === 'validation_error' ? 1 : 0;
  return { json_syntax: parsed, schema_conformance: result.reward - parsed };
}

export const SCHEMA_TYPES = ['json'] as const;

export const StructuredOutputsVerifyRequestSchema = BaseVerifyRequestSchema.extend({
  /** The schema as JSON text. */
  schema_str: z.string(),
  schema_type: z.enum(SCHEMA_TYPES),
});

export const server = defineResourcesServer({
  className: 'StructuredOutputsResourcesServer',
  configSchema: StructuredOutputsConfigSchema,
  setup: ({ config }) => ({
    pool: new WorkerPool(new URL('./src/validate.ts', import.meta.url), {
      size: config.num_workers,
      taskTimeoutMs: config.validation_timeout_ms,
    }),
  }),
  close: async ({ state }) => {
    await state.pool.close();
  },
  verify: {
    body: StructuredOutputsVerifyRequestSchema,
    handler: async (body, ctx) => {
      const text = outputText(body.response);
      let result: ScoreResult;
      try {
        result = await ctx.state.pool.run<ScoreResult>('scoreJson', [body.schema_str, text]);
      } catch (e) {
        if (e instanceof TimeoutError || (e as { code?: unknown }).code === 'NG_ERR_TIMEOUT') {
          throw validationError(
            validationDetail(
              'value_error',
              ['schema_str'],
              `validating this response against the schema did not finish within ${ctx.config.validation_timeout_ms} ms; ` +
                'a `pattern` in the schema probably backtracks catastrophically (nested quantifiers like (a+)+): simplify it',
              null,
            ),
          );
        }
        // the worker died while validating (or the task threw): this answer could not be checked;
        // a pool that is closed or cannot start workers is the server's failure and stays an error
        if (!(e instanceof PoolTaskError) && (e as { code?: unknown }).code !== 'NG_ERR_POOL_WORKER_DIED') throw e;
        result = { reward: 0.0, stage: 'internal_error', error: `validation failed: ${(e as Error).message}` };
      }
      if (result.stage === 'unsupported') {
        throw validationError(validationDetail('value_error', ['schema_str'], `the schema cannot be checked here: ${result.message}`, null));
      }
      const out = {
        responses_create_params: body.responses_create_params,
        response: body.response,
        reward: result.reward,
        ...(ctx.config.reward_components ? { reward_components: schemaComponents(result) } : {}),
      };
      // an error (not a verdict on the answer) is reported with the 0.0 it scores
      return result.error === undefined ? out : { ...out, error_message: result.error };
    },
  },
});

startIfMain(import.meta.url, server);
