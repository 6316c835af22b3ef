/**
 * math_with_judge (upstream: library_judge_math): scores a math answer with the math-verify
 * library check and, when that says "wrong", optionally with an LLM judge asked twice with the
 * two answers in both orders.
 */
import { z } from 'zod';
import { type ServerClient } from '@nemo-gym/core/client';
import { ModelServerRefSchema } from '@nemo-gym/core/config';
import { ResponseCreateParamsSchema, askJudgeForVerdict, noVerdict, outputText } from '@nemo-gym/core/openai';
import { BaseVerifyRequestSchema, ResourcesServerConfigSchema, defineResourcesServer, startIfMain } from '@nemo-gym/core/server';
import { MathVerifier } from '@nemo-gym/math-verify';
import { EQUAL_LABEL, JUDGE_SYSTEM_MESSAGE, NOT_EQUAL_LABEL, judgePrompt, verdictOfResponse, verdictText } from './src/judge.js';

export const MathWithJudgeConfigSchema = ResourcesServerConfigSchema.extend({
  judge_model_server: ModelServerRefSchema.optional(),
  judge_responses_create_params: ResponseCreateParamsSchema.default({ input: [] }),
  should_use_judge: z.boolean().default(true),
  /** Hard limit for one library check (upstream at HEAD: 10 s). */
  library_verifier_timeout_seconds: z.number().positive().default(10),
  /** Checker processes running library checks; 0 runs them on the event loop. */
  library_verifier_workers: z.number().int().min(0).default(2),
  /**
   * A judge answer with neither [[A=B]] nor [[A!=B]] scores 0 (upstream 818984b8e) instead of being
   * recorded as a judge failure (NG_ERR_JUDGE_FAILED).
   */
  unparseable_verdict_is_wrong: z.boolean().default(false),
}).superRefine((cfg, ctx) => {
  if (cfg.should_use_judge && !cfg.judge_model_server) {
    ctx.addIssue({
      code: 'custom',
      path: ['judge_model_server'],
      message: 'judge_model_server ({type: responses_api_models, name}) is required when should_use_judge is true; set should_use_judge: false to score with the library check only',
    });
  }
});
export type MathWithJudgeConfig = z.output<typeof MathWithJudgeConfigSchema>;

export const MathWithJudgeVerifyRequestSchema = BaseVerifyRequestSchema.extend({
  question: z.string(),
  expected_answer: z.string(),
});

export interface JudgeEvaluation {
  responses_create_params: unknown;
  response: unknown;
}

interface State {
  verifier: MathVerifier;
}

type Ctx = { config: MathWithJudgeConfig; state: State; client: ServerClient; signal?: AbortSignal };

async function judgeOnce(ctx: Ctx, question: string, first: string, second: string): Promise<[boolean, JudgeEvaluation]> {
  // pydantic fills these defaults on upstream's request model; they are part of the recorded request
  const params = ResponseCreateParamsSchema.parse({
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    ...structuredClone(ctx.config.judge_responses_create_params),
    input: [
      { role: 'system', content: JUDGE_SYSTEM_MESSAGE, type: 'message' },
      { role: 'user', content: judgePrompt(question, first, second), type: 'message' },
    ],
  });
  const name = ctx.config.judge_model_server!.name;
  const response = await askJudgeForVerdict(ctx.client, name, params, ctx.signal);
  const verdict = verdictOfResponse(response);
  if (verdict === null && !ctx.config.unparseable_verdict_is_wrong) throw noVerdict(name, [EQUAL_LABEL, NOT_EQUAL_LABEL], verdictText(response) ?? outputText(response));
  return [verdict === true, { responses_create_params: params, response }];
}

/** Both-order judge check: A = (expected, generated), then B = (generated, expected) only if A says equal. */
export async function verifyWithJudge(ctx: Ctx, question: string, expected: string, generated: string): Promise<[number, JudgeEvaluation[]]> {
  const [firstEqual, firstEval] = await judgeOnce(ctx, question, expected, generated);
  if (!firstEqual) return [0.0, [firstEval]];
  const [secondEqual, secondEval] = await judgeOnce(ctx, question, generated, expected);
  return [secondEqual ? 1.0 : 0.0, [firstEval, secondEval]];
}

export const server = defineResourcesServer({
  className: 'LibraryJudgeMathResourcesServer',
  configSchema: MathWithJudgeConfigSchema,
  setup: (ctx): State => ({
    verifier: new MathVerifier({ size: ctx.config.library_verifier_workers, timeoutMs: ctx.config.library_verifier_timeout_seconds * 1000 }),
  }),
  close: async (ctx) => {
    await ctx.state.verifier.close();
  },
  verify: {
    body: MathWithJudgeVerifyRequestSchema,
    handler: async (body, ctx) => {
      const generated = outputText(body.response);
      const lib = await ctx.state.verifier.check(body.expected_answer, generated);
      let reward = lib.reward;
      let judgeEvaluations: JudgeEvaluation[] | null = null;
      if (ctx.config.should_use_judge && ctx.config.judge_model_server && lib.reward <= 0.5) {
        [reward, judgeEvaluations] = await verifyWithJudge(ctx, body.question, body.expected_answer, generated);
      }
      return {
        responses_create_params: body.responses_create_params,
        response: body.response,
        reward,
        expected_answer: body.expected_answer,
        extracted_answer: lib.extracted,
        library_reward: lib.reward,
        judge_evaluations: judgeEvaluations,
      };
    },
  },
});

startIfMain(import.meta.url, server);
