/**
 * multineedle scoring: the list submitted by the model's last `extract_synonym_values` call,
 * compared in order with the expected synonym values, with Python equality semantics
 * (`1 == 1.0 == True`, `"1" != 1`).
 */
import { pyEq, toLaxInt } from '@nemo-gym/core/py';

/** `sum(map(ord, s))`: code points, not UTF-16 units. */
export function synonymValue(s: string): number {
  let total = 0;
  for (const ch of s) total += ch.codePointAt(0)!;
  return total;
}

export interface ScoreFields {
  reward: number;
  parsed_synonym_values: number[];
  accuracy: boolean;
  set_overlap: number;
  original_term_minefield_hit: boolean;
  order_instruction_following_failure: boolean;
}

interface FunctionCallLike {
  type?: unknown;
  name?: unknown;
  arguments?: unknown;
}

/**
 * The `synonym_values` of the last `extract_synonym_values` call; `[]` when there is none; `null`
 * when that call cannot be read (arguments not JSON, no `synonym_values`, not a list of integers).
 */
export function lastExtraction(output: readonly unknown[]): unknown[] | null {
  for (let i = output.length - 1; i >= 0; i--) {
    const item = output[i] as FunctionCallLike | null;
    if (!item || typeof item !== 'object') continue;
    if (item.type !== 'function_call' || item.name !== 'extract_synonym_values') continue;
    if (typeof item.arguments !== 'string') return null;
    let args: unknown;
    try {
      args = JSON.parse(item.arguments);
    } catch {
      return null;
    }
    if (!args || typeof args !== 'object' || Array.isArray(args)) return null;
    const values = (args as Record<string, unknown>).synonym_values;
    if (!Array.isArray(values)) return null;
    // upstream validates the echoed list as list[int]; anything else fails there
    if (values.some((v) => toLaxInt(v) === null)) return null;
    return values;
  }
  return [];
}

export function score(
  output: readonly unknown[],
  expected: readonly number[],
  minefieldLabel: string,
  minefieldLabelValue: number,
): ScoreFields {
  const actual = lastExtraction(output);
  if (actual === null) {
    // Upstream raises (HTTP 500) on an unreadable call; the submission is scored as a miss instead.
    return {
      reward: 0.0,
      parsed_synonym_values: [],
      accuracy: false,
      set_overlap: 0.0,
      original_term_minefield_hit: false,
      order_instruction_following_failure: false,
    };
  }
  const accuracy = actual.length === expected.length && expected.every((e, i) => pyEq(e, actual[i]));
  const distinctExpected = [...new Set(expected)];
  const common = distinctExpected.filter((e) => actual.some((v) => pyEq(e, v))).length;
  const setOverlap = common / expected.length;
  return {
    reward: accuracy ? 1.0 : 0.0,
    parsed_synonym_values: actual.map((v) => toLaxInt(v)!),
    accuracy,
    set_overlap: setOverlap,
    original_term_minefield_hit: actual.some((v) => pyEq(minefieldLabel, v)) || actual.some((v) => pyEq(minefieldLabelValue, v)),
    order_instruction_following_failure: !accuracy && setOverlap === 1.0,
  };
}
