/**
 * group_judge: a RULER-style group reward (after OpenPipe ART's RULER). An LLM judge reads the N
 * rollouts of one task side by side against the task's own instructions (no gold answer, no
 * labels) and gives each a score in [0, 1]; relative quality within the group is what GRPO needs.
 *
 * - `/verify_group` (the collector sends the members of a group together, docs/group-rewards.md):
 *   one judge call for the whole group. The trajectories are shown in an order shuffled by a hash
 *   of their member ids (so position bias is not tied to the repeat index) and the scores are
 *   mapped back by id, so the order members arrive in never changes a reward.
 * - `/verify` (one rollout): the same rubric with the rollout alone, an absolute score; it is what
 *   the agent's own verify call gets and is kept beside the group reward as `verify_reward`.
 * - A judge that fails (HTTP error, timeout) or answers without a usable score for every trajectory
 *   after `judge_parse_attempts` tries is an error answer (NG_ERR_JUDGE_FAILED), never a score.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ServerClient } from '@nemo-gym/core/client';
import { ModelServerRefSchema } from '@nemo-gym/core/config';
import { ResponseCreateParamsSchema, askJudgeForVerdict, judgeFailed, lastJsonObject, outputText } from '@nemo-gym/core/openai';
import { BaseVerifyRequestSchema, ResourcesServerConfigSchema, defineResourcesServer, startIfMain, type VerifyGroupMember, type VerifyGroupResult } from '@nemo-gym/core/server';
import { renderTranscript, taskInstructions } from './src/render.js';

export const DEFAULT_RUBRIC = [
  'Every trajectory below was produced for the same task. Judge each one and give it a score between 0 and 1.',
  'Work out what the task asks for from its instructions, and grade by these standards:',
  '- A trajectory that accomplishes the task scores clearly higher than one that does not.',
  '- Between two that accomplish it, the one that gets there more directly (fewer wasted steps, no needless detours) scores higher.',
  '- Partial progress towards the goal may earn partial credit.',
  '- Small differences in quality mean small differences in score; large differences, large ones.',
].join('\n');

export const GroupJudgeConfigSchema = ResourcesServerConfigSchema.extend({
  judge_model_server: ModelServerRefSchema,
  judge_responses_create_params: ResponseCreateParamsSchema,
  /** The grading standards (the system message of the judge call). */
  judge_rubric: z.string().default(DEFAULT_RUBRIC),
  /** Judge calls per group when an answer has no usable score for every trajectory. */
  judge_parse_attempts: z.number().int().min(1).default(2),
  /** Changes the order trajectories are shown in (the same for every arrival order of a group). */
  shuffle_seed: z.union([z.number(), z.string()]).default(0),
  /** Longest transcript of one trajectory shown to the judge, in characters (the end is kept). */
  max_trajectory_chars: z.number().int().positive().default(20_000),
});
export type GroupJudgeConfig = z.output<typeof GroupJudgeConfigSchema>;

/** What the judge is asked to answer. */
export const ANSWER_FORMAT =
  'Answer with a JSON object and nothing after it: {"scores": [{"trajectory_id": "<id>", "explanation": "<one or two sentences>", "score": <number from 0 to 1>}, …]}, one entry per trajectory.';

/** The order trajectories are shown in: by a hash of the seed and each member id (independent of arrival order). */
export function presentationOrder(ids: readonly string[], seed: number | string): string[] {
  const key = (id: string) => createHash('sha256').update(`${String(seed)}\u0000${id}`).digest('hex');
  return [...ids].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    return ka < kb ? -1 : ka > kb ? 1 : a < b ? -1 : 1;
  });
}

export interface TrajectoryScore {
  score: number;
  explanation: string;
}

/** The judge's scores by trajectory label, when the answer has a score in [0, 1] for each label. */
export function parseScores(text: string, labels: readonly string[]): Map<string, TrajectoryScore> | null {
  return lastJsonObject(text, (obj) => {
    const list = obj.scores;
    if (!Array.isArray(list)) return null;
    const out = new Map<string, TrajectoryScore>();
    for (const item of list) {
      if (item === null || typeof item !== 'object') return null;
      const e = item as Record<string, unknown>;
      const id = typeof e.trajectory_id === 'number' ? String(e.trajectory_id) : e.trajectory_id;
      const score = typeof e.score === 'string' ? Number(e.score) : e.score;
      if (typeof id !== 'string' || !labels.includes(id) || out.has(id)) return null;
      if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) return null;
      out.set(id, { score, explanation: typeof e.explanation === 'string' ? e.explanation : '' });
    }
    return out.size === labels.length ? out : null;
  });
}

type Ctx = { config: GroupJudgeConfig; client: ServerClient; signal?: AbortSignal };

interface Trajectory {
  id: string;
  responses_create_params: { input?: unknown };
  response: { output?: unknown };
}

/** The user message of a judge call: the task's instructions, then each trajectory under its label. */
export function judgePrompt(task: string, shown: { label: string; transcript: string }[]): string {
  const parts = [`<task>\n${task}\n</task>`, '', 'Trajectories:'];
  for (const t of shown) parts.push('', `<trajectory id="${t.label}">`, t.transcript, '</trajectory>');
  parts.push('', ANSWER_FORMAT);
  return parts.join('\n');
}

/** Scores of a group of trajectories of one task, by member id. */
export async function judgeTrajectories(trajectories: Trajectory[], ctx: Ctx): Promise<Map<string, TrajectoryScore & { judge_text: string }>> {
  const cfg = ctx.config;
  const byId = new Map(trajectories.map((t) => [t.id, t]));
  const order = presentationOrder([...byId.keys()], cfg.shuffle_seed);
  const shown = order.map((id, i) => ({ label: String(i + 1), id, transcript: renderTranscript(byId.get(id)!.response.output, cfg.max_trajectory_chars) }));
  const task = taskInstructions(trajectories[0]!.responses_create_params.input);
  const params = ResponseCreateParamsSchema.parse({
    ...structuredClone(cfg.judge_responses_create_params),
    input: [
      { role: 'system', content: cfg.judge_rubric, type: 'message' },
      { role: 'user', content: judgePrompt(task, shown), type: 'message' },
    ],
  });
  const labels = shown.map((s) => s.label);
  let last = '';
  for (let attempt = 1; attempt <= cfg.judge_parse_attempts; attempt++) {
    const answer = await askJudgeForVerdict(ctx.client, cfg.judge_model_server.name, params, ctx.signal);
    last = outputText(answer);
    const scores = parseScores(last, labels);
    if (scores) return new Map(shown.map((s) => [s.id, { ...scores.get(s.label)!, judge_text: last }]));
  }
  throw judgeFailed(
    `judge model server \`${cfg.judge_model_server.name}\` answered ${cfg.judge_parse_attempts} time(s) without a score in [0, 1] for each of the ${labels.length} trajectories (last answer: ${JSON.stringify(last.slice(-300))}); no reward is given`,
  );
}

const memberTrajectory = (m: VerifyGroupMember): Trajectory => ({ id: m.member_id, responses_create_params: m.responses_create_params, response: m.response });

export const server = defineResourcesServer({
  className: 'GroupJudgeResourcesServer',
  configSchema: GroupJudgeConfigSchema,
  verify: {
    body: BaseVerifyRequestSchema.loose(),
    handler: async (body, ctx) => {
      const scores = await judgeTrajectories([{ id: 'alone', responses_create_params: body.responses_create_params, response: body.response }], ctx);
      const s = scores.get('alone')!;
      return { ...body, reward: s.score, judge_explanation: s.explanation };
    },
  },
  verifyGroup: async (group, ctx): Promise<VerifyGroupResult> => {
    const scores = await judgeTrajectories(group.members.map(memberTrajectory), ctx);
    return {
      members: group.members.map((m) => {
        const s = scores.get(m.member_id)!;
        return { member_id: m.member_id, reward: s.score, judge_explanation: s.explanation };
      }),
    };
  },
});

startIfMain(import.meta.url, server);
