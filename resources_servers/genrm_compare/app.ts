/**
 * genrm_compare: pairwise comparison by a generative reward model (GenRM), after upstream's
 * resources_servers/genrm_compare. The rollouts of one task (upstream's "cohort") are compared in
 * pairs, each pair judged `num_judges_per_comparison` times; the verdicts
 * (`{"score_1": 1-5, "score_2": 1-5, "ranking": 1-6}`) become one reward per rollout.
 *
 * - `/verify_group`: the collector's group of one task (docs/group-rewards.md) is the cohort. The
 *   members arrive sorted by member id, so the pairs (and the rewards) do not depend on the order
 *   the rollouts finished in. Upstream buffers cohorts inside `/verify` and waits for
 *   `num_rollouts_per_prompt` of them, which never completes when one rollout fails; here the
 *   collector forms the group, waits at most `group_wait_timeout_s` and scores what finished.
 * - `/verify` (one rollout): `default_score`, as upstream answers without a cohort; it is kept as
 *   `verify_reward` beside the group reward.
 * - `/compare`: upstream's batch API (`conversation_history`, `response_objs`, `principle`).
 * - A GenRM call that fails, or a verdict that cannot be parsed after `genrm_parse_retries` retries,
 *   fails the group (an error answer, NG_ERR_JUDGE_FAILED), where upstream scores the pair with the
 *   default scores; `fallback_to_default_scores: true` keeps upstream's behaviour.
 */
import { z } from 'zod';
import type { ServerClient } from '@nemo-gym/core/client';
import { ModelServerRefSchema } from '@nemo-gym/core/config';
import { ConfigError, describeError } from '@nemo-gym/core/errors';
import { ResponseCreateParamsSchema, askJudgeForVerdict, judgeFailed, outputText } from '@nemo-gym/core/openai';
import { BaseVerifyRequestSchema, ResourcesServerConfigSchema, defineResourcesServer, startIfMain, type VerifyGroupResult } from '@nemo-gym/core/server';
import { COMPARISON_STRATEGIES, aggregate, answerText, comparisonPairs, parseVerdict, type Verdict } from './src/scores.js';

export const DEFAULT_PRINCIPLE =
  'Judge which response better serves the user: it answers what was asked correctly and completely, stays relevant, and is clear and concise; ask for clarification rather than assume when the prompt is ambiguous.';

export const GenRMCompareConfigSchema = ResourcesServerConfigSchema.extend({
  genrm_model_server: ModelServerRefSchema,
  genrm_responses_create_params: ResponseCreateParamsSchema,
  /** Upstream's cohort size for its buffering /verify; accepted for its configs (the collector's group is the cohort here). */
  num_rollouts_per_prompt: z.number().int().default(1),
  comparison_strategy: z.enum(COMPARISON_STRATEGIES).default('circular'),
  num_judges_per_comparison: z.number().int().min(1).default(1),
  use_principle: z.boolean().default(false),
  default_principle: z.string().default(DEFAULT_PRINCIPLE),
  aggregator_method: z.literal('simple_tiebreaker').default('simple_tiebreaker'),
  reasoning_bonus: z.number().default(0),
  answer_bonus: z.number().default(0),
  top_percentile: z.number().default(0.2),
  group_reasoning_length_penalty_coeff: z.number().default(0),
  group_answer_length_penalty_coeff: z.number().default(0),
  group_style_penalty_coeff: z.number().default(0),
  default_score: z.number().default(3.0),
  default_ranking: z.number().default(3.5),
  debug_logging: z.boolean().default(false),
  genrm_parse_retries: z.number().int().min(0).default(3),
  genrm_parse_retry_sleep_s: z.number().min(0).default(0.2),
  /**
   * How the pair reaches the GenRM model: `metadata` (upstream: `metadata.response_1/response_2`,
   * for a GenRM model server that turns them into its chat template's roles) or `inline` (one user
   * message holding both responses and the answer format, for any chat model).
   */
  genrm_prompt_format: z.enum(['metadata', 'inline']).default('metadata'),
  /** Upstream's behaviour: a failed GenRM call or an unparseable verdict scores the pair with the defaults. */
  fallback_to_default_scores: z.boolean().default(false),
});
export type GenRMCompareConfig = z.output<typeof GenRMCompareConfigSchema>;

type Ctx = { config: GenRMCompareConfig; client: ServerClient; signal?: AbortSignal; log: { info(msg: string): void; warn(msg: string): void } };
type Message = { role: string; content: string };

/** The conversation before the responses, as `{role, content}` (text parts joined), as upstream builds it. */
export function conversationHistory(input: unknown): Message[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const out: Message[] = [];
  for (const m of Array.isArray(input) ? (input as Record<string, unknown>[]) : []) {
    if (!m || typeof m !== 'object') continue;
    const c = m.content;
    const content = typeof c === 'string' ? c : Array.isArray(c) ? (c as Record<string, unknown>[]).map((p) => (p && typeof p.text === 'string' ? p.text : '')).join('') : '';
    out.push({ role: typeof m.role === 'string' ? m.role : 'user', content });
  }
  return out;
}

export const INLINE_FORMAT =
  'Compare the two responses to the conversation above. Rate each from 1 (unhelpful) to 5 (very helpful) and rank them from 1 (response 1 much better) to 6 (response 2 much better). Answer with JSON only: {"score_1": <1-5>, "score_2": <1-5>, "ranking": <1-6>}.';

/** The GenRM request for one pair. */
export function pairRequest(cfg: GenRMCompareConfig, history: Message[], r1: string, r2: string, principle: string | null): Record<string, unknown> {
  const input: Record<string, unknown>[] = history.map((m) => ({ role: m.role, content: m.content, type: 'message' }));
  const base = structuredClone(cfg.genrm_responses_create_params) as Record<string, unknown>;
  if (cfg.genrm_prompt_format === 'inline') {
    const lines = [...(principle ? [`Principle: ${principle}`, ''] : []), '<response_1>', r1, '</response_1>', '<response_2>', r2, '</response_2>', '', INLINE_FORMAT];
    input.push({ role: 'user', content: lines.join('\n'), type: 'message' });
    return ResponseCreateParamsSchema.parse({ ...base, input });
  }
  const metadata: Record<string, string> = { response_1: r1, response_2: r2 };
  if (principle) metadata.principle = principle;
  return ResponseCreateParamsSchema.parse({ ...base, input, metadata });
}

const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((r) => (ms > 0 && !signal?.aborted ? setTimeout(r, ms) : r()));

/** One judged pair: the verdict, retried on an unparseable answer. */
async function judgePair(ctx: Ctx, history: Message[], r1: string, r2: string, principle: string | null, pair: [number, number]): Promise<Verdict> {
  const cfg = ctx.config;
  const params = pairRequest(cfg, history, r1, r2, principle);
  const attempts = cfg.genrm_parse_retries + 1;
  let last = '';
  try {
    for (let a = 1; a <= attempts; a++) {
      const answer = await askJudgeForVerdict(ctx.client, cfg.genrm_model_server.name, params, ctx.signal);
      last = outputText(answer);
      const v = parseVerdict(last, cfg.default_score, cfg.default_ranking);
      if (v) return v;
      if (a < attempts) await sleep(cfg.genrm_parse_retry_sleep_s * 1000, ctx.signal);
    }
  } catch (err) {
    if (!cfg.fallback_to_default_scores) throw err;
    ctx.log.warn(`genrm_compare: pair ${pair.join(',')}: ${describeError(err)}; scored with the defaults (fallback_to_default_scores)`);
    return { score_1: cfg.default_score, score_2: cfg.default_score, ranking: cfg.default_ranking };
  }
  if (cfg.fallback_to_default_scores) return { score_1: cfg.default_score, score_2: cfg.default_score, ranking: cfg.default_ranking };
  throw judgeFailed(
    `GenRM model server \`${cfg.genrm_model_server.name}\` gave no parseable verdict for pair ${pair.join(',')} in ${attempts} attempt(s) (last answer: ${JSON.stringify(last.slice(-300))}); no reward is given`,
  );
}

export interface Comparison {
  response_i: number;
  response_j: number;
  judge_idx: number;
  score_1: number;
  score_2: number;
  ranking: number;
}

/** Rewards of `responses` (same order), with every comparison made and the aggregation metrics. */
export async function compareResponses(ctx: Ctx, history: Message[], responses: unknown[], principle: string | null): Promise<{ rewards: number[]; comparison_results: Comparison[]; metrics: Record<string, number> }> {
  const cfg = ctx.config;
  if (responses.length < 2) return { rewards: responses.map(() => cfg.default_score), comparison_results: [], metrics: {} };
  const used = cfg.use_principle ? principle || cfg.default_principle : null;
  const texts = responses.map(answerText);
  const jobs: { i: number; j: number; judge: number }[] = [];
  for (let judge = 0; judge < cfg.num_judges_per_comparison; judge++) for (const [i, j] of comparisonPairs(cfg.comparison_strategy, responses.length)) jobs.push({ i, j, judge });
  const verdicts = await Promise.all(jobs.map((p) => judgePair(ctx, history, texts[p.i]!, texts[p.j]!, used, [p.i, p.j])));
  const { rewards, metrics } = aggregate(
    jobs.map((p, k) => ({ i: p.i, j: p.j, verdict: verdicts[k]! })),
    responses,
    {
      defaultScore: cfg.default_score,
      reasoningBonus: cfg.reasoning_bonus,
      answerBonus: cfg.answer_bonus,
      topPercentile: cfg.top_percentile,
      reasoningLengthCoeff: cfg.group_reasoning_length_penalty_coeff,
      answerLengthCoeff: cfg.group_answer_length_penalty_coeff,
    },
  );
  if (cfg.debug_logging) ctx.log.info(`genrm_compare: rewards ${rewards.map((r) => r.toFixed(4)).join(', ')}`);
  return { rewards, comparison_results: jobs.map((p, k) => ({ response_i: p.i, response_j: p.j, judge_idx: p.judge, ...verdicts[k]! })), metrics };
}

export const CompareRequestSchema = z.object({
  conversation_history: z.array(z.object({ role: z.string(), content: z.string() })),
  response_objs: z.array(z.record(z.string(), z.unknown())),
  principle: z.string().nullable().optional(),
});

export const server = defineResourcesServer({
  className: 'GenRMCompareResourcesServer',
  configSchema: GenRMCompareConfigSchema,
  setup: (ctx) => {
    if (ctx.config.group_style_penalty_coeff !== 0) {
      throw new ConfigError(`genrm_compare instance \`${ctx.config.name}\`: group_style_penalty_coeff is not supported here (the style-density penalty is not ported); set it to 0`);
    }
  },
  verify: {
    body: BaseVerifyRequestSchema.loose(),
    handler: (body, ctx) => ({ ...body, reward: ctx.config.default_score }),
  },
  tools: {
    compare: {
      body: CompareRequestSchema,
      handler: (body, ctx) => compareResponses(ctx, body.conversation_history, body.response_objs, body.principle ?? null),
    },
  },
  verifyGroup: async (group, ctx): Promise<VerifyGroupResult> => {
    const first = group.members[0]!;
    const principle = typeof first.principle === 'string' ? first.principle : null;
    const out = await compareResponses(ctx, conversationHistory(first.responses_create_params.input), group.members.map((m) => m.response), principle);
    return {
      members: group.members.map((m, k) => ({ member_id: m.member_id, reward: out.rewards[k]! })),
      comparison_results: out.comparison_results.map((c) => ({ ...c, member_i: group.members[c.response_i]!.member_id, member_j: group.members[c.response_j]!.member_id })),
      metrics: out.metrics,
    };
  },
});

startIfMain(import.meta.url, server);
