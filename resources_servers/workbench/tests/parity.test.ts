/**
 * Parity with upstream's recorded rollouts (../shared/upstream-data/workbench):
 *  - each rollout's tool calls, replayed through the tool routes in one seeded session, give the
 *    recorded tool outputs byte for byte (they are what the model saw);
 *  - each rollout's reward is reproduced by /verify.
 * The recorded rows do not carry their ground truth; the lists below are the WorkBench answers
 * for those five queries (the last one is the answer in WorkBench's published query file; the
 * others follow the same dataset's query templates).
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core/config';
import { server } from '../app.js';

const dir = sharedPath('upstream-data', 'workbench');
const present = existsSync(`${dir}/example_rollouts.jsonl`) && existsSync(`${dir}/csv_data/processed/emails.csv`);
if (!present) console.log(`workbench parity tests skipped: ${dir} is absent`);

type App = Awaited<ReturnType<typeof server.build>>;
let app: App;

beforeAll(async () => {
  if (!present) return;
  app = await server.build({ config: { name: 'workbench', domain: 'agent', csv_data_dir: `${dir}/csv_data` } });
});
afterAll(async () => {
  await app?.close();
});

const rows = present
  ? readFileSync(`${dir}/example_rollouts.jsonl`, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Record<string, any>)
  : [];

const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: JSON.stringify(args) });
const GROUND_TRUTH = [
  [call('analytics_create_plot', { time_min: '2023-11-30', time_max: '2023-11-29', value_to_plot: 'total_visits', plot_type: 'bar' })],
  [],
  [call('customer_relationship_manager_delete_customer', { customer_id: '00000014' })],
  [call('customer_relationship_manager_add_customer', { customer_name: 'Dakota Thomas', assigned_to_email: 'nadia.moreau@atlas.com', status: 'Lead' })],
  [call('email_delete_email', { email_id: '00000259' })],
];

function cookieOf(res: { headers: Record<string, unknown> }): string {
  return String(res.headers['set-cookie']).split(';')[0]!;
}

describe.skipIf(!present)('recorded rollouts', () => {
  it('every recorded tool output is reproduced byte for byte', async () => {
    let compared = 0;
    for (const row of rows) {
      const seeded = await app.inject({ method: 'POST', url: '/seed_session', payload: row });
      let cookie = cookieOf(seeded);
      const outputs = new Map<string, string>();
      for (const item of row.response.output) if (item.type === 'function_call_output') outputs.set(item.call_id, item.output);
      for (const item of row.response.output) {
        if (item.type !== 'function_call') continue;
        const res = await app.inject({
          method: 'POST',
          url: `/${item.name}`,
          headers: { cookie, 'content-type': 'application/json' },
          payload: item.arguments,
        });
        cookie = cookieOf(res);
        expect(res.statusCode).toBe(200);
        expect(res.body).toBe(outputs.get(item.call_id));
        compared++;
      }
    }
    expect(compared).toBe(8);
  });

  it('every recorded reward is reproduced', async () => {
    const rewards: number[] = [];
    for (const [i, row] of rows.entries()) {
      const res = await app.inject({
        method: 'POST',
        url: '/verify',
        payload: { ...row, ground_truth: GROUND_TRUTH[i], id: i, category: 'workbench', environment_name: 'workbench' },
      });
      expect(res.statusCode).toBe(200);
      rewards.push(res.json().reward);
    }
    expect(rewards).toEqual(rows.map((r) => r.reward));
    expect(rewards).toEqual([0, 1, 1, 1, 1]);
  });
});
