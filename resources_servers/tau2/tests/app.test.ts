/** The HTTP surface: sessions, tool answers byte for byte, unknown tools, verify's components, the judge. */
import { describe, expect, it } from 'vitest';
import { globalConfigFor, startStubServer, startTestServer, textResponse, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';
import { nlUserPrompt, toMessages } from '../src/evaluate.js';
import { taskRow } from '../src/rows.js';
import { assistantSays, callItems, CONFIG, HAVE_DATA, responseWith } from './helpers.js';

const tau2 = useTestServer(server, { config: CONFIG });

describe.skipIf(!HAVE_DATA)('tau2 server', () => {
  it('a tool call without a seeded session is a 400; seeded sessions are separate', async () => {
    const none = await tau2.post('/get_user_details', { user_id: 'noah_brown_6181' });
    expect(none.status).toBe(400);
    const a = tau2.session();
    const b = tau2.session();
    await a.post('/seed_session', { task_id: '0' });
    await b.post('/seed_session', { task_id: '0' });
    const cancel = await a.post('/cancel_pending_order', { order_id: '#W2611340', reason: 'no longer needed' });
    expect(cancel.text).toBe('Error: Non-pending order cannot be cancelled');
    const user = await a.post('/find_user_id_by_email', { email: 'NOAH.brown7922@example.com' });
    expect([user.status, user.text]).toEqual([200, 'noah_brown_6181']);
    const addr = { user_id: 'noah_brown_6181', address1: '1 Elm St', address2: '', city: 'Denver', state: 'CO', country: 'USA', zip: '80202' };
    const changed = await a.post('/modify_user_address', addr);
    expect(changed.text).toContain('"address": {"address1": "1 Elm St", "address2": "", "city": "Denver", "country": "USA", "state": "CO", "zip": "80202"}');
    expect((await a.post('/get_user_details', { user_id: 'noah_brown_6181' })).text).toContain('"1 Elm St"');
    expect((await b.post('/get_user_details', { user_id: 'noah_brown_6181' })).text).toContain('"986 Sunset Drive"');
  });

  it("an unknown tool answers tau2's text; a wrong body is a 422", async () => {
    const s = tau2.session();
    await s.post('/seed_session', {});
    expect((await s.post('/think', { thought: 'x' })).text).toBe("Error: Tool 'think' not found.");
    expect((await s.post('/get_order_details', [1, 2])).status).toBe(422);
    expect((await s.post('/get_order_details', {})).text).toBe("Error: RetailTools.get_order_details() missing 1 required positional argument: 'order_id'");
  });

  it('verify: communicate checks, action checks, a premature end, and NL assertions left out without a judge', async () => {
    const { data } = tau2.context.state;
    const task = data.tasks.find((t) => (t.evaluation_criteria?.communicate_info ?? []).length > 0 && (t.evaluation_criteria?.nl_assertions ?? []).length > 0)!;
    const row = taskRow(task, data.policy);
    const s = tau2.session();
    await s.post('/seed_session', row);
    const items = [];
    for (const a of task.evaluation_criteria!.actions!) items.push(...callItems(a.name, a.arguments, (await s.post(`/${a.name}`, a.arguments)).text));
    const info = task.evaluation_criteria!.communicate_info!;
    const said = assistantSays(`Here you go: ${info.join(' and ')}.`);
    const v = await s.post('/verify', { ...row, response: responseWith([...items, said]) });
    const ri = v.json.reward_info;
    expect(ri.communicate_checks.every((c: { met: boolean }) => c.met)).toBe(true);
    expect(ri.action_checks.every((c: { action_match: boolean }) => c.action_match)).toBe(true);
    expect(ri.reward_basis).toEqual(task.evaluation_criteria!.reward_basis);
    expect(ri.reward_breakdown).toEqual({ DB: 1.0 });
    expect(ri.info.nl.note).toMatch(/no judge_model_server/);
    expect(v.json.reward).toBe(1.0);

    const silent = await tau2.post('/verify', { ...row, response: responseWith(items) });
    expect(silent.json.reward_info.communicate_checks[0]).toEqual({ info: info[0], met: false, justification: `Information '${info[0]}' not communicated.` });
    const early = await tau2.post('/verify', { ...row, termination_reason: 'max_steps', response: responseWith([...items, said]) });
    expect([early.json.reward, early.json.reward_info.info]).toEqual([0.0, { note: 'Simulation terminated prematurely. Termination reason: max_steps' }]);
  });

  it('verify with a judge: the NL assertions decide with the DB check; an unusable judge answer is a failure, not a 0', async () => {
    let verdict = true;
    let answer: string | null = null;
    let assertions: string[] = [];
    const judge = await startStubServer({
      '/v1/responses': () => {
        const results = assertions.map((a) => ({ expectedOutcome: a, reasoning: 'checked', metExpectation: verdict }));
        return { json: textResponse(answer ?? JSON.stringify({ results })) };
      },
    });
    const t = await startTestServer(server, {
      config: { ...CONFIG, judge_model_server: { type: 'responses_api_models', name: 'judge' } },
      globalConfig: globalConfigFor({ judge: { kind: 'responses_api_models', impl: 'stub', port: judge.port } }),
    });
    try {
      const { data } = t.context.state;
      const task = data.tasks.find((x) => (x.evaluation_criteria?.nl_assertions ?? []).length > 0)!;
      assertions = task.evaluation_criteria!.nl_assertions!;
      const row = taskRow(task, data.policy);
      const s = t.session();
      await s.post('/seed_session', row);
      const items = [];
      for (const a of task.evaluation_criteria!.actions!) items.push(...callItems(a.name, a.arguments, (await s.post(`/${a.name}`, a.arguments)).text));
      const body = { ...row, response: responseWith([...items, assistantSays('All done.')]) };
      const yes = await t.post('/verify', body);
      expect(yes.json.reward).toBe(1.0);
      expect(yes.json.reward_info.reward_breakdown).toEqual({ DB: 1.0, NL_ASSERTION: 1.0 });
      expect(yes.json.reward_info.nl_assertions).toHaveLength(task.evaluation_criteria!.nl_assertions!.length);
      const sent = judge.requests[0]!.body;
      expect(sent.temperature).toBe(0);
      expect(sent.input[0].content).toMatch(/^\n {8}TASK\n/);
      const input = [...(row.responses_create_params as { input: unknown[] }).input, ...(body.response.output as unknown[])];
      expect(sent.input[1].content).toBe(nlUserPrompt(toMessages(input), task.evaluation_criteria!.nl_assertions!));
      expect(sent.input[1].content).toContain('\n        assistant: Hi! How can I help you today?\nassistant: None\ntool: ');
      verdict = false;
      const no = await t.post('/verify', body);
      expect([no.json.reward, no.json.reward_info.reward_breakdown]).toEqual([0.0, { DB: 1.0, NL_ASSERTION: 0.0 }]);
      answer = 'I think it is fine';
      const bad = await t.post('/verify', body);
      expect(bad.status).toBe(502);
      expect(bad.text).toContain("the judge's answer is not JSON");
    } finally {
      await t.close();
      await judge.close();
    }
  });
});
