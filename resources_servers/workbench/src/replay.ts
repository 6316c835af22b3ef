/**
 * The reward: replay the model's function calls and the ground truth's in two fresh environments
 * and compare the five tables the tools can change (upstream's `is_correct`).
 */
import { PyJsonDecodeError, pyJsonLoads, type PyValue } from '@nemo-gym/core/py';
import type { WorkbenchData } from './data.js';
import { PyException, PyFloat, type Value } from './py.js';
import { tablesEqualForReward } from './table.js';
import { callTool, Environment } from './tools.js';

/** A value of Python's `json.loads` in this port's representation (a float stays a float: `60.0`). */
function fromPy(v: PyValue): Value {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number') return Number.isInteger(v) ? new PyFloat(v) : v;
  if (Array.isArray(v)) return v.map(fromPy);
  if (v instanceof Map) {
    const out: Record<string, Value> = {};
    for (const [k, x] of v) Object.defineProperty(out, k, { value: fromPy(x), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return v;
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
  const args = pyJsonLoads(raw);
  if (typeof name !== 'string') throw new PyException('KeyError', String(name));
  if (!(args instanceof Map)) {
    // the lookup happens first in Python, so an unknown name is the error either way
    throw new PyException('TypeError', 'argument after ** must be a mapping');
  }
  // json.loads keeps None values: they are passed on (unlike the tool route, which drops them)
  callTool(
    env,
    name,
    [...args].map(([k, v]) => [k, fromPy(v)]),
  );
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
      if (!(e instanceof PyException) && !(e instanceof PyJsonDecodeError)) throw e;
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
