/**
 * tau2's evaluator (`evaluate_simulation` with `EvaluationType.ALL`, half duplex) over a NeMo Gym
 * trajectory: the environment check (replay the trajectory's write calls from the task's initial
 * state, run the gold actions on another copy, compare the two databases as tau2's hashes do), the
 * action checks, the communicate checks and the NL assertions; the reward is the product of the
 * components in the task's `reward_basis`, and `reward_info` is tau2's RewardInfo.
 */
import { NgError } from '@nemo-gym/core/errors';
import { PyException, pyJsonLoads, pyRepr, pyStrip, toPlain } from '@nemo-gym/core/py';
import { dumpRecords, recordsFromPy, RetailDataError, RetailDb, type RetailRecords } from './db.js';
import type { Action, EvaluationCriteria, InitialState, RewardType } from './task.js';
import { getResponse, mutatesState, TOOLS, useTool } from './tools.js';

/** A setup the server cannot build (bad initial state): answered as a client error. */
export class TaskSetupError extends NgError {
  constructor(message: string) {
    super('NG_ERR_DATA_VALIDATION', message);
  }
}

// ---------------------------------------------------------------------------------------------
// initial state

type Tree = Map<string, unknown>;

/** A JSON value as a tree of Maps (the shape `recordsFromPy` reads). */
function toTree(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toTree);
  if (v instanceof Map) return new Map([...v].map(([k, x]) => [k, toTree(x)]));
  if (v !== null && typeof v === 'object') return new Map(Object.entries(v).map(([k, x]) => [k, toTree(x)]));
  return v;
}

/** addict's `Dict.update`: nested dicts merge, anything else replaces. */
function deepUpdate(target: Tree, update: Tree): void {
  for (const [k, v] of update) {
    const cur = target.get(k);
    if (cur instanceof Map && v instanceof Map) deepUpdate(cur as Tree, v as Tree);
    else target.set(k, v);
  }
}

/**
 * The database a task starts from (tau2's `Environment.set_state` without message history):
 * `initialization_data.agent_data` merged into the loaded database, then `initialization_actions`.
 */
export function initialDb(base: RetailRecords, state: InitialState | null | undefined): RetailDb {
  let db = new RetailDb(base);
  const data = state?.initialization_data;
  if (data?.user_data) throw new TaskSetupError('initial_state.initialization_data.user_data: the retail domain has no user tools (tau2: "User tools not available")');
  if (data?.agent_data) {
    const tree = toTree(dumpRecords(base)) as Tree;
    deepUpdate(tree, toTree(data.agent_data) as Tree);
    try {
      db = new RetailDb(recordsFromPy(tree as never), true);
    } catch (e) {
      if (e instanceof RetailDataError) throw new TaskSetupError(`initial_state.initialization_data.agent_data does not give a valid RetailDB: ${e.message}`);
      throw e;
    }
  }
  for (const [i, action] of (state?.initialization_actions ?? []).entries()) {
    if (action.env_type !== 'assistant') throw new TaskSetupError(`initial_state.initialization_actions.${i}: env_type ${action.env_type}: the retail domain has no user tools`);
    try {
      useTool(db, action.func_name, action.arguments);
    } catch (e) {
      if (e instanceof PyException) throw new TaskSetupError(`initial_state.initialization_actions.${i} (${action.func_name}): ${e.pyType}: ${e.pyMessage}`);
      throw e;
    }
  }
  if (state?.message_history && state.message_history.length > 0) {
    throw new TaskSetupError('initial_state.message_history is not supported by this server (no retail task has one)');
  }
  return db;
}

// ---------------------------------------------------------------------------------------------
// trajectory

export interface ToolCallMsg {
  id: string;
  name: string;
  /** Parsed arguments, or null when the call's arguments are not a JSON object. */
  arguments: Record<string, unknown> | null;
  rawArguments: string;
}

/** tau2's messages, as far as the evaluators read them. */
export type Message =
  | { role: 'assistant'; content: string | null; tool_calls: ToolCallMsg[] }
  | { role: 'user'; content: string | null }
  | { role: 'tool'; id: string; content: string };

function textOf(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const parts = content
    .filter((p): p is { text: string } => p !== null && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string')
    .map((p) => p.text);
  return parts.length > 0 ? parts.join('') : null;
}

function parseArgs(raw: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(raw) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * The Responses items of a rollout (the request's input, then the response's output) as tau2's
 * message list: an assistant or user message item is one message, a run of consecutive function
 * calls is one assistant message with tool calls, each output is a tool message. System and
 * developer messages and reasoning items are not part of tau2's trajectory.
 */
export function toMessages(items: readonly unknown[]): Message[] {
  const out: Message[] = [];
  for (const raw of items) {
    if (raw === null || typeof raw !== 'object') continue;
    const item = raw as Record<string, unknown>;
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    if (type === 'message') {
      if (item.role === 'assistant') out.push({ role: 'assistant', content: textOf(item.content), tool_calls: [] });
      else if (item.role === 'user') out.push({ role: 'user', content: textOf(item.content) });
    } else if (type === 'function_call') {
      const call: ToolCallMsg = { id: String(item.call_id ?? ''), name: String(item.name ?? ''), rawArguments: String(item.arguments ?? ''), arguments: parseArgs(String(item.arguments ?? '')) };
      const last = out.at(-1);
      if (last && last.role === 'assistant' && last.content === null && last.tool_calls.length > 0) last.tool_calls.push(call);
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (type === 'function_call_output') {
      out.push({ role: 'tool', id: String(item.call_id ?? ''), content: typeof item.output === 'string' ? item.output : (textOf(item.output) ?? '') });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// the components

export interface DBCheck {
  db_match: boolean;
  db_reward: number;
}
export interface ActionCheck {
  action: Action;
  action_match: boolean;
  action_reward: number;
  tool_type: 'read' | 'write' | 'generic' | null;
}
export interface CommunicateCheck {
  info: string;
  met: boolean;
  justification: string;
}
export interface NLAssertionCheck {
  nl_assertion: string;
  met: boolean;
  justification: string;
}

export interface RewardInfo {
  reward: number;
  db_check: DBCheck | null;
  env_assertions: unknown[] | null;
  action_checks: ActionCheck[] | null;
  nl_assertions: NLAssertionCheck[] | null;
  communicate_checks: CommunicateCheck[] | null;
  reward_basis: RewardType[] | null;
  reward_breakdown: Partial<Record<RewardType, number>> | null;
  info: Record<string, unknown> | null;
}

interface Partial_ {
  reward: number;
  breakdown: Partial<Record<RewardType, number>> | null;
  info: Record<string, unknown> | null;
}

function jsonOrText(s: string): unknown {
  try {
    return toPlain(pyJsonLoads(s));
  } catch {
    return s;
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'bigint' || typeof b === 'bigint') return Number(a) === Number(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}

export interface ReplayMismatch {
  call_id: string;
  name: string;
  replayed: string;
  recorded: string;
}

/** The trajectory's state-changing calls replayed on `db` (tau2's `set_state(strict=False)`). */
export function replayTrajectory(db: RetailDb, messages: Message[]): { mismatches: ReplayMismatch[]; skipped: string[] } {
  const outputs = new Map<string, string>();
  for (const m of messages) if (m.role === 'tool') outputs.set(m.id, m.content);
  const mismatches: ReplayMismatch[] = [];
  const skipped: string[] = [];
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const call of m.tool_calls) {
      // unknown names made no change live; reads and generic tools change nothing
      if (!TOOLS.has(call.name) || !mutatesState(call.name)) continue;
      if (call.arguments === null) {
        skipped.push(call.id);
        continue;
      }
      const res = getResponse(db, call.name, call.arguments);
      const recorded = outputs.get(call.id);
      if (recorded !== undefined && !sameJson(jsonOrText(res.content), jsonOrText(recorded))) {
        mismatches.push({ call_id: call.id, name: call.name, replayed: res.content, recorded });
      }
    }
  }
  return { mismatches, skipped };
}

/** Runs the gold actions on `db`; tau2 logs and ignores the ones that fail. */
export function runGoldActions(db: RetailDb, actions: readonly Action[]): string[] {
  const failures: string[] = [];
  for (const action of actions) {
    if (action.requestor !== 'assistant') {
      failures.push(`${action.name}: User tools not available`);
      continue;
    }
    try {
      useTool(db, action.name, action.arguments);
    } catch (e) {
      if (!(e instanceof PyException)) throw e;
      failures.push(`${action.name}: ${e.pyMessage}`);
    }
  }
  return failures;
}

function envComponent(base: RetailRecords, criteria: EvaluationCriteria, initialState: InitialState | null | undefined, messages: Message[]): Partial_ & { db_check: DBCheck | null; env_assertions: unknown[] | null } {
  if ((criteria.actions === null || criteria.actions === undefined) && (criteria.env_assertions === null || criteria.env_assertions === undefined)) {
    return { reward: 1.0, db_check: { db_match: true, db_reward: 1.0 }, env_assertions: null, breakdown: null, info: { note: 'No expected actions or env assertions' } };
  }
  if (criteria.env_assertions && criteria.env_assertions.length > 0) {
    throw new TaskSetupError('evaluation_criteria.env_assertions: the retail toolkit has no assertion functions');
  }
  const start = initialDb(base, initialState);
  const predicted = start.fork();
  const gold = start.fork();
  const replay = replayTrajectory(predicted, messages);
  const goldFailures = runGoldActions(gold, criteria.actions ?? []);
  const match = predicted.sameAs(gold);
  const dbReward = match ? 1.0 : 0.0;
  let reward = 1.0;
  const breakdown: Partial<Record<RewardType, number>> = {};
  if (criteria.reward_basis.includes('DB')) {
    breakdown.DB = dbReward;
    reward *= dbReward;
  }
  if (criteria.reward_basis.includes('ENV_ASSERTION')) breakdown.ENV_ASSERTION = 1.0;
  const info: Record<string, unknown> = {};
  if (replay.mismatches.length > 0) info.replay_mismatches = replay.mismatches;
  if (replay.skipped.length > 0) info.replay_skipped_unparsable_calls = replay.skipped;
  if (goldFailures.length > 0) info.gold_action_errors = goldFailures;
  return { reward, db_check: { db_match: match, db_reward: dbReward }, env_assertions: [], breakdown, info: Object.keys(info).length > 0 ? info : null };
}

/** `Action.compare_with_tool_call`. */
function actionMatches(action: Action, call: ToolCallMsg): boolean {
  if (action.name !== call.name) return false;
  const args = call.arguments ?? {};
  const keys = action.compare_args ?? Object.keys(args);
  if (keys.length === 0) return true;
  const pick = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([k]) => keys.includes(k)));
  return sameJson(pick(args), pick(action.arguments));
}

function actionComponent(criteria: EvaluationCriteria, messages: Message[]): Partial_ & { action_checks: ActionCheck[] | null } {
  const gold = criteria.actions;
  if (!gold || gold.length === 0) return { reward: 1.0, action_checks: null, breakdown: { ACTION: 1.0 }, info: { note: 'No actions to evaluate' } };
  const calls = messages.flatMap((m) => (m.role === 'assistant' ? m.tool_calls : []));
  const checks = gold.map((action): ActionCheck => {
    const found = calls.some((c) => actionMatches(action, c));
    return { action, action_match: found, action_reward: found ? 1.0 : 0.0, tool_type: TOOLS.get(action.name)?.type ?? null };
  });
  const reward = checks.every((c) => c.action_match) ? 1.0 : 0.0;
  return { reward, action_checks: checks, breakdown: { ACTION: reward }, info: null };
}

function communicateComponent(criteria: EvaluationCriteria, messages: Message[]): Partial_ & { communicate_checks: CommunicateCheck[] | null } {
  const infos = criteria.communicate_info;
  if (!infos || infos.length === 0) return { reward: 1.0, communicate_checks: null, breakdown: { COMMUNICATE: 1.0 }, info: { note: 'No communicate_info to evaluate' } };
  const said = messages.filter((m): m is Extract<Message, { role: 'assistant' }> => m.role === 'assistant' && m.content !== null && pyStrip(m.content) !== '');
  const checks = infos.map((info): CommunicateCheck => {
    const hit = said.find((m) => m.content!.toLowerCase().replaceAll(',', '').includes(info.toLowerCase()));
    return hit
      ? { info, met: true, justification: `Information '${info}' communicated in the message:\n '${hit.content}'` }
      : { info, met: false, justification: `Information '${info}' not communicated.` };
  });
  const reward = checks.every((c) => c.met) ? 1.0 : 0.0;
  return { reward, communicate_checks: checks, breakdown: { COMMUNICATE: reward }, info: null };
}

// ---------------------------------------------------------------------------------------------
// NL assertions

export const NL_SYSTEM_PROMPT =
  '\n        TASK\n        - You will be given a list of expected outcomes and a conversation that was collected during a test case run.\n        - The conversation is between an agent and a customer.\n        - Your job is to evaluate whether the agent satisfies each of the expected outcomes.\n        - Grade each expected outcome individually.\n\n        FORMAT\n        - Your response should be a JSON object with the following fields:\n        - `reasoning`: a short explanation for your classification\n        - `metExpectation`: `true` if the agent satisfies the expected outcomes, `false` otherwise\n        - `expectedOutcome`: repeat the expectation from the input that you are grading\n        \n        Example response structure:\n        {\n            "results": [\n                {\n                    "expectedOutcome": "<one of the expected outcomes from the input>",\n                    "reasoning": "<reasoning trace>",\n                    "metExpectation": <false or true>,\n                }\n            ]\n        }\n        ';

/** tau2's judge prompt for a trajectory: `role: content` lines (None for a message without text), the assertions as a Python list. */
export function nlUserPrompt(messages: Message[], assertions: readonly string[]): string {
  const trajectory = messages.map((m) => `${m.role}: ${m.content ?? 'None'}`).join('\n');
  return `\n        conversation:\n        ${trajectory}\n        \n        expectedOutcomes:\n        ${pyRepr(assertions)}\n        `;
}

/** The judge's answer could not be used: a recorded failure of the rollout, never a 0. */
export class JudgeAnswerError extends NgError {
  constructor(message: string) {
    super('NG_ERR_BAD_JSON', message);
  }
}

/** tau2's reading of the judge's text: `json.loads`, then each of `results`. */
export function parseJudgeAnswer(text: string): NLAssertionCheck[] {
  let data: unknown;
  try {
    data = toPlain(pyJsonLoads(text));
  } catch (e) {
    throw new JudgeAnswerError(`the judge's answer is not JSON (${(e as Error).message}): ${text.slice(0, 200)}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new JudgeAnswerError(`the judge's answer is not a JSON object: ${text.slice(0, 200)}`);
  const results = (data as { results?: unknown }).results ?? [];
  if (!Array.isArray(results)) throw new JudgeAnswerError('the judge\'s "results" is not a list');
  return results.map((r, i) => {
    const o = (r ?? {}) as Record<string, unknown>;
    if (typeof o.expectedOutcome !== 'string' || typeof o.metExpectation !== 'boolean' || typeof o.reasoning !== 'string') {
      throw new JudgeAnswerError(`the judge's results.${i} lacks a string expectedOutcome, a boolean metExpectation or a string reasoning`);
    }
    return { nl_assertion: o.expectedOutcome, met: o.metExpectation, justification: o.reasoning };
  });
}

/** Asks the judge (the system and user prompt) for its answer text; undefined when no judge is configured. */
export type Judge = ((system: string, user: string) => Promise<string>) | undefined;

async function nlComponent(criteria: EvaluationCriteria, messages: Message[], judge: Judge): Promise<(Partial_ & { nl_assertions: NLAssertionCheck[] }) | null> {
  const assertions = criteria.nl_assertions;
  if (!assertions || assertions.length === 0) return { reward: 1.0, nl_assertions: [], breakdown: { NL_ASSERTION: 1.0 }, info: { note: 'No nl_assertions to evaluate' } };
  if (!judge) return null;
  const checks = parseJudgeAnswer(await judge(NL_SYSTEM_PROMPT, nlUserPrompt(messages, assertions)));
  const reward = checks.every((c) => c.met) ? 1.0 : 0.0;
  return { reward, nl_assertions: checks, breakdown: { NL_ASSERTION: reward }, info: null };
}

// ---------------------------------------------------------------------------------------------

export interface EvaluateInput {
  base: RetailRecords;
  criteria: EvaluationCriteria | null | undefined;
  initialState: InitialState | null | undefined;
  /** The rollout's items: request input, then response output. */
  items: readonly unknown[];
  /** How the conversation ended (tau2's TerminationReason value); only agent_stop and user_stop are scored. */
  terminationReason?: string | null;
  judge: Judge;
}

const SCORED_TERMINATIONS = new Set(['agent_stop', 'user_stop']);

export async function evaluate(input: EvaluateInput): Promise<RewardInfo> {
  const empty = { db_check: null, env_assertions: null, action_checks: null, nl_assertions: null, communicate_checks: null, reward_breakdown: null };
  if (input.terminationReason && !SCORED_TERMINATIONS.has(input.terminationReason)) {
    return { ...empty, reward: 0.0, reward_basis: null, info: { note: `Simulation terminated prematurely. Termination reason: ${input.terminationReason}` } };
  }
  const criteria = input.criteria;
  if (!criteria) return { ...empty, reward: 1.0, reward_basis: null, info: { note: 'No evaluation criteria' } };
  const messages = toMessages(input.items);
  const basis = new Set(criteria.reward_basis);
  const env = envComponent(input.base, criteria, input.initialState, messages);
  const action = actionComponent(criteria, messages);
  const communicate = communicateComponent(criteria, messages);
  const nl = basis.has('NL_ASSERTION') ? await nlComponent(criteria, messages, input.judge) : null;

  let reward = 1.0;
  const breakdown: Partial<Record<RewardType, number>> = {};
  const take = (c: Partial_ | null) => {
    if (!c) return;
    Object.assign(breakdown, c.breakdown ?? {});
    reward *= c.reward;
  };
  if (basis.has('DB') || basis.has('ENV_ASSERTION')) take(env);
  if (basis.has('ACTION')) take(action);
  if (basis.has('NL_ASSERTION')) take(nl);
  if (basis.has('COMMUNICATE')) take(communicate);
  const nlInfo = nl ? nl.info : basis.has('NL_ASSERTION') ? { note: 'NL assertions not evaluated: no judge_model_server is configured, so NL_ASSERTION is left out of the reward' } : null;
  return {
    reward,
    db_check: env.db_check,
    env_assertions: env.env_assertions,
    action_checks: action.action_checks,
    nl_assertions: nl ? nl.nl_assertions : null,
    communicate_checks: communicate.communicate_checks,
    reward_basis: criteria.reward_basis,
    reward_breakdown: breakdown,
    info: { env: env.info, nl: nlInfo, communicate: communicate.info, action: action.info },
  };
}

