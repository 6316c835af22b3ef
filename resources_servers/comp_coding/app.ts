// comp_coding: competitive programming. The last fenced code block of the answer is run against
// the task's unit tests (LiveCodeBench format: stdio, or call-based with `fn_name`) inside
// @nemo-gym/sandbox; reward 1.0 when every test passes.
import { z } from 'zod';
import { outputText } from '@nemo-gym/core/openai';
import { pyError, pyStrip } from '@nemo-gym/core/py';
import { BaseVerifyRequestSchema, ResourcesServerConfigSchema, defineResourcesServer, startIfMain } from '@nemo-gym/core/server';
import { Sandbox, sandboxConfigShape, sandboxOptionsFromConfig } from '@nemo-gym/sandbox';
import { Grader, extractCode, type UnitTests } from './src/grade.js';

export const CompCodingConfigSchema = ResourcesServerConfigSchema.extend({
  /** Programs graded at once (the sandbox pool size); upstream's key, required. */
  num_processes: z.coerce.number().int().min(1),
  /** Seconds per test case (SIGALRM in the runner); the whole program gets (t + 1) s per test + 5 s. */
  unit_test_timeout_secs: z.coerce.number().int().min(1),
  /** Upstream's key, required; accepted and unused (the runner prints no debug output). */
  debug: z.boolean(),
  /** `sandbox_provider` (default `auto`: the strongest provider available), `sandbox_container`, `python_executable`. */
  ...sandboxConfigShape('auto'),
  /** Address-space limit of a grading process, MiB (the runner also caps its data segment at 4 GiB as upstream does). */
  memory_limit_mb: z.coerce.number().int().min(256).default(4096),
  /** `warm` (default: pre-started runners fork a confined child per verify) or `per_verify`
   * (a fresh sandboxed runner process per verify). */
  runner_mode: z.enum(['warm', 'per_verify']).default('warm'),
  /** Verifies allowed to wait for a slot; more are refused with a 503-style error. */
  max_queue: z.coerce.number().int().min(1).default(100_000),
});
export type CompCodingConfig = z.output<typeof CompCodingConfigSchema>;

/** LiveCodeBench's test format. */
export const UnitTestsSchema = z.object({
  inputs: z.array(z.string()),
  outputs: z.array(z.string()),
  fn_name: z.string().nullable().default(null),
});

export const CompCodingVerifyRequestSchema = BaseVerifyRequestSchema.extend({
  verifier_metadata: z.record(z.string(), z.unknown()).nullable().default(null),
});

interface State {
  sandbox: Sandbox;
  grader: Grader;
}

/** The exception upstream raises for a bad request (its server answers 500 with repr(e)). */

export const server = defineResourcesServer({
  className: 'CompCodingResourcesServer',
  configSchema: CompCodingConfigSchema,
  setup: async ({ config, log }): Promise<State> => {
    const sandbox = await Sandbox.create({
      ...sandboxOptionsFromConfig(config, log),
      poolSize: config.num_processes,
      maxQueue: config.max_queue,
      name: 'ng-comp-coding',
    });
    const grader = new Grader({
      sandbox,
      timeoutS: config.unit_test_timeout_secs,
      memoryBytes: config.memory_limit_mb * 1024 * 1024,
      mode: config.runner_mode,
    });
    try {
      const layers = await grader.warmUp();
      log.info(`comp_coding: ${config.runner_mode} runners, ${config.num_processes} at once` + (layers ? `; confinement: ${JSON.stringify(layers)}` : ''));
    } catch (err) {
      await grader.close();
      await sandbox.close();
      throw err;
    }
    return { sandbox, grader };
  },
  close: async ({ state }) => {
    await state.grader.close();
    await state.sandbox.close();
  },
  verify: {
    body: CompCodingVerifyRequestSchema,
    handler: async (body, ctx: { state: State }) => {
      const base = {
        responses_create_params: body.responses_create_params,
        response: body.response,
        reward: 0.0,
        extracted_model_output: null as string | null,
        extracted_model_code: null as string | null,
        result: null as (boolean | number)[] | null,
        metadata: null as Record<string, unknown> | null,
        unit_tests_time_taken: null as number | null,
      };
      const modelOut = outputText(body.response);
      if (!modelOut || !pyStrip(modelOut)) return base;
      // As upstream: the tests are read (and a missing or malformed entry is a 500) before the code.
      if (body.verifier_metadata === null) throw pyError('TypeError', "'NoneType' object is not subscriptable");
      const parsed = UnitTestsSchema.safeParse(body.verifier_metadata.unit_tests);
      if (!parsed.success) throw pyError('ValidationError', `1 validation error for UnitTests: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
      const tests: UnitTests = parsed.data;
      const code = extractCode(modelOut);
      if (!code) return { ...base, extracted_model_output: modelOut };
      const outcome = await ctx.state.grader.grade(code, tests);
      return {
        ...base,
        // 1 == True in Python: only `true` entries (or 1) pass; an empty result passes.
        reward: outcome.result.every((r) => r === true || r === 1) ? 1.0 : 0.0,
        extracted_model_output: modelOut,
        extracted_model_code: code,
        result: outcome.result,
        metadata: outcome.metadata,
        unit_tests_time_taken: outcome.seconds,
      };
    },
  },
});

startIfMain(import.meta.url, server);
