/**
 * Scoring: reward 1.0 when every ground-truth value appears (exact float equality) among the
 * `solution` values of the rollout's tool outputs, else 0.0.
 */
import { pyEq, pyFloat } from '@nemo-gym/core/py';

/** `float(json.loads(output)["solution"])`, or null when any step fails (as upstream's try/except). */
export function solutionOf(output: string): number | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(output);
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
  if (!Object.prototype.hasOwnProperty.call(parsed, 'solution')) return null;
  return pyFloat((parsed as Record<string, unknown>).solution);
}

export interface OutputItem {
  type?: unknown;
  output?: unknown;
}

export function predictedSolutions(output: readonly OutputItem[]): (number | null)[] {
  const predicted: (number | null)[] = [];
  for (const item of output) {
    if (item.type !== 'function_call_output') continue;
    predicted.push(typeof item.output === 'string' ? solutionOf(item.output) : null);
  }
  return predicted;
}

export function computeReward(groundTruth: readonly unknown[], output: readonly OutputItem[]): number {
  const predicted = predictedSolutions(output);
  // Python `gt in predicted`: CPython's list membership is `is` or `==`; NaN is never the same object here
  for (const gt of groundTruth) if (!predicted.some((p) => pyEq(p, gt))) return 0.0;
  return 1.0;
}

/**
 * The ground truth as upstream reads it: `json.loads(body.ground_truth)`. Returns the list or an
 * error message. A list given directly (the field's type allows it) is used as is.
 */
export function parseGroundTruth(value: string | readonly unknown[]): unknown[] | string {
  if (Array.isArray(value)) return [...value];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value as string);
  } catch (err) {
    return `ground_truth must be a JSON-encoded list of numbers such as "[5.2, -3.0]"; could not parse ${JSON.stringify(value)}: ${(err as Error).message}`;
  }
  if (!Array.isArray(parsed)) {
    return `ground_truth must be a JSON-encoded list of numbers such as "[5.2, -3.0]"; got ${JSON.stringify(value)}, which is not a list`;
  }
  return parsed;
}
