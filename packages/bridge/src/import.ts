/**
 * Other frameworks' trajectories -> rollout rows (the shape ng-collect-rollouts writes), so the
 * viewer, ng-reverify and ng-export work on them. Each input line is one trajectory:
 *
 * - `openai_chat`: `{"messages": [...], "tools": [...], ...task fields}` — the OpenAI chat
 *   fine-tuning layout (role/content messages, assistant `tool_calls`, `tool` results).
 * - `langchain`: the list LangChain's `messages_to_dict` writes (`[{"type": "human" | "ai" |
 *   "system" | "tool", "data": {...}}]`), or `{"messages": that list, ...task fields}` (a
 *   LangGraph state's message list).
 * - `nat`: NeMo Agent Toolkit intermediate steps — a list of `IntermediateStep` objects
 *   (`{"parent_id", "function_ancestry", "payload": {"event_type", "name", "data": {"input",
 *   "output"}, "UUID", ...}}`), or `{"intermediate_steps": that list, ...}` as in its evaluation
 *   output. WORKFLOW_START input is the user's question, LLM_END output an assistant turn,
 *   TOOL_START/TOOL_END (paired by UUID) a function call and its result.
 *
 * The messages before the first assistant turn become `responses_create_params.input`; the
 * rest becomes `response.output`. Other keys of an object line are kept as task fields (what a
 * verifier reads, e.g. `expected_answer`); a numeric `reward` is kept as the row's reward.
 */
import type { ServerClient } from '@nemo-gym/core/client';
import { readLines } from '@nemo-gym/core/data';
import { BadRowError } from '@nemo-gym/core/errors';
import { checkInputFile, checkOutputFile, commandLock } from '@nemo-gym/core/files';
import { JsonlSink } from './jsonl.js';
import { checkReverifyFiles, reverify, verifierFor, verifyClient, type ReverifySummary, type VerifyTarget } from './reverify.js';
import { isObject, Tally, type Json } from './rows.js';

export const IMPORT_FORMATS = ['openai_chat', 'langchain', 'nat'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** One conversation step in a neutral form. */
type Step =
  | { kind: 'message'; role: 'system' | 'developer' | 'user' | 'assistant'; text: string }
  | { kind: 'call'; callId: string; name: string; arguments: string }
  | { kind: 'result'; callId: string; output: string };

/** A trajectory line that is not in the documented shape of its format. */
export class ImportError extends BadRowError {}

function text(content: unknown): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (typeof p === 'string' ? p : isObject(p) && typeof p.text === 'string' ? p.text : ''))
      .join('');
  }
  return JSON.stringify(content);
}

function argsText(args: unknown): string {
  return typeof args === 'string' ? args : JSON.stringify(args ?? {});
}

function role(r: unknown, where: string): 'system' | 'developer' | 'user' | 'assistant' {
  if (r === 'system' || r === 'developer' || r === 'user' || r === 'assistant') return r;
  throw new ImportError(`${where} has role ${JSON.stringify(r)}; expected system, developer, user, assistant or tool`);
}

// ---- OpenAI chat ------------------------------------------------------------------------------

function chatSteps(messages: unknown[]): Step[] {
  const steps: Step[] = [];
  messages.forEach((m, i) => {
    if (!isObject(m)) throw new ImportError(`messages[${i}] is not an object`);
    if (m.role === 'tool') {
      steps.push({ kind: 'result', callId: String(m.tool_call_id ?? ''), output: text(m.content) });
      return;
    }
    const r = role(m.role, `messages[${i}]`);
    const t = text(m.content);
    const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
    if (t || calls.length === 0) steps.push({ kind: 'message', role: r, text: t });
    calls.forEach((c, j) => {
      if (!isObject(c) || !isObject(c.function)) throw new ImportError(`messages[${i}].tool_calls[${j}] has no "function" object`);
      steps.push({ kind: 'call', callId: String(c.id ?? `call_${i}_${j}`), name: String(c.function.name), arguments: argsText(c.function.arguments) });
    });
  });
  return steps;
}

/** Chat-format tools ({type, function: {name, description, parameters}}) as Responses function tools. */
function responsesTools(tools: unknown): Json[] {
  if (!Array.isArray(tools)) return [];
  return tools.map((t, i) => {
    if (!isObject(t)) throw new ImportError(`tools[${i}] is not an object`);
    const fn = isObject(t.function) ? t.function : t;
    return { type: 'function', name: fn.name, description: fn.description ?? null, parameters: fn.parameters ?? { type: 'object', properties: {} }, strict: fn.strict ?? null };
  });
}

// ---- LangChain --------------------------------------------------------------------------------

const LC_ROLES: Record<string, 'system' | 'user' | 'assistant'> = { system: 'system', human: 'user', ai: 'assistant', AIMessageChunk: 'assistant' };

function langchainSteps(messages: unknown[]): Step[] {
  const steps: Step[] = [];
  messages.forEach((m, i) => {
    if (!isObject(m) || typeof m.type !== 'string' || !isObject(m.data)) {
      throw new ImportError(`messages[${i}] is not a LangChain message dict ({"type": ..., "data": {...}})`);
    }
    const d = m.data;
    if (m.type === 'tool') {
      steps.push({ kind: 'result', callId: String(d.tool_call_id ?? ''), output: text(d.content) });
      return;
    }
    if (m.type === 'chat') {
      steps.push({ kind: 'message', role: role(d.role, `messages[${i}].data`), text: text(d.content) });
      return;
    }
    const r = LC_ROLES[m.type];
    if (!r) throw new ImportError(`messages[${i}] has type ${JSON.stringify(m.type)}; expected human, ai, system, tool or chat`);
    const t = text(d.content);
    const calls = r === 'assistant' && Array.isArray(d.tool_calls) ? d.tool_calls : [];
    if (t || calls.length === 0) steps.push({ kind: 'message', role: r, text: t });
    calls.forEach((c, j) => {
      if (!isObject(c)) throw new ImportError(`messages[${i}].data.tool_calls[${j}] is not an object`);
      steps.push({ kind: 'call', callId: String(c.id ?? `call_${i}_${j}`), name: String(c.name), arguments: argsText(c.args) });
    });
  });
  return steps;
}

// ---- NeMo Agent Toolkit -----------------------------------------------------------------------

function natSteps(events: unknown[]): Step[] {
  const steps: Step[] = [];
  let question: string | undefined;
  let firstLlmInput: string | undefined;
  events.forEach((e, i) => {
    const p = isObject(e) && isObject(e.payload) ? e.payload : undefined;
    if (!p || typeof p.event_type !== 'string') throw new ImportError(`intermediate_steps[${i}] has no payload.event_type`);
    const data = isObject(p.data) ? p.data : {};
    const uuid = typeof p.UUID === 'string' ? p.UUID : `step_${i}`;
    switch (p.event_type) {
      case 'WORKFLOW_START':
        question ??= text(data.input);
        break;
      case 'LLM_START':
        firstLlmInput ??= text(data.input);
        break;
      case 'LLM_END':
        steps.push({ kind: 'message', role: 'assistant', text: text(data.output) });
        break;
      case 'TOOL_START':
        steps.push({ kind: 'call', callId: uuid, name: String(p.name ?? 'tool'), arguments: argsText(data.input) });
        break;
      case 'TOOL_END':
        steps.push({ kind: 'result', callId: uuid, output: text(data.output) });
        break;
      default:
        break; // function, task, span and token events add nothing to the conversation
    }
  });
  const prompt = question ?? firstLlmInput;
  if (prompt === undefined) throw new ImportError('the trajectory has neither a WORKFLOW_START nor an LLM_START step, so it has no prompt');
  return [{ kind: 'message', role: 'user', text: prompt }, ...steps];
}

// ---- Steps -> rollout row ---------------------------------------------------------------------

function inputMessage(s: Extract<Step, { kind: 'message' }>): Json {
  return { role: s.role, content: s.text, type: 'message' };
}

function outputItems(steps: Step[]): Json[] {
  let n = 0;
  return steps.map((s) => {
    n++;
    if (s.kind === 'call') return { type: 'function_call', id: `fc_imported_${n}`, call_id: s.callId, name: s.name, arguments: s.arguments, status: 'completed' };
    if (s.kind === 'result') return { type: 'function_call_output', call_id: s.callId, output: s.output };
    if (s.role === 'assistant') {
      return { id: `msg_imported_${n}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: s.text, annotations: [] }] };
    }
    return { type: 'message', role: s.role, content: [{ type: 'input_text', text: s.text }] };
  });
}

export function stepsToRollout(steps: Step[], tools: Json[], extra: Json, taskIndex: number, model: string): Json {
  const first = steps.findIndex((s) => s.kind !== 'message' || s.role === 'assistant');
  const promptSteps = (first < 0 ? steps : steps.slice(0, first)) as Extract<Step, { kind: 'message' }>[];
  if (promptSteps.length === 0) throw new ImportError('the trajectory starts with an assistant turn; there is no prompt before it');
  const rest = first < 0 ? [] : steps.slice(first);
  const { reward, ...fields } = extra;
  const row: Json = {
    ...fields,
    responses_create_params: { input: promptSteps.map(inputMessage), tools, parallel_tool_calls: true, tool_choice: 'auto' },
    response: {
      id: `resp_imported_${taskIndex}`,
      created_at: 0,
      model,
      object: 'response',
      output: outputItems(rest),
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools,
      status: 'completed',
    },
    _ng_task_index: taskIndex,
    _ng_rollout_index: 0,
  };
  if (typeof reward === 'number' && Number.isFinite(reward)) row.reward = reward;
  return row;
}

/** One input line (already parsed) -> one rollout row; throws ImportError saying what is wrong. */
export function importTrajectory(format: ImportFormat, value: unknown, taskIndex: number): Json {
  const obj = isObject(value) ? value : undefined;
  switch (format) {
    case 'openai_chat': {
      if (!obj || !Array.isArray(obj.messages)) throw new ImportError('an openai_chat line is an object with a "messages" list');
      const { messages, tools, ...extra } = obj;
      return stepsToRollout(chatSteps(messages), responsesTools(tools), extra, taskIndex, 'imported-openai-chat');
    }
    case 'langchain': {
      const list = Array.isArray(value) ? value : obj && Array.isArray(obj.messages) ? obj.messages : undefined;
      if (!list) throw new ImportError('a langchain line is the list messages_to_dict writes, or an object with that list under "messages"');
      const { messages: _m, tools, ...extra } = obj ?? {};
      return stepsToRollout(langchainSteps(list), responsesTools(tools), extra, taskIndex, 'imported-langchain');
    }
    case 'nat': {
      const list = Array.isArray(value) ? value : obj && Array.isArray(obj.intermediate_steps) ? obj.intermediate_steps : undefined;
      if (!list) throw new ImportError('a nat line is a list of intermediate steps, or an object with that list under "intermediate_steps"');
      const { intermediate_steps: _s, tools, ...extra } = obj ?? {};
      return stepsToRollout(natSteps(list), responsesTools(tools), extra, taskIndex, 'imported-nat');
    }
  }
}

// ---- Files ------------------------------------------------------------------------------------

export interface ImportOptions {
  input: string;
  output: string;
  format: ImportFormat;
  /** Re-score every imported row through this resources server's /verify. */
  rescore?: VerifyTarget;
  concurrency?: number;
  client?: ServerClient;
  /** Take the output's lock as this command (e.g. `ng-import`): a second writer of the output is refused. */
  lock?: string;
}

export interface ImportSummary {
  input: string;
  output: string;
  format: ImportFormat;
  lines: number;
  imported: number;
  unusable: Record<string, { count: number; lines: number[] }>;
  /** Present when re-scored: the re-verification summary (its `newlyScored` rows had no reward before). */
  rescored?: ReverifySummary;
}

/**
 * Imports a file of trajectories. The input, the output and (when re-scoring) the /verify target
 * are checked before anything is written. Without re-scoring the rows go straight to the output,
 * atomically; with it they go to a temporary file beside the output
 * (`<output>.unscored.<pid>@<host>.tmp`, removed at the end, or by the next run when this one was killed),
 * which ng-reverify's writer turns into the output, atomically too.
 */
export async function importFile(opts: ImportOptions): Promise<ImportSummary> {
  const unusable = new Tally();
  checkInputFile({ path: opts.input, flag: '+input' });
  if (opts.rescore) checkReverifyFiles({ input: opts.input, output: opts.output });
  else checkOutputFile({ path: opts.output, flag: '+output' }, [{ path: opts.input, flag: '+input' }]);
  const lock = commandLock(opts.output, opts.lock);
  try {
    return await importChecked(opts, unusable);
  } finally {
    lock?.release();
  }
}

async function importChecked(opts: ImportOptions, unusable: Tally): Promise<ImportSummary> {
  let client: ServerClient | undefined;
  if (opts.rescore) {
    client = await verifyClient(opts.rescore, opts.client);
    try {
      await verifierFor(opts.rescore, client);
    } catch (err) {
      if (!opts.client) await client.close();
      throw err;
    }
  }
  let sink: JsonlSink;
  try {
    sink = new JsonlSink(opts.output, opts.rescore ? { tag: 'unscored' } : {});
  } catch (err) {
    if (client && !opts.client) await client.close();
    throw err;
  }
  let lines = 0;
  try {
    for await (const { lineNo, text: line } of readLines(opts.input)) {
      if (!line.trim()) continue;
      lines++;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (err) {
        unusable.add(`not JSON (${(err as Error).message})`, lineNo);
        continue;
      }
      try {
        await sink.write(importTrajectory(opts.format, value, lines - 1));
      } catch (err) {
        if (!(err instanceof ImportError)) throw err;
        unusable.add(err.message, lineNo);
      }
    }
    if (opts.rescore) await sink.end();
    else await sink.close();
  } catch (err) {
    sink.abort();
    if (client && !opts.client) await client.close();
    throw err;
  }
  const summary: ImportSummary = { input: opts.input, output: opts.output, format: opts.format, lines, imported: sink.rows, unusable: unusable.toJSON() };
  if (opts.rescore) {
    try {
      summary.rescored = await reverify({ input: sink.tmpPath, output: opts.output, target: opts.rescore, concurrency: opts.concurrency, client, inputFlag: 'the imported rows' });
    } finally {
      sink.abort();
      if (client && !opts.client) await client.close();
    }
  }
  return summary;
}
