/** table_bookings: example rows, per-session bookings, the tools' answers and the verifier. */
import { describe, expect, it } from 'vitest';
import { checkExampleData, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';

const desk = useTestServer(server, { config: { name: 'table_bookings', domain: 'agent' } });
const rows = checkExampleData(new URL('..', import.meta.url));
const byTask = new Map(rows.map((r) => [r.task_id as string, r]));
const EMPTY_RESPONSE = { id: 'r', created_at: 1, model: 'm', object: 'response', output: [], parallel_tool_calls: false, tool_choice: 'auto', tools: [] };

/** Seeds a session from a row, runs `calls` in it, verifies; the verify answer. */
async function play(task: string, calls: [string, Record<string, unknown>][]) {
  const row = byTask.get(task)!;
  const seeded = await desk.post('/seed_session', row);
  expect(seeded.status).toBe(200);
  const cookie = seeded.cookie;
  const answers = [];
  for (const [tool, args] of calls) answers.push((await desk.post<any>(`/${tool}`, args, { cookie })).json);
  const verify = await desk.post<any>('/verify', { ...row, response: EMPTY_RESPONSE }, { cookie });
  expect(verify.status, verify.text).toBe(200);
  return { answers, verify: verify.json };
}

describe('table_bookings', () => {
  it('every example row asks for something the tools can do and expects the bookings that gives', async () => {
    const gold: Record<string, [string, Record<string, unknown>][]> = {
      cancel_by_id: [['get_booking', { booking_id: 'B-1043' }], ['cancel_booking', { booking_id: 'B-1043' }]],
      grow_party_by_name: [['find_bookings', { name: 'maya lindqvist' }], ['change_party_size', { booking_id: 'B-1042', party_size: 6 }]],
      shrink_party: [['change_party_size', { booking_id: 'B-1060', party_size: 2 }]],
      large_party_transfer: [['change_party_size', { booking_id: 'B-1071', party_size: 12 }], ['transfer_to_human_agents', { summary: 'party of 12' }]],
      wrong_id_then_cancel: [['get_booking', { booking_id: 'B-1075' }], ['find_bookings', { name: 'Maya Lindqvist' }], ['cancel_booking', { booking_id: 'B-1057' }]],
    };
    expect(Object.keys(gold).sort()).toEqual([...byTask.keys()].sort());
    for (const [task, calls] of Object.entries(gold)) {
      const { answers, verify } = await play(task, calls);
      expect(verify.reward, task).toBe(1.0);
      if (task === 'grow_party_by_name') expect(answers[0].bookings.map((b: { booking_id: string }) => b.booking_id)).toEqual(['B-1042', 'B-1057']);
      if (task === 'large_party_transfer') {
        expect(answers[0]).toEqual({ error: 'Parties above 8 need a human agent.' });
        expect(answers[1]).toBe('Transfer successful');
        expect(verify.transferred).toBe(true);
      }
      if (task === 'wrong_id_then_cancel') expect(answers[0]).toEqual({ error: 'No booking with id "B-1075".' });
    }
  });

  it('a missing write, a wrong write or a second change scores 0.0', async () => {
    expect((await play('cancel_by_id', [['get_booking', { booking_id: 'B-1043' }]])).verify.reward).toBe(0.0);
    expect((await play('grow_party_by_name', [['change_party_size', { booking_id: 'B-1057', party_size: 6 }]])).verify.reward).toBe(0.0);
    expect((await play('shrink_party', [['change_party_size', { booking_id: 'B-1060', party_size: 2 }], ['cancel_booking', { booking_id: 'B-1071' }]])).verify.reward).toBe(0.0);
  });

  it('a cancelled booking cannot be changed again; sessions do not see each other', async () => {
    const row = byTask.get('cancel_by_id')!;
    const a = (await desk.post('/seed_session', row)).cookie;
    const b = (await desk.post('/seed_session', row)).cookie;
    await desk.post('/cancel_booking', { booking_id: 'B-1043' }, { cookie: a });
    expect((await desk.post<any>('/cancel_booking', { booking_id: 'B-1043' }, { cookie: a })).json).toEqual({ error: 'Booking B-1043 is cancelled.' });
    expect((await desk.post<any>('/get_booking', { booking_id: 'B-1043' }, { cookie: b })).json.status).toBe('confirmed');
  });
});
