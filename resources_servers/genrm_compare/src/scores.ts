/** GenRM pairwise comparison: the pairs to compare, the judge's verdict, and the per-response rewards (after upstream's utils.py). */
import { lastJsonObject } from '@nemo-gym/core/openai';

export const COMPARISON_STRATEGIES = ['circular', 'all_pairs'] as const;
export type ComparisonStrategy = (typeof COMPARISON_STRATEGIES)[number];
/** Rankings run 1..6: below the midpoint response 1 is better, above it response 2. */
export const RANKING_MIDPOINT = 3.5;

/** Pairs (i, j) of response indices: each with the next (circular, n pairs) or every pair once (all_pairs). */
export function comparisonPairs(strategy: ComparisonStrategy, n: number): [number, number][] {
  if (n < 2) return [];
  const pairs: [number, number][] = [];
  if (strategy === 'all_pairs') {
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) pairs.push([i, j]);
  } else {
    // With two responses: both orders, as upstream compares them.
    for (let i = 0; i < n; i++) pairs.push([i, (i + 1) % n]);
  }
  return pairs;
}

export interface Verdict {
  score_1: number;
  score_2: number;
  ranking: number;
}

/** The judge's verdict: the last JSON object with score_1, score_2 or ranking (an `overall` object inside counts); missing fields take the defaults. */
export function parseVerdict(text: string, defaultScore: number, defaultRanking: number): Verdict | null {
  return lastJsonObject(text, (obj) => {
    const o = obj.overall && typeof obj.overall === 'object' && !Array.isArray(obj.overall) ? (obj.overall as Record<string, unknown>) : obj;
    if (!('score_1' in o) && !('score_2' in o) && !('ranking' in o)) return null;
    const num = (v: unknown, dflt: number) => (v === undefined ? dflt : typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN);
    const v = { score_1: num(o.score_1, defaultScore), score_2: num(o.score_2, defaultScore), ranking: num(o.ranking, defaultRanking) };
    return Number.isFinite(v.score_1) && Number.isFinite(v.score_2) && Number.isFinite(v.ranking) ? v : null;
  });
}

/** Reasoning text and final answer of a Response (reasoning summaries; output_text of messages). */
export function reasoningAndAnswer(response: unknown): { reasoning: string; answer: string } {
  let reasoning = '';
  let answer = '';
  const output = response && typeof response === 'object' ? (response as { output?: unknown }).output : undefined;
  for (const item of Array.isArray(output) ? (output as Record<string, unknown>[]) : []) {
    if (!item || typeof item !== 'object') continue;
    const parts = item.type === 'reasoning' ? item.summary : item.type === 'message' ? item.content : null;
    for (const p of Array.isArray(parts) ? (parts as Record<string, unknown>[]) : []) {
      if (!p || typeof p.text !== 'string') continue;
      if (item.type === 'reasoning') reasoning += p.text;
      else if (p.type === 'output_text') answer += p.text;
    }
  }
  return { reasoning, answer };
}

/** The final answer the judge compares ("None" when empty, as upstream sends it). */
export const answerText = (response: unknown) => reasoningAndAnswer(response).answer.trim() || 'None';

export interface AggregateOptions {
  defaultScore: number;
  reasoningBonus: number;
  answerBonus: number;
  topPercentile: number;
  reasoningLengthCoeff: number;
  answerLengthCoeff: number;
}

/** Zero-centred weights, shorter = larger (all equal lengths: all 0). */
function lengthWeights(lengths: number[]): number[] {
  const max = Math.max(...lengths);
  const min = Math.min(...lengths);
  if (max === min) return lengths.map(() => 0);
  const raw = lengths.map((l) => 1 - (l - min) / (max - min));
  const mean = raw.reduce((a, b) => a + b, 0) / raw.length;
  return raw.map((w) => w - mean);
}

/**
 * Per-response rewards from the pairwise verdicts (upstream's `simple_tiebreaker`): a tie in
 * scores is broken by the ranking's distance from the midpoint, each response gets the mean of its
 * scores, then the length bonuses and group-relative length adjustments.
 */
export function aggregate(verdicts: { i: number; j: number; verdict: Verdict }[], responses: unknown[], o: AggregateOptions): { rewards: number[]; metrics: Record<string, number> } {
  const n = responses.length;
  const sums = new Array<number>(n).fill(0);
  const counts = new Array<number>(n).fill(0);
  const individual: number[] = [];
  let ties = 0;
  for (const { i, j, verdict } of verdicts) {
    let s1 = verdict.score_1;
    let s2 = verdict.score_2;
    individual.push(s1, s2);
    if (s1 === s2) {
      ties++;
      const shift = RANKING_MIDPOINT - verdict.ranking;
      s1 += shift;
      s2 -= shift;
    }
    sums[i]! += s1;
    sums[j]! += s2;
    counts[i]!++;
    counts[j]!++;
  }
  const scores = sums.map((s, k) => (counts[k]! > 0 ? s / counts[k]! : o.defaultScore));
  if (n >= 2 && (o.reasoningBonus > 0 || o.answerBonus > 0 || o.reasoningLengthCoeff > 0 || o.answerLengthCoeff > 0)) {
    const parts = responses.map(reasoningAndAnswer);
    const rLen = parts.map((p) => p.reasoning.trim().length);
    const aLen = parts.map((p) => p.answer.trim().length);
    const sorted = [...scores].sort((a, b) => b - a);
    const threshold = sorted[Math.max(0, Math.floor(n * o.topPercentile) - 1)]!;
    const bonusShortest = (lengths: number[], bonus: number) => {
      if (bonus <= 0) return;
      let best = -1;
      for (let k = 0; k < n; k++) if (lengths[k]! > 0 && (best < 0 || lengths[k]! < lengths[best]!)) best = k;
      if (best >= 0 && scores[best]! >= threshold) scores[best]! += bonus;
    };
    bonusShortest(rLen, o.reasoningBonus);
    bonusShortest(aLen, o.answerBonus);
    if (o.reasoningLengthCoeff > 0 || o.answerLengthCoeff > 0) {
      const rw = lengthWeights(rLen);
      const aw = lengthWeights(aLen);
      for (let k = 0; k < n; k++) scores[k]! += rw[k]! * o.reasoningLengthCoeff + aw[k]! * o.answerLengthCoeff;
    }
  }
  const metrics: Record<string, number> = {};
  if (individual.length) {
    const mean = individual.reduce((a, b) => a + b, 0) / individual.length;
    metrics.mean_individual_score = mean;
    metrics.std_individual_score = Math.sqrt(individual.reduce((a, b) => a + (b - mean) ** 2, 0) / individual.length);
  }
  if (verdicts.length) metrics.tiebreak_usage_rate = ties / verdicts.length;
  return { rewards: scores, metrics };
}
