import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { server } from '../app.js';

type App = Awaited<ReturnType<typeof server.build>>;
let app: App;
beforeAll(async () => {
  app = await server.build({ config: { name: 'stateful_counter_resources_server', domain: 'agent' } });
});
afterAll(async () => {
  await app.close();
});

const rows = readFileSync(new URL('../data/example.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Record<string, any>);

describe('our example rows', () => {
  it('5 rows; doing what the prompt says reaches expected_count', async () => {
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      const seeded = await app.inject({ method: 'POST', url: '/seed_session', payload: row });
      let cookie = String(seeded.headers['set-cookie']).split(';')[0]!;
      const adds = [...(row.responses_create_params.input[0].content as string).matchAll(/add (\d+)/g)].map((m) => Number(m[1]));
      expect(adds).toHaveLength(2);
      for (const count of adds) {
        const r = await app.inject({ method: 'POST', url: '/increment_counter', payload: { count }, headers: { cookie } });
        cookie = String(r.headers['set-cookie']).split(';')[0]!;
      }
      const response = { id: 'r', created_at: 0, model: 'm', object: 'response', output: [], parallel_tool_calls: true, tool_choice: 'auto', tools: [] };
      const v = await app.inject({ method: 'POST', url: '/verify', payload: { ...row, response }, headers: { cookie } });
      expect(v.json().reward).toBe(1);
    }
  });
});
