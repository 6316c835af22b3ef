import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { server } from '../app.js';

type App = Awaited<ReturnType<typeof server.build>>;
let app: App;
beforeAll(async () => {
  app = await server.build({ config: { name: 'multineedle_resources_server', domain: 'instruction_following' } });
});
afterAll(async () => {
  await app.close();
});

const rows = readFileSync(new URL('../data/example.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Record<string, any>);

describe('our example rows', () => {
  it('5 rows whose expected values are what the tool answers, in list order', async () => {
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      const system = row.responses_create_params.input[0].content as string;
      const values: number[] = [];
      for (const s of row.expected_synonyms as string[]) {
        expect(system).toContain(`The term '${row.minefield_label}' has a synonym '${s}'.`);
        values.push((await app.inject({ method: 'POST', url: '/get_synonym_value', payload: { synonym: s } })).json().synonym_value);
      }
      expect(values).toEqual(row.expected_synonym_values);
      const positions = (row.expected_synonyms as string[]).map((s) => system.indexOf(`synonym '${s}'`));
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      const output = [{ type: 'function_call', name: 'extract_synonym_values', arguments: JSON.stringify({ synonym_values: values }), call_id: 'c', id: 'f', status: 'completed' }];
      const res = await app.inject({
        method: 'POST',
        url: '/verify',
        payload: { ...row, response: { id: 'r', created_at: 0, model: 'm', object: 'response', output, parallel_tool_calls: false, tool_choice: 'auto', tools: [] } },
      });
      expect(res.json().reward).toBe(1);
    }
  });
});
