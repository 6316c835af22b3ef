/** Shared test setup: tau2-bench's retail data from ../shared (tests that need it skip without it). */
import { existsSync } from 'node:fs';
import { sharedPath } from '@nemo-gym/core/config';

export const DATA_DIR = sharedPath('tau2', 'retail');
export const HAVE_DATA = ['db.json', 'tasks.json', 'policy.md', 'split_tasks.json'].every((f) => existsSync(`${DATA_DIR}/${f}`));
if (!HAVE_DATA) console.log(`tau2 retail data tests skipped: ${DATA_DIR} is absent`);

export const CONFIG = { name: 'tau2', domain: 'agent' as const, data_dir: DATA_DIR, data_url: null };

let n = 0;
/** A function_call item and its output item, as an agent records them. */
export function callItems(name: string, args: unknown, output: string): [Record<string, unknown>, Record<string, unknown>] {
  const id = `call_${++n}`;
  return [
    { type: 'function_call', name, arguments: JSON.stringify(args), call_id: id, id: `fc_${id}`, status: 'completed' },
    { type: 'function_call_output', call_id: id, output },
  ];
}

/** A Response with these output items. */
export function responseWith(output: unknown[]): Record<string, unknown> {
  return { id: 'resp', created_at: 0, model: 'm', object: 'response', output, parallel_tool_calls: true, tool_choice: 'auto', tools: [] };
}

export const assistantSays = (text: string) => ({ type: 'message', role: 'assistant', id: `msg_${++n}`, status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
