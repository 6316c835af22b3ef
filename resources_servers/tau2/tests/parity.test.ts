/**
 * Byte parity with tau2 on all gold actions: `reference/gold_outputs.json` was made by running
 * tau2's own `RetailTools` (tools.py at the pinned commit, with pydantic models of the retail
 * data model) over db.json: for every task, the SHA-256 of its gold actions' ToolMessage contents
 * (as `Environment.get_response` makes them, joined by "\n\0\n") and tau2's DB hash after them.
 * See reference/README.md for how to make it again.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readDataDir } from '../src/data.js';
import { RetailDb } from '../src/db.js';
import { getResponse, mutatesState } from '../src/tools.js';
import { DATA_DIR, HAVE_DATA } from './helpers.js';

interface Reference {
  initial_db_hash: string;
  tasks: { id: string; outputs_sha256: string; final_db_hash: string }[];
}
const reference = JSON.parse(readFileSync(new URL('./reference/gold_outputs.json', import.meta.url), 'utf8')) as Reference;

describe.skipIf(!HAVE_DATA)('parity with tau2 on the gold actions', () => {
  const data = HAVE_DATA ? readDataDir(DATA_DIR) : undefined;

  it("the loaded database has tau2's hash", () => {
    expect(new RetailDb(data!.records).hash()).toBe(reference.initial_db_hash);
  });

  it("every task's tool outputs and final database hash equal tau2's", () => {
    expect(reference.tasks.map((t) => t.id)).toEqual(data!.tasks.map((t) => t.id));
    const base = new RetailDb(data!.records);
    let same = 0;
    for (const [i, task] of data!.tasks.entries()) {
      const db = base.fork();
      const contents = (task.evaluation_criteria?.actions ?? []).map((a) => getResponse(db, a.name, a.arguments).content);
      const ref = reference.tasks[i]!;
      expect(createHash('sha256').update(contents.join('\n\0\n')).digest('hex'), `task ${task.id} outputs`).toBe(ref.outputs_sha256);
      expect(db.hash(), `task ${task.id} database`).toBe(ref.final_db_hash);
      same++;
    }
    expect(same).toBe(114);
  }, 60_000);
});

/**
 * The calls of `reference/perturbed_calls.json`: each gold action in turn, a write preceded by
 * copies with broken arguments (another payment method, no '#', reordered or empty item lists, a
 * bad reason, a missing and an unexpected argument) and followed by itself again; then a few reads.
 */
function perturbedCalls(actions: readonly { name: string; arguments: Record<string, unknown> }[]): [string, Record<string, unknown>][] {
  const calls: [string, Record<string, unknown>][] = [];
  for (const a of actions) {
    const n = a.name;
    const args = { ...a.arguments };
    const write = mutatesState(n);
    if (write) {
      if ('payment_method_id' in args) calls.push([n, { ...args, payment_method_id: 'gift_card_0000000' }]);
      if ('order_id' in args) calls.push([n, { ...args, order_id: String(args.order_id).replace(/^#+/, '') }]);
      for (const k of ['item_ids', 'new_item_ids']) {
        if (k in args) {
          const list = args[k] as unknown[];
          calls.push([n, { ...args, [k]: [...list].reverse().concat(list.slice(0, 1)) }]);
          calls.push([n, { ...args, [k]: [] }]);
        }
      }
      if (n === 'cancel_pending_order') calls.push([n, { ...args, reason: 'other' }]);
      calls.push([n, Object.fromEntries(Object.entries(args).slice(0, -1))]);
      calls.push([n, { ...args, extra: 1 }]);
    }
    calls.push([n, args]);
    if (write) calls.push([n, args]);
  }
  calls.push(['calculate', { expression: '(1+2)*3/7' }]);
  calls.push(['find_user_id_by_name_zip', { first_name: 'YUSUF', last_name: 'rossi', zip: '19122' }]);
  calls.push(['get_item_details', { item_id: '1656367028' }]);
  calls.push(['list_all_product_types', {}]);
  calls.push(['transfer_to_human_agents', { summary: 'x' }]);
  return calls;
}

interface Perturbed {
  id: string;
  n_calls: number;
  outputs_sha256: string;
  final_db_hash: string;
}
const perturbed = JSON.parse(readFileSync(new URL('./reference/perturbed_calls.json', import.meta.url), 'utf8')) as Perturbed[];

describe.skipIf(!HAVE_DATA)('parity with tau2 on repeated and broken calls', () => {
  it("every task's 2,332 calls answer tau2's texts (errors included) and leave tau2's database", () => {
    const data = readDataDir(DATA_DIR);
    const base = new RetailDb(data.records);
    let total = 0;
    for (const [i, task] of data.tasks.entries()) {
      const db = base.fork();
      const calls = perturbedCalls(task.evaluation_criteria?.actions ?? []);
      const ref = perturbed[i]!;
      expect(calls.length, `task ${task.id} call count`).toBe(ref.n_calls);
      const contents = calls.map(([name, args]) => getResponse(db, name, args).content);
      expect(createHash('sha256').update(contents.join('\n\0\n')).digest('hex'), `task ${task.id} outputs`).toBe(ref.outputs_sha256);
      expect(db.hash(), `task ${task.id} database`).toBe(ref.final_db_hash);
      total += calls.length;
    }
    expect(total).toBe(2332);
  }, 60_000);
});
