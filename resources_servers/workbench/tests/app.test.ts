/** The HTTP surface: sessions, the catch-all tool route, bad input (never a 500), verify. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { server } from '../app.js';
import { CSV_DIR, HAVE_DATA } from './helpers.js';

type App = Awaited<ReturnType<typeof server.build>>;
let app: App;

beforeAll(async () => {
  if (!HAVE_DATA) return;
  app = await server.build({ config: { name: 'workbench', domain: 'agent', csv_data_dir: CSV_DIR } });
});
afterAll(async () => {
  await app?.close();
});

const cookieOf = (res: { headers: Record<string, unknown> }) => String(res.headers['set-cookie']).split(';')[0]!;

async function seed(): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/seed_session', payload: {} });
  expect(res.statusCode).toBe(200);
  expect(res.json()).toEqual({});
  return cookieOf(res);
}

async function tool(cookie: string | undefined, name: string, payload: string | object) {
  const res = await app.inject({
    method: 'POST',
    url: `/${name}`,
    headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  return { status: res.statusCode, body: res.body };
}

const response = (output: unknown[]) => ({ id: 'r', created_at: 0, model: 'm', object: 'response', output, parallel_tool_calls: false, tool_choice: 'auto', tools: [] });
const fc = (name: string, args: string) => ({ type: 'function_call', name, arguments: args, call_id: `c_${name}`, id: `fc_${name}`, status: 'completed' });

describe.skipIf(!HAVE_DATA)('workbench server', () => {
  it('a tool call without a seeded session is upstream\'s 400', async () => {
    for (const name of ['email_send_email', 'no_such_tool']) {
      const r = await tool(undefined, name, {});
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body)).toEqual({ detail: 'Session not initialized. Please call seed_session first.' });
    }
  });

  it('sessions are separate and seed_session starts over', async () => {
    const a = await seed();
    const b = await seed();
    expect((await tool(a, 'email_delete_email', { email_id: '00000259' })).body).toBe('{"output":"Email deleted successfully."}');
    expect((await tool(a, 'email_delete_email', { email_id: '00000259' })).body).toBe('{"output":"Email not found."}');
    expect((await tool(b, 'email_delete_email', { email_id: '00000259' })).body).toBe('{"output":"Email deleted successfully."}');
    // seeding the same session again gives it a fresh environment
    const again = await app.inject({ method: 'POST', url: '/seed_session', payload: {}, headers: { cookie: a } });
    expect(cookieOf(again)).toBe(a);
    expect((await tool(a, 'email_delete_email', { email_id: '00000259' })).body).toBe('{"output":"Email deleted successfully."}');
  });

  it('unknown tools, bad arguments and wrong types answer upstream\'s texts with 200', async () => {
    const c = await seed();
    const cases: [string, string | object, string][] = [
      ['no_such_tool', {}, "Error executing tool 'no_such_tool': 'no_such_tool'"],
      ["it's", {}, `Error executing tool 'it's': "it's"`],
      ['email_send_email', { recipient: 'a@b.co', subject: 's', body: 'b', cc: 'x' }, "Error executing tool 'email_send_email': EmailTool.send_email() got an unexpected keyword argument 'cc'"],
      ['email_delete_email', { self: 1 }, "Error executing tool 'email_delete_email': EmailTool.delete_email() got multiple values for argument 'self'"],
      ['email_send_email', {}, 'Recipient, subject, or body not provided.'],
      ['email_send_email', { recipient: 5, subject: 's', body: 'b' }, "Error executing tool 'email_send_email': argument of type 'int' is not iterable"],
      ['email_send_email', { recipient: ['a@b.c'], subject: 's', body: 'b' }, 'Invalid recipient email address.'],
      ['email_send_email', { recipient: 'nobody', subject: 's', body: 'b' }, 'Invalid recipient email address.'],
      ['company_directory_find_email_address', { name: 7 }, "Error executing tool 'company_directory_find_email_address': 'int' object has no attribute 'lower'"],
      ['company_directory_find_email_address', { name: '(' }, "Error executing tool 'company_directory_find_email_address': missing ), unterminated subpattern at position 0"],
      ['company_directory_find_email_address', { name: null }, 'Name not provided.'],
      ['calendar_create_event', { event_name: 'x', participant_email: 'a@b.c', event_start: 'not a date', duration: '30' }, 'Invalid event_start format. Expected YYYY-MM-DD HH:MM:SS.'],
      ['calendar_create_event', { event_name: 'x', participant_email: 'a@b.c', event_start: '2023-12-01 10:00:00', duration: 'half an hour' }, 'Invalid duration format. Expected a number of minutes.'],
      ['calendar_create_event', { event_name: 'x', participant_email: 'a@b.c', event_start: '2023-12-01 10:00:00', duration: -5 }, 'Duration must be a positive number of minutes.'],
      ['calendar_create_event', { event_name: 'x', participant_email: 'a@b.c', event_start: '2023-12-01 10:00:00', duration: [30] }, "Error executing tool 'calendar_create_event': int() argument must be a string, a bytes-like object or a real number, not 'list'"],
      ['calendar_get_event_information_by_id', { event_id: 13, field: 'event_id' }, 'Invalid event ID format. Expected 8-digit ID.'],
      ['calendar_search_events', { query: 'x', time_min: 'yesterday-ish' }, 'Invalid time_min format. Expected YYYY-MM-DD HH:MM:SS.'],
      ['calendar_search_events', { query: 'zzzz-no-match' }, 'No events found.'],
      ['email_search_emails', { query: 'kofi', page_size: 0 }, 'Error searching emails: integer division or modulo by zero'],
      ['email_search_emails', { query: 'kofi', page_size: 'two' }, "Error searching emails: unsupported operand type(s) for +: 'int' and 'str'"],
      ['analytics_total_visits_count', { time_min: 20231101 }, "Error executing tool 'analytics_total_visits_count': '>=' not supported between instances of 'str' and 'int'"],
      ['customer_relationship_manager_search_customers', {}, 'No search parameters provided. Please provide at least one parameter.'],
      ['project_management_update_task', { task_id: '00000149', field: ['board'], new_value: 'Design' }, "Error executing tool 'project_management_update_task': unhashable type: 'list'"],
    ];
    for (const [name, body, expected] of cases) {
      const r = await tool(c, name, body);
      expect(r.status, `${name} ${JSON.stringify(body)}`).toBe(200);
      expect(JSON.parse(r.body), `${name} ${JSON.stringify(body)}`).toEqual({ output: expected });
    }
  });

  it('a body that is not a JSON object is a 422, malformed JSON too', async () => {
    const c = await seed();
    for (const payload of ['[1,2]', '"text"', '{"recipient": ']) {
      const r = await tool(c, 'email_send_email', payload);
      expect(r.status).toBe(422);
    }
    const r = await tool(c, 'no_such_tool', '[1]');
    expect(r.status).toBe(422);
  });

  it('verify: 1.0 for the same state, 0.0 otherwise; bad requests are 422; never a 500', async () => {
    const gt = [{ name: 'email_delete_email', arguments: '{"email_id": "00000259"}' }];
    const base = { responses_create_params: { input: [] }, ground_truth: gt, id: 1, category: 'workbench_email', environment_name: 'workbench' };
    const verify = async (body: object, cookie?: string) => {
      const res = await app.inject({ method: 'POST', url: '/verify', payload: body, headers: cookie ? { cookie } : {} });
      return { status: res.statusCode, json: res.json() as Record<string, unknown> };
    };
    const ok = await verify({ ...base, response: response([fc('email_delete_email', '{"email_id":"00000259"}')]) });
    expect(ok.status).toBe(200);
    expect(ok.json.reward).toBe(1);
    expect(Object.keys(ok.json).sort()).toEqual(['response', 'responses_create_params', 'reward']);
    const bad: [unknown[], number][] = [
      [[fc('email_delete_email', '{"email_id": "00000259"')], 0], // malformed arguments: skipped
      [[fc('email_delete_email', '["00000259"]')], 0],
      [[fc('no_such_tool', '{}'), fc('email_delete_email', '{"email_id":"00000259"}')], 1],
      [[fc('email_delete_email', '{"email_id":"00000259","extra":1}')], 0],
      [[fc('email_delete_email', '{"email_id":"00000259"}'), fc('email_delete_email', '{"email_id":"00000259"}')], 1],
      [[], 0],
    ];
    for (const [output, expected] of bad) {
      const r = await verify({ ...base, response: response(output) });
      expect(r.status, JSON.stringify(output)).toBe(200);
      expect(r.json.reward, JSON.stringify(output)).toBe(expected);
    }
    // a string ground truth replays nothing: only a state-preserving answer matches it
    expect((await verify({ ...base, ground_truth: 'email_delete_email', response: response([]) })).json.reward).toBe(1);
    expect((await verify({ ...base, ground_truth: 'x', response: response([fc('email_delete_email', '{"email_id":"00000259"}')]) })).json.reward).toBe(0);
    for (const broken of [{ ...base, ground_truth: 5 }, { ...base, id: 'x' }, { ...base, category: undefined }, { ...base, ground_truth: [{ name: 1 }] }]) {
      const r = await verify({ ...broken, response: response([]) });
      expect(r.status).toBe(422);
    }
  });

  it('verify frees the session', async () => {
    const c = await seed();
    expect((await tool(c, 'email_delete_email', { email_id: '00000259' })).status).toBe(200);
    const body = { responses_create_params: { input: [] }, response: response([]), ground_truth: [], id: 0, category: 'c', environment_name: 'workbench' };
    await app.inject({ method: 'POST', url: '/verify', payload: body, headers: { cookie: c } });
    expect((await tool(c, 'email_delete_email', { email_id: '00000259' })).status).toBe(400);
  });
});

describe.skipIf(!HAVE_DATA)('bounded sessions', () => {
  it('a session dropped for the cap answers 410 with the setting to raise, not the never-seeded 400', async () => {
    const small = await server.build({ config: { name: 'workbench', domain: 'agent', csv_data_dir: CSV_DIR, max_sessions: 1, verify_workers: 0 } });
    try {
      const first = cookieOf(await small.inject({ method: 'POST', url: '/seed_session', payload: {} }));
      await small.inject({ method: 'POST', url: '/seed_session', payload: {} });
      const res = await small.inject({ method: 'POST', url: '/email_delete_email', payload: { email_id: '00000259' }, headers: { cookie: first } });
      expect(res.statusCode).toBe(410);
      expect(res.json().detail).toMatch(/max_sessions = 1/);
    } finally {
      await small.close();
    }
  });
});
