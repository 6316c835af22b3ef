/**
 * The reward: replay the model's function calls and the ground truth's in two fresh environments
 * and compare the five tables the tools can change (upstream's `is_correct`).
 */
import type { WorkbenchData } from './data.js';
import { PyException, type Value } from './py.js';
import { tablesEqualForReward } from './table.js';
import { callTool, Environment } from './tools.js';

/** Python `json.loads` for the call arguments (NaN / Infinity literals included). */
function jsonLoads(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    if (!/\b(NaN|Infinity)\b/.test(text)) throw e;
    return JSON.parse(text.replace(/("(?:[^"\\]|\\.)*")|-?\bInfinity\b|\bNaN\b/g, (m, s: string | undefined) => (s ? s : 'null')));
  }
}

/**
 * One action: `functions[a["name"]](**json.loads(a["arguments"]))`. Anything that would raise in
 * Python (a string instead of a dict, a missing key, arguments that are not a JSON object, an
 * unknown tool, a bad keyword) throws here and the caller skips the action.
 */
function runAction(env: Environment, action: unknown): void {
  if (action === null || typeof action !== 'object' || Array.isArray(action)) {
    throw new PyException('TypeError', 'action is not a dict');
  }
  const a = action as Record<string, unknown>;
  if (!Object.hasOwn(a, 'name')) throw new PyException('KeyError', "'name'");
  if (!Object.hasOwn(a, 'arguments')) throw new PyException('KeyError', "'arguments'");
  const name = a.name;
  const raw = a.arguments;
  if (typeof raw !== 'string') throw new PyException('TypeError', 'the JSON object must be str, bytes or bytearray');
  const args = jsonLoads(raw);
  if (typeof name !== 'string') throw new PyException('KeyError', String(name));
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    // the lookup happens first in Python, so an unknown name is the error either way
    throw new PyException('TypeError', 'argument after ** must be a mapping');
  }
  // json.loads keeps None values: they are passed on (unlike the tool route, which drops them)
  callTool(env, name, Object.entries(args as Record<string, Value>));
}

/** A fresh environment with `actions` applied in order; an action that raises is skipped. */
export function replay(data: WorkbenchData, actions: unknown): Environment {
  const env = new Environment(data);
  // A string ground truth iterates its characters, and every one of them fails.
  if (!Array.isArray(actions)) return env;
  for (const action of actions) {
    try {
      runAction(env, action);
    } catch (e) {
      if (!(e instanceof PyException) && !(e instanceof SyntaxError)) throw e;
    }
  }
  return env;
}

export function sameState(a: Environment, b: Environment): boolean {
  return (
    tablesEqualForReward(a.calendar, b.calendar) &&
    tablesEqualForReward(a.emails, b.emails) &&
    tablesEqualForReward(a.plots, b.plots) &&
    tablesEqualForReward(a.projectTasks, b.projectTasks) &&
    tablesEqualForReward(a.crm, b.crm)
  );
}

/** The `function_call` items of a response output, as `{name, arguments}`. */
export function predictedCalls(output: readonly unknown[]): unknown[] {
  const calls: unknown[] = [];
  for (const item of output) {
    if (item !== null && typeof item === 'object' && (item as { type?: unknown }).type === 'function_call') calls.push(item);
  }
  return calls;
}

/**
 * 1.0 when replaying the model's calls leaves the same five tables as the ground truth.
 * `output` is the response output, or (`alreadyCalls`) only its function calls.
 */
export function reward(data: WorkbenchData, output: readonly unknown[], groundTruth: unknown, alreadyCalls = false): number {
  const predicted = replay(data, alreadyCalls ? output : predictedCalls(output));
  const expected = replay(data, groundTruth);
  return sameState(predicted, expected) ? 1.0 : 0.0;
}
