import { describe, expect, it } from 'vitest';
import { checkExampleData, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';
import { agentSystemPrompt, FIRST_AGENT_MESSAGE, functionTools } from '../src/rows.js';
import { userScenarioText, UserScenarioSchema } from '../src/task.js';
import { assistantSays, callItems, CONFIG, HAVE_DATA, responseWith } from './helpers.js';

const here = new URL('..', import.meta.url);

describe('our example rows', () => {
  it('pass the example-data checks and have the shape of a prepared row', () => {
    const rows = checkExampleData(here);
    for (const row of rows) {
      const input = row.responses_create_params.input as { role: string; content: string }[];
      expect(input[0]!.content.startsWith(agentSystemPrompt('').split('<policy>')[0]!)).toBe(true);
      expect(input[1]).toEqual({ role: 'assistant', content: FIRST_AGENT_MESSAGE });
      expect(row.responses_create_params.tools).toEqual(functionTools());
      expect(row.user_instructions).toBe(userScenarioText(UserScenarioSchema.parse(row.user_scenario)));
    }
  });
});

describe.skipIf(!HAVE_DATA)('our example rows against the retail database', () => {
  const tau2 = useTestServer(server, { config: CONFIG });
  it('doing what each row asks scores 1.0; doing nothing scores 0.0 where a change was asked', async () => {
    for (const row of checkExampleData(here)) {
      const s = tau2.session();
      await s.post('/seed_session', row);
      const criteria = row.evaluation_criteria as { actions: { name: string; arguments: Record<string, unknown> }[]; communicate_info: string[] };
      const items = [];
      for (const a of criteria.actions) {
        const out = await s.post(`/${a.name}`, a.arguments);
        expect(out.text.startsWith('Error'), `${row.task_id} ${a.name}: ${out.text}`).toBe(false);
        items.push(...callItems(a.name, a.arguments, out.text));
      }
      const said = assistantSays(`Done. ${criteria.communicate_info.map((c) => `It was $${c}.`).join(' ')}`);
      const v = await s.post('/verify', { ...row, response: responseWith([...items, said]) });
      expect(v.json.reward, String(row.task_id)).toBe(1.0);
      const idle = await tau2.post('/verify', { ...row, response: responseWith([said]) });
      expect(idle.json.reward, String(row.task_id)).toBe(row.task_id === 'example_price' ? 1.0 : 0.0);
    }
  });
});
