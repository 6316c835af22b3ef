/** What the reward depends on: order of state changes, value types, case, read-only calls. */
import { describe, expect, it } from 'vitest';
import { replay, reward } from '../src/replay.js';
import { HAVE_DATA, realData } from './helpers.js';

const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: JSON.stringify(args) });
const asOutput = (calls: { name: string; arguments: string }[]) => calls.map((c, i) => ({ type: 'function_call', call_id: `c${i}`, ...c }));
const score = (predicted: { name: string; arguments: string }[], groundTruth: unknown) => reward(realData(), asOutput(predicted), groundTruth);

const DELETE = call('email_delete_email', { email_id: '00000259' });
const SEND = call('email_send_email', { recipient: 'kofi.mensah@atlas.com', subject: 'Catch-up', body: 'Free tomorrow?' });
const event = (duration: unknown, name = 'Planning') =>
  call('calendar_create_event', { event_name: name, participant_email: 'luis.ortiz@atlas.com', event_start: '2023-12-04 10:00:00', duration });

describe.skipIf(!HAVE_DATA)('reward', () => {
  it('the same state changes in another order can change the index labels: delete-then-send vs send-then-delete', () => {
    expect(score([DELETE, SEND], [DELETE, SEND])).toBe(1);
    expect(score([SEND, DELETE], [SEND, DELETE])).toBe(1);
    expect(score([SEND, DELETE], [DELETE, SEND])).toBe(0);
    // the rows are the same either way; only the labels differ
    const a = replay(realData(), [DELETE, SEND]).emails;
    const b = replay(realData(), [SEND, DELETE]).emails;
    expect(a.records()).toEqual(b.records());
    expect(a.index).toEqual([...Array(500).keys()]);
    expect(b.index).not.toEqual(a.index);
    expect(a.record(499).email_id).toBe('500');
  });

  it('a JSON number duration is not the string: "60" vs 60', () => {
    expect(score([event('60')], [event('60')])).toBe(1);
    expect(score([event(60)], [event('60')])).toBe(0);
    // after lower-casing every non-string cell is missing, so two different numbers compare equal
    expect(score([event(60)], [event(90)])).toBe(1);
    expect(score([event('60')], [event('90')])).toBe(0);
  });

  it('arguments are read as Python reads them: 2023.0 is a float and prints as one', () => {
    const plot = (t: string) => ({ name: 'analytics_create_plot', arguments: `{"time_min": ${t}, "time_max": "2023-11-15", "value_to_plot": "total_visits", "plot_type": "bar"}` });
    expect(score([plot('2023.0')], [plot('2023.0')])).toBe(1);
    expect(score([plot('2023')], [plot('2023.0')])).toBe(0);
    expect(replay(realData(), [plot('2023.0')]).plots.records()).toEqual([{ file_path: 'plots/2023.0_2023-11-15_total_visits_bar.png' }]);
    // a float page size cannot slice a list in Python: the search fails, nothing else happens
    expect(score([{ name: 'email_search_emails', arguments: '{"query": "kofi", "page_size": 2.0}' }], [])).toBe(1);
  });

  it('calendar appends carry label 0; other appends renumber', () => {
    const env = replay(realData(), [event('30', 'A'), event('30', 'B')]);
    expect(env.calendar.index.slice(-3)).toEqual([299, 0, 0]);
    expect(env.calendar.records().slice(-2).map((r) => r.event_id)).toEqual(['00000300', '00000301']);
    expect(score([event('30', 'B'), event('30', 'A')], [event('30', 'A'), event('30', 'B')])).toBe(0);
    const tasks = replay(realData(), [
      call('project_management_delete_task', { task_id: '00000149' }),
      call('project_management_create_task', { task_name: 'x', assigned_to_email: 'leila.azizi@atlas.com', list_name: 'Backlog', due_date: '2023-12-01', board: 'Design' }),
    ]).projectTasks;
    expect(tasks.index).toEqual([...Array(300).keys()]);
  });

  it('case is ignored except in status, list_name and board', () => {
    const add = (name: string, status: string) => call('customer_relationship_manager_add_customer', { customer_name: name, assigned_to_email: 'nadia.moreau@atlas.com', status });
    expect(score([add('dakota thomas', 'Lead')], [add('Dakota Thomas', 'Lead')])).toBe(1);
    expect(score([add('Dakota Thomas', 'lead')], [add('Dakota Thomas', 'Lead')])).toBe(0);
    const send = (subject: string) => call('email_send_email', { recipient: 'Kofi.Mensah@atlas.com', subject, body: 'b' });
    expect(score([send('HELLO')], [send('hello')])).toBe(1);
  });

  it('read-only calls never change the state', () => {
    const reads = [
      call('email_search_emails', { query: 'kofi' }),
      call('calendar_search_events', { query: 'sync' }),
      call('analytics_total_visits_count', {}),
      call('analytics_get_average_session_duration', {}),
      call('project_management_search_tasks', { board: 'Design' }),
      call('customer_relationship_manager_search_customers', { status: 'Won' }),
      call('company_directory_find_email_address', { name: 'a' }),
    ];
    expect(score(reads, [])).toBe(1);
    expect(score(reads, [DELETE])).toBe(0);
    expect(score([...reads, DELETE], [DELETE])).toBe(1);
  });

  it('a plot is state: a different plot, or none, scores 0', () => {
    const plot = (t: string) => call('analytics_create_plot', { time_min: '2023-11-01', time_max: '2023-11-15', value_to_plot: 'total_visits', plot_type: t });
    expect(score([plot('bar')], [plot('bar')])).toBe(1);
    expect(score([plot('line')], [plot('bar')])).toBe(0);
    expect(score([], [plot('bar')])).toBe(0);
  });

  it('a string ground truth replays nothing; calls that raise are skipped', () => {
    expect(score([], 'email_delete_email')).toBe(1);
    expect(score([DELETE], 'email_delete_email')).toBe(0);
    const broken = [
      { name: 'email_delete_email', arguments: '{"email_id": ' },
      { name: 'email_delete_email', arguments: '[]' },
      { name: 'nope', arguments: '{}' },
      call('email_delete_email', { email_id: '00000259', why: 'extra' }),
      call('company_directory_find_email_address', { name: null }),
      call('email_search_emails', { query: 'x', page: null }),
    ];
    expect(score(broken, [])).toBe(1);
    expect(score([...broken, DELETE], [DELETE])).toBe(1);
  });
});
