/**
 * Every retail task: the gold actions called through the tool routes and scored by /verify give
 * DB reward 1.0; the same trajectory without its last state-changing call gives what tau2's hash
 * comparison gives: 0.0 unless tau2's own tools leave the same database without that call
 * (`reference/gold_outputs.json`: tau2's DB hashes with and without it).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';
import { taskRow } from '../src/rows.js';
import { mutatesState } from '../src/tools.js';
import { assistantSays, callItems, CONFIG, HAVE_DATA, responseWith } from './helpers.js';

const tau2 = useTestServer(server, { config: CONFIG });
const reference = JSON.parse(readFileSync(new URL('./reference/gold_outputs.json', import.meta.url), 'utf8')) as {
  tasks: { id: string; final_db_hash: string; without_last_write_db_hash?: string }[];
};

describe.skipIf(!HAVE_DATA)('gold actions of every retail task', () => {
  it('score DB reward 1.0; dropping the last write scores 0.0 exactly when that write changed the database', async () => {
    const { data } = tau2.context.state;
    const summary = { tasks: 0, gold1: 0, withWrites: 0, dropped0: 0, dropped1: 0, noWrites: 0, goldErrors: 0 };
    for (const task of data.tasks) {
      summary.tasks++;
      const row = taskRow(task, data.policy);
      const s = tau2.session();
      expect((await s.post('/seed_session', row)).status).toBe(200);
      const items: Record<string, unknown>[] = [];
      const writes: { index: number; failed: boolean }[] = [];
      for (const action of task.evaluation_criteria!.actions ?? []) {
        const res = await s.post(`/${action.name}`, action.arguments);
        expect(res.status).toBe(200);
        if (mutatesState(action.name)) writes.push({ index: items.length, failed: res.text.startsWith('Error: ') });
        items.push(...callItems(action.name, action.arguments, res.text));
      }
      const verify = await s.post('/verify', { ...row, response: responseWith([...items, assistantSays('Done.')]) });
      expect(verify.status).toBe(200);
      const info = verify.json.reward_info;
      expect(info.db_check, `task ${task.id}`).toEqual({ db_match: true, db_reward: 1.0 });
      expect(info.reward_breakdown.DB).toBe(1.0);
      expect(info.info.env?.replay_mismatches, `task ${task.id}: the replay agrees with the recorded outputs`).toBeUndefined();
      if (info.info.env?.gold_action_errors) summary.goldErrors++;
      expect(verify.json.reward).toBe(1.0);
      summary.gold1++;

      const last = writes.at(-1);
      if (!last) {
        summary.noWrites++;
        continue;
      }
      summary.withWrites++;
      const dropped = [...items.slice(0, last.index), ...items.slice(last.index + 2)];
      const s2 = tau2.session();
      await s2.post('/seed_session', row);
      const v2 = await s2.post('/verify', { ...row, response: responseWith([...dropped, assistantSays('Done.')]) });
      const ref = reference.tasks.find((t) => t.id === task.id)!;
      const expected = ref.without_last_write_db_hash === ref.final_db_hash ? 1.0 : 0.0;
      // tau2 leaves the database unchanged only where that write fails in the gold run too
      expect(expected, `task ${task.id}`).toBe(last.failed ? 1.0 : 0.0);
      expect(v2.json.reward_info.db_check.db_reward, `task ${task.id} without its last write`).toBe(expected);
      if (expected === 0) summary.dropped0++;
      else summary.dropped1++;
    }
    console.log(`tau2 retail gold replay: ${JSON.stringify(summary)}`);
    expect(summary.tasks).toBe(114);
    expect(summary.gold1).toBe(114);
    expect([summary.withWrites, summary.dropped0, summary.dropped1, summary.noWrites]).toEqual([104, 103, 1, 10]);
  }, 60_000);
});
