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
import { getResponse } from '../src/tools.js';
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
