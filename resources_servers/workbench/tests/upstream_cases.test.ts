/**
 * Upstream's test_app.py cases, one by one: each replaces one table with a few records (upstream
 * mocks that table's read_csv) and calls the tool route in a seeded session.
 */
import { describe, expect, it } from 'vitest';
import type { WorkbenchData } from '../src/data.js';
import { reward } from '../src/replay.js';
import { frame, HAVE_DATA, realData, seeded } from './helpers.js';

/** Upstream's analytics reset mock: one row with `user_engaged` as the string "False". */
const ANALYTICS_MOCK = frame([{ user_engaged: 'False' }]);

function withTable(key: keyof WorkbenchData, records: Record<string, unknown>[]): WorkbenchData {
  return { ...realData(), analytics: ANALYTICS_MOCK, [key]: frame(records) };
}

describe.skipIf(!HAVE_DATA)('upstream test_app.py', () => {
  it('company_directory_find_email_address', () => {
    const { call } = seeded(withTable('addresses', [{ email_address: 'aisha.chen@atlas.com' }, { email_address: 'carlos.rodriguez@atlas.com' }]));
    expect(call('company_directory_find_email_address', { name: 'aisha' })).toEqual(['aisha.chen@atlas.com']);
  });

  it('email_get_email_information_by_id', () => {
    const { call } = seeded(
      withTable('emails', [
        { email_id: '00000393', 'inbox/outbox': 'inbox', 'sender/recipient': 'raj.patel@atlas.com', subject: 'Update on Supply Chain', sent_datetime: '2023-10-01 13:11:52', body: 'Dear Sam, I have some ideas...' },
        { email_id: '00000123', 'inbox/outbox': 'outbox', 'sender/recipient': 'test@example.com', subject: 'Test Subject', sent_datetime: '2023-10-01 14:00:00', body: 'This is a test body.' },
      ]),
    );
    expect(call('email_get_email_information_by_id', { email_id: '00000393', field: 'inbox/outbox' })).toEqual({ 'inbox/outbox': 'inbox' });
  });

  it('email_search_emails', () => {
    const match = { email_id: 'match_01', 'inbox/outbox': 'inbox', 'sender/recipient': 'aisha.chen@atlas.com', subject: 'Matching Email Subject', sent_datetime: '2025-09-01 10:00:00', body: 'This is a test email from Aisha.' };
    const other = { email_id: 'no_match_01', 'inbox/outbox': 'inbox', 'sender/recipient': 'another.user@example.com', subject: 'Non-Matching Subject', sent_datetime: '2025-09-01 11:00:00', body: 'This email should not be found.' };
    const { call } = seeded(withTable('emails', [match, other]));
    expect(call('email_search_emails', { query: 'aisha.chen@atlas.com' })).toEqual({
      emails: [match],
      pagination: { total_emails: 1, page: 1, page_size: 5, total_pages: 1 },
    });
  });

  it('email_send_email', () => {
    const { call, env } = seeded(
      withTable('emails', [{ email_id: '123', 'inbox/outbox': 'inbox', 'sender/recipient': 'initial.user@example.com', subject: 'Initial Email', sent_datetime: '2025-01-01 12:00:00', body: 'This is a pre-existing email.' }]),
    );
    expect(call('email_send_email', { recipient: 'aisha.chen@atlas.com', subject: 'regarding something', body: 'some body' })).toBe('Email sent successfully.');
    expect(env.emails.record(1)).toEqual({ email_id: '124', 'inbox/outbox': 'outbox', 'sender/recipient': 'aisha.chen@atlas.com', subject: 'regarding something', sent_datetime: '2023-11-30 23:59:00', body: 'some body' });
  });

  it('email_delete_email', () => {
    const { call } = seeded(
      withTable('emails', [
        { email_id: '00000393', 'inbox/outbox': 'inbox', 'sender/recipient': 'user.one@example.com', subject: 'Email to be deleted', sent_datetime: '2025-01-01 12:00:00', body: 'This is a test email.' },
        { email_id: '00000123', 'inbox/outbox': 'inbox', 'sender/recipient': 'user.two@example.com', subject: 'Another Email', sent_datetime: '2025-01-01 12:05:00', body: 'This is another test email.' },
      ]),
    );
    expect(call('email_delete_email', { email_id: '00000393' })).toBe('Email deleted successfully.');
  });

  it('email_forward_email', () => {
    const { call, env } = seeded(
      withTable('emails', [{ email_id: '00000393', 'inbox/outbox': 'inbox', 'sender/recipient': 'original.sender@example.com', subject: 'Original Subject', sent_datetime: '2025-01-01 12:00:00', body: 'This is the original email body.' }]),
    );
    expect(call('email_forward_email', { email_id: '00000393', recipient: 'aisha.chen@atlas.com' })).toBe('Email forwarded successfully.');
    expect(env.emails.record(1).subject).toBe('FW: Original Subject');
  });

  it('calendar_get_event_information_by_id', () => {
    const { call } = seeded(withTable('calendar', [{ event_id: '00000013', event_name: 'Test Event', participant_email: 'test.user@example.com', event_start: '2025-09-02 10:00:00', duration: '60' }]));
    expect(call('calendar_get_event_information_by_id', { event_id: '00000013', field: 'event_id' })).toEqual({ event_id: '00000013' });
  });

  it('calendar_search_events (latest first)', () => {
    const e1 = { event_id: '00000016', event_name: 'sync up', participant_email: 'santiago.martinez@atlas.com', event_start: '2023-12-12 12:00:00', duration: '90' };
    const e2 = { event_id: '00000017', event_name: 'Team sync up', participant_email: 'aisha.chen@atlas.com', event_start: '2023-12-13 10:00:00', duration: '30' };
    const e3 = { event_id: '00000018', event_name: 'Project Deadline', participant_email: 'sam@example.com', event_start: '2023-12-14 17:00:00', duration: '5' };
    const { call } = seeded(withTable('calendar', [e1, e2, e3]));
    expect(call('calendar_search_events', { query: 'sync up' })).toEqual({
      events: [e2, e1],
      pagination: { total_events: 2, page: 1, page_size: 5, total_pages: 1 },
    });
  });

  it('calendar_delete_event', () => {
    const { call } = seeded(withTable('calendar', [{ event_id: '00000013', event_name: 'Event to Delete' }, { event_id: '00000014', event_name: 'Another Event' }]));
    expect(call('calendar_delete_event', { event_id: '00000013' })).toBe('Event deleted successfully.');
  });

  it('calendar_update_event', () => {
    const { call, env } = seeded(withTable('calendar', [{ event_id: '00000013', event_name: 'Initial Name', participant_email: 'test@example.com', event_start: '2025-01-01 10:00:00', duration: '60' }]));
    expect(call('calendar_update_event', { event_id: '00000013', field: 'duration', new_value: '100' })).toBe('Event updated successfully.');
    expect(env.calendar.record(0).duration).toBe('100');
  });

  it('analytics_engaged_users_count', () => {
    const { call } = seeded({
      ...realData(),
      analytics: frame([{ date_of_visit: '2023-10-22', visitor_id: '0860', page_views: 8, session_duration_seconds: 4, traffic_source: 'referral', user_engaged: false }]),
    });
    expect(call('analytics_engaged_users_count', { time_min: '2023-10-22', time_max: '2023-11-22' })).toEqual({ '2023-10-22': 0 });
  });

  it('analytics_get_visitor_information_by_id', () => {
    const rows = [
      { date_of_visit: '2023-10-22', visitor_id: '0860', page_views: '8', session_duration_seconds: '4', traffic_source: 'referral', user_engaged: 'False' },
      { date_of_visit: '2023-11-22', visitor_id: '4426', page_views: '3', session_duration_seconds: '12', traffic_source: 'direct', user_engaged: 'True' },
    ];
    // read_csv is mocked, reset_state is not: user_engaged becomes a bool
    const t = frame(rows);
    const { call } = seeded({ ...realData(), analytics: t.withColumn('user_engaged', t.column('user_engaged').map((v) => v === 'True')) });
    expect(call('analytics_get_visitor_information_by_id', { visitor_id: '0860' })).toEqual([{ ...rows[0], user_engaged: false }]);
  });

  it('analytics_create_plot', () => {
    const { call, env } = seeded({ ...realData(), analytics: frame([{ date_of_visit: '2023-10-22', page_views: '10', user_engaged: false }]) });
    expect(call('analytics_create_plot', { time_min: '2023-10-22', time_max: '2023-10-22', value_to_plot: 'total_visits', plot_type: 'bar' })).toBe(
      'plots/2023-10-22_2023-10-22_total_visits_bar.png',
    );
    expect(env.plots.records()).toEqual([{ file_path: 'plots/2023-10-22_2023-10-22_total_visits_bar.png' }]);
  });

  it('analytics_traffic_source_count', () => {
    const { call } = seeded({
      ...realData(),
      analytics: frame([
        { date_of_visit: '2023-10-22', traffic_source: 'referral', user_engaged: false },
        { date_of_visit: '2023-10-22', traffic_source: 'referral', user_engaged: false },
        { date_of_visit: '2023-10-22', traffic_source: 'direct', user_engaged: false },
        { date_of_visit: '2023-10-23', traffic_source: 'referral', user_engaged: false },
      ]),
    });
    expect(call('analytics_traffic_source_count', { time_min: '2023-10-22', time_max: '2023-10-22', traffic_source: 'referral' })).toEqual({ '2023-10-22': 2 });
  });

  it('analytics_total_visits_count', () => {
    const rows = [...Array.from({ length: 13 }, () => ({ date_of_visit: '2023-10-22', user_engaged: false })), ...Array.from({ length: 2 }, () => ({ date_of_visit: '2023-10-23', user_engaged: false }))];
    const { call } = seeded({ ...realData(), analytics: frame(rows) });
    expect(call('analytics_total_visits_count', { time_min: '2023-10-22', time_max: '2023-10-22' })).toEqual({ '2023-10-22': 13 });
  });

  it('analytics_get_average_session_duration', () => {
    const rows = [
      ...Array.from({ length: 12 }, () => ({ date_of_visit: '2023-10-22', session_duration_seconds: '15', user_engaged: false })),
      { date_of_visit: '2023-10-22', session_duration_seconds: '25', user_engaged: false },
      { date_of_visit: '2023-10-23', session_duration_seconds: '100', user_engaged: false },
    ];
    const { call, raw } = seeded({ ...realData(), analytics: frame(rows) });
    expect(call('analytics_get_average_session_duration', { time_min: '2023-10-22', time_max: '2023-10-22' })).toEqual({ '2023-10-22': 15.76923076923077 });
    expect(raw('analytics_get_average_session_duration', { time_min: '2023-10-23', time_max: '2023-10-23' })).toBe('{"output":{"2023-10-23":100.0}}');
  });

  it('project_management_get_task_information_by_id', () => {
    const { call } = seeded(withTable('projectTasks', [{ task_id: '00000149', task_name: 'Test Task' }]));
    expect(call('project_management_get_task_information_by_id', { task_id: '00000149', field: 'task_id' })).toEqual({ task_id: '00000149' });
  });

  it('project_management_search_tasks', () => {
    const expected = [
      { task_id: '00000149', task_name: 'Add animation to carousel', assigned_to_email: 'leila.azizi@atlas.com', list_name: 'Backlog', due_date: '2023-11-27', board: 'Front end' },
      { task_id: '00000151', task_name: 'Fix alignment issue in profile page', assigned_to_email: 'leila.azizi@atlas.com', list_name: 'Backlog', due_date: '2023-11-27', board: 'Front end' },
    ];
    const other = { task_id: '00000999', task_name: 'Irrelevant Task', assigned_to_email: 'other@user.com', list_name: 'Done', due_date: '2025-01-01', board: 'Design' };
    const { call } = seeded(withTable('projectTasks', [...expected, other]));
    expect(
      call('project_management_search_tasks', { task_name: '', assigned_to_email: 'leila.azizi@atlas.com', list_name: 'Backlog', due_date: '2023-11-27', board: 'Front end' }),
    ).toEqual(expected);
  });

  it('project_management_create_task', () => {
    const { call } = seeded(withTable('projectTasks', [{ task_id: '00000299', assigned_to_email: 'leila.azizi@atlas.com', task_name: 'Existing Task' }]));
    expect(
      call('project_management_create_task', { task_name: 'Add animation to carousel', assigned_to_email: 'leila.azizi@atlas.com', list_name: 'Backlog', due_date: '2023-11-27', board: 'Front end' }),
    ).toBe('00000300');
  });

  it('project_management_delete_task', () => {
    const { call } = seeded(withTable('projectTasks', [{ task_id: '00000149', task_name: 'A task to delete' }]));
    expect(call('project_management_delete_task', { task_id: '00000149' })).toBe('Task deleted successfully.');
  });

  it('project_management_update_task', () => {
    const { call, env } = seeded(withTable('projectTasks', [{ task_id: '00000149', task_name: 'Some Task', board: 'Front end' }]));
    expect(call('project_management_update_task', { task_id: '00000149', field: 'board', new_value: 'Design' })).toBe('Task updated successfully.');
    expect(env.projectTasks.record(0).board).toBe('Design');
  });

  it('customer_relationship_manager_search_customers', () => {
    const expected = {
      customer_id: '00000052', assigned_to_email: 'raj.patel@atlas.com', customer_name: 'Jaden White', customer_email: 'jaden.white@protracefoods',
      customer_phone: '724-857-2625', last_contact_date: '2023-11-30 23:59:00', product_interest: 'Hardware', status: 'Won',
      follow_up_by: '2023-12-13 23:59:00', notes: '2023-10-17: Had a call. ',
    };
    const { call } = seeded(withTable('crm', [expected, { customer_id: '00000999', customer_name: 'Jane Doe' }]));
    expect(
      call('customer_relationship_manager_search_customers', {
        customer_name: 'Jaden White', customer_email: 'jaden.white@protracefoods', product_interest: 'Hardware', status: 'Won',
        assigned_to_email: 'raj.patel@atlas.com', last_contact_date_min: '2023-11-30 23:59:00', last_contact_date_max: '2023-11-30 23:59:00',
        follow_up_by_min: '2023-12-13 23:5',
      }),
    ).toEqual({ customers: [expected], pagination: { total_customers: 1, page: 1, page_size: 5, total_pages: 1 } });
  });

  it('customer_relationship_manager_update_customer', () => {
    const { call } = seeded(withTable('crm', [{ customer_id: '00000189', customer_name: 'old name' }]));
    expect(call('customer_relationship_manager_update_customer', { customer_id: '00000189', field: 'customer_name', new_value: 'new customer' })).toBe('Customer updated successfully.');
  });

  it('customer_relationship_manager_add_customer', () => {
    const { call } = seeded(withTable('crm', [{ customer_id: '00000199', customer_name: 'Max ID Customer' }]));
    expect(
      call('customer_relationship_manager_add_customer', {
        customer_name: 'Some customer', product_interest: 'Hardware', status: 'Won', assigned_to_email: 'raj.patel@atlas.com',
        last_contact_date: '2023-11-30 23:59:00', follow_up_by: '2023-12-13 23:59:00', notes: 'some notes',
      }),
    ).toBe('00000200');
  });

  it('customer_relationship_manager_delete_customer', () => {
    const { call } = seeded(withTable('crm', [{ customer_id: '00000189', customer_name: 'Customer to Delete' }]));
    expect(call('customer_relationship_manager_delete_customer', { customer_id: '00000189' })).toBe('Customer deleted successfully.');
  });

  it('verify: the same reply as the ground truth scores 1.0', () => {
    const data = withTable('emails', [
      { email_id: '00000057', 'inbox/outbox': 'inbox', 'sender/recipient': 'carlos.rodriguez@atlas.com', subject: 'Task Update on Develop prototype for report generation', sent_datetime: '2023-11-29 10:00:00', body: 'Just an update.' },
    ]);
    const args = '{"email_id": "00000057", "body": "Thanks for the update - I will get back to you tomorrow."}';
    const output = [{ arguments: args, call_id: 'call_1', name: 'email_reply_email', type: 'function_call', id: 'fc_1', status: 'completed' }];
    expect(reward(data, output, [{ name: 'email_reply_email', arguments: args }])).toBe(1.0);
  });

  it('verify: delete then look up (compact vs spaced JSON) scores 1.0', () => {
    const data = withTable('emails', [
      { email_id: '00000146', 'inbox/outbox': 'inbox', 'sender/recipient': 'jane.doe@example.com', subject: 'Project Update', sent_datetime: '2025-09-22 14:30:00', body: 'Here is the project update you requested.' },
    ]);
    const output = [
      { arguments: '{"email_id":"00000146"}', call_id: 'c1', name: 'email_delete_email', type: 'function_call', id: 'c1', status: 'completed' },
      { call_id: 'c1', output: '{"output":"Email deleted successfully."}', type: 'function_call_output' },
      { arguments: '{"email_id":"00000146","field":"email_id"}', call_id: 'c2', name: 'email_get_email_information_by_id', type: 'function_call', id: 'c2', status: 'completed' },
      { call_id: 'c2', output: '{"output":"Email not found."}', type: 'function_call_output' },
    ];
    const gt = [
      { name: 'email_delete_email', arguments: '{"email_id": "00000146"}' },
      { name: 'email_get_email_information_by_id', arguments: '{"email_id": "00000146", "field": "email_id"}' },
    ];
    expect(reward(data, output, gt)).toBe(1.0);
    // and the state really changed: doing nothing does not match
    expect(reward(data, [], gt)).toBe(0.0);
  });

  it('an unexpected keyword argument gives Python\'s TypeError text', () => {
    const { call } = seeded(withTable('emails', [{ email_id: '00000057', 'sender/recipient': 'carlos.rodriguez@atlas.com', subject: 'Task Update', body: 'Just an update.' }]));
    const out = call('email_get_email_information_by_id', { email_id: '00000057', field: 'subject', useless_argument: 'this should cause an error' });
    expect(out).toBe(
      "Error executing tool 'email_get_email_information_by_id': EmailTool.get_email_information_by_id() got an unexpected keyword argument 'useless_argument'",
    );
  });
});
