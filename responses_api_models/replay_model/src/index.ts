/**
 * Indexes recorded rollouts (upstream-shaped JSONL: `responses_create_params` + `response`)
 * by conversation, so a request whose input equals a recorded conversation prefix gets the
 * recorded next model output.
 *
 * A recorded `response.output` is the whole trajectory; it splits into model turns at the
 * `function_call_output` items (those come from the tools, not the model). Model turn j's
 * request input = the original input + every output item before turn j.
 *
 * Two keys per prefix: an exact one (roles, texts, call ids, arguments, tool outputs) and a
 * loose one that ignores tool-output text, so a recording still replays when the tool server
 * formats its JSON differently (e.g. Python's `", "` separators).
 */
import { createHash } from 'node:crypto';
import { jsonlProblem, readJsonl } from '@nemo-gym/core/data';
import { ReplayRecordingsError } from './errors.js';

type Item = Record<string, unknown>;

export interface RecordedTurn {
  output: Item[];
  response: Item;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((p) => (p && typeof p === 'object' && typeof (p as Item).text === 'string' ? ((p as Item).text as string) : typeof (p as Item)?.refusal === 'string' ? ((p as Item).refusal as string) : '')).join('');
  }
  return '';
}

function normItem(item: Item, loose: boolean): unknown[] {
  const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
  switch (type) {
    case 'message':
      return ['m', item.role, textOf(item.content)];
    case 'function_call':
      return ['fc', item.name, item.call_id, loose ? '' : item.arguments];
    case 'function_call_output':
      return ['fco', item.call_id, loose ? '' : item.output];
    case 'reasoning':
      return ['r', Array.isArray(item.summary) ? (item.summary as Item[]).map((s) => s.text).join('\n') : ''];
    default:
      return ['x', type ?? null];
  }
}

export function normalizeInput(input: unknown): Item[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  return Array.isArray(input) ? (input as Item[]) : [];
}

export function conversationKey(items: Item[], loose: boolean): string {
  return createHash('sha256').update(JSON.stringify(items.map((i) => normItem(i, loose)))).digest('hex');
}

/** Splits a trajectory into model turns: each is the run of items up to the next tool outputs. */
export function splitTurns(output: Item[]): { before: Item[]; turn: Item[] }[] {
  const turns: { before: Item[]; turn: Item[] }[] = [];
  let i = 0;
  while (i < output.length) {
    while (i < output.length && output[i]!.type === 'function_call_output') i++;
    if (i >= output.length) break;
    const start = i;
    while (i < output.length && output[i]!.type !== 'function_call_output') i++;
    turns.push({ before: output.slice(0, start), turn: output.slice(start, i) });
  }
  return turns;
}

export class ReplayIndex {
  private readonly exact = new Map<string, RecordedTurn>();
  private readonly loose = new Map<string, RecordedTurn>();
  conversations = 0;

  add(row: Item): void {
    const params = row.responses_create_params as Item | undefined;
    const response = row.response as Item | undefined;
    if (!params || !response || !Array.isArray(response.output)) return;
    const input = normalizeInput(params.input);
    this.conversations++;
    for (const { before, turn } of splitTurns(response.output as Item[])) {
      const prefix = [...input, ...before];
      const rec: RecordedTurn = { output: turn, response };
      const e = conversationKey(prefix, false);
      const l = conversationKey(prefix, true);
      if (!this.exact.has(e)) this.exact.set(e, rec);
      if (!this.loose.has(l)) this.loose.set(l, rec);
    }
  }

  async addFile(path: string): Promise<void> {
    for await (const line of readJsonl(path)) {
      if (line.row !== null) this.add(line.row as Item);
      else if (line.parseError !== undefined) throw new ReplayRecordingsError(`line ${line.lineNo} of ${path} is not valid JSON: ${line.parseError}`);
      else throw new ReplayRecordingsError(jsonlProblem(path, line));
    }
  }

  lookup(input: unknown): RecordedTurn | undefined {
    const items = normalizeInput(input);
    return this.exact.get(conversationKey(items, false)) ?? this.loose.get(conversationKey(items, true));
  }

  get size(): number {
    return this.exact.size;
  }
}
