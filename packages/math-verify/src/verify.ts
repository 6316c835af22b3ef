// verify() and math_metric() with math-verify 0.8.0 semantics, plus the library check the
// math_with_judge server runs (gold wrapped in \boxed{}, Expr+LaTeX targets for the prediction).

import { type Node, printExpr } from './nodes.js';
import { exprEq } from './compare.js';
import { parse, type Extracted, type Target } from './extract.js';
import './numeric.js';

export interface VerifyOptions {
  floatRounding?: number;
  numericPrecision?: number;
  /** Budget for each single comparison in ms (math-verify: 5 s). */
  timeoutMs?: number;
}

function compareOne(gold: Extracted, target: Extracted, o: Required<VerifyOptions>): boolean {
  try {
    if (typeof gold !== 'string' && typeof target !== 'string') {
      return exprEq(gold, target, { floatRounding: o.floatRounding, numericPrecision: o.numericPrecision, deadline: Date.now() + o.timeoutMs });
    }
    if (typeof gold === 'string' && typeof target === 'string') {
      const g = gold.trim();
      const t = target.trim();
      return g.length > 0 && t.length > 0 && g === t;
    }
    return false;
  } catch {
    return false;
  }
}

export function verify(gold: Extracted | Extracted[], target: Extracted | Extracted[], opts: VerifyOptions = {}): boolean {
  const o: Required<VerifyOptions> = { floatRounding: opts.floatRounding ?? 6, numericPrecision: opts.numericPrecision ?? 15, timeoutMs: opts.timeoutMs ?? 5000 };
  const golds = Array.isArray(gold) ? gold : [gold];
  const targets = Array.isArray(target) ? target : [target];
  for (const g of golds) for (const t of targets) if (compareOne(g, t, o)) return true;
  return false;
}

export function toStr(x: Extracted): string {
  return typeof x === 'string' ? x : printExpr(x as Node);
}

export interface MetricResult {
  score: number;
  golds: string[] | null;
  preds: string[] | null;
}

export class NoGoldError extends Error {}

/** math_metric(gold_targets, pred_targets, precision)([gold], [pred]) for one gold and one prediction. */
export function mathMetric(gold: string, pred: string, goldTargets: Target[] = ['latex'], predTargets: Target[] = ['expr', 'latex'], precision = 6): MetricResult {
  const parseBudget = 5000;
  let preds: Extracted[];
  let golds: Extracted[];
  try {
    preds = parse(pred, predTargets, Date.now() + parseBudget);
  } catch {
    preds = [];
  }
  try {
    golds = parse(gold, goldTargets, Date.now() + parseBudget);
  } catch {
    golds = [];
  }
  if (golds.length === 0) throw new NoGoldError(`No gold targets found for at least one gold. Gold: ${gold}`);
  let strs: [string[], string[]] | null;
  try {
    strs = [golds.map(toStr), preds.map(toStr)];
  } catch {
    strs = null;
  }
  const score = verify(golds, preds, { floatRounding: precision }) ? 1.0 : 0.0;
  return { score, golds: strs ? strs[0] : null, preds: strs ? strs[1] : null };
}

export interface LibraryResult {
  reward: number;
  extracted: string | null;
}

/** math_with_judge's library check: (reward, extracted answer) as upstream computes them. */
export function verifyAnswerWithLibrary(expectedAnswer: string, generatedAnswer: string): LibraryResult {
  try {
    const r = mathMetric('\\boxed{' + expectedAnswer + '}', generatedAnswer);
    if (r.golds === null || r.preds === null) return { reward: r.score, extracted: null };
    let extracted: string | undefined;
    for (const p of r.preds) {
      const t = p.trim();
      if (t && r.golds.some((g) => g.trim() === t)) {
        extracted = p;
        break;
      }
    }
    if (extracted === undefined) {
      if (r.preds.length === 0) return { reward: 0.0, extracted: null };
      extracted = r.preds[0]!;
    }
    return { reward: r.score, extracted };
  } catch {
    return { reward: 0.0, extracted: null };
  }
}
