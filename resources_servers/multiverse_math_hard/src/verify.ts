/**
 * Scoring: reward 1.0 when every ground-truth value appears (exact float equality) among the
 * `solution` values of the rollout's tool outputs, else 0.0.
 */
import { pyStrip } from '@nemo-gym/core/py';

const DIGITS = '\\d(?:_?\\d)*';
const PY_FLOAT_RE = new RegExp(`^[+-]?(?:(?:${DIGITS})?\\.${DIGITS}|${DIGITS}\\.?)(?:[eE][+-]?${DIGITS})?$`);
const PY_SPECIAL_RE = /^([+-]?)(inf|infinity|nan)$/i;

/** Python `float(s)` for a str; undefined where Python raises ValueError. */
export function pyFloatFromString(s: string): number | undefined {
  const t = pyStrip(s);
  const special = PY_SPECIAL_RE.exec(t);
  if (special) {
    if (special[2]!.toLowerCase() === 'nan') return NaN;
    return special[1] === '-' ? -Infinity : Infinity;
  }
  if (!/^[\x00-\x7f]*$/.test(t) || !PY_FLOAT_RE.test(t)) return undefined;
  return Number(t.replace(/_/g, ''));
}

/** Python `float(v)` for a value decoded from JSON; undefined where Python raises. */
export function pyFloat(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') return pyFloatFromString(v);
  return undefined;
}

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
  const f = pyFloat((parsed as Record<string, unknown>).solution);
  return f === undefined ? null : f;
}

/** Python `gt in predicted` where gt came from json.loads and predicted holds floats and None. */
function pyContains(predicted: (number | null)[], gt: unknown): boolean {
  if (gt === null) return predicted.includes(null);
  if (typeof gt === 'number' || typeof gt === 'boolean') {
    const g = Number(gt);
    return predicted.some((p) => p !== null && p === g);
  }
  return false; // strings, lists and objects never equal a float or None
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
  for (const gt of groundTruth) if (!pyContains(predicted, gt)) return 0.0;
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
