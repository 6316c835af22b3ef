import { describe, expect, it } from 'vitest';
import { checkExampleData, exampleRows, modelResponse, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';

const counter = useTestServer(server, { config: { name: 'stateful_counter_resources_server', domain: 'agent' } });
const here = new URL('..', import.meta.url);
const rows = exampleRows(here);

describe('our example rows', () => {
  it('pass the example-data checks (config, 5 rows, sendable create params)', () => {
    checkExampleData(here);
  });

  it('5 rows; doing what the prompt says reaches expected_count', async () => {
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      const session = counter.session();
      await session.post('/seed_session', row);
      const adds = [...(row.responses_create_params.input[0].content as string).matchAll(/add (\d+)/g)].map((m) => Number(m[1]));
      expect(adds).toHaveLength(2);
      for (const count of adds) await session.post('/increment_counter', { count });
      const v = await session.post('/verify', { ...row, response: modelResponse([]) });
      expect(v.json.reward).toBe(1);
    }
  });
});
