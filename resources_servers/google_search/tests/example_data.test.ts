import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@nemo-gym/core/config';
import { server } from '../app.js';

type App = Awaited<ReturnType<typeof server.build>>;
let app: App;
beforeAll(async () => {
  app = await server.build({ config: { name: 'google_search', domain: 'agent', google_api_key: 'k', google_cx: 'c' } });
});
afterAll(async () => {
  await app.close();
});

const rows = readFileSync(new URL('../data/example.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Record<string, any>);

function answer(text: string) {
  return {
    id: 'r', created_at: 0, model: 'm', object: 'response', parallel_tool_calls: false, tool_choice: 'auto', tools: [],
    output: [{ id: 'm', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }],
  };
}

describe('our example rows', () => {
  it('the config names app.ts and example files that exist', () => {
    const cfg = readFileSync(new URL('../configs/google_search.yaml', import.meta.url), 'utf8');
    expect(cfg).toContain('entrypoint: app.ts');
    for (const m of cfg.matchAll(/jsonl_fpath: (resources_servers\/google_search\/data\/example\S*)/g)) expect(existsSync(`${repoRoot()}/${m[1]}`), m[1]).toBe(true);
  });

  it("5 rows whose tools are this server's routes; a boxed correct letter scores 1, a wrong one 0", async () => {
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      expect(row.responses_create_params.tools.map((t: { name: string }) => t.name)).toEqual(['search', 'browse']);
      const base = { responses_create_params: row.responses_create_params, expected_answer: row.expected_answer, task_difficulty_qwen3_32b_avg_8: row.task_difficulty_qwen3_32b_avg_8 };
      const good = await app.inject({ method: 'POST', url: '/verify', payload: { ...base, response: answer(`Checked two sources.\n\n\\boxed{${row.expected_answer}}`) } });
      expect(good.json()).toMatchObject({ reward: 1, parsed_option: row.expected_answer });
      const wrong = row.expected_answer === 'A' ? 'B' : 'A';
      const bad = await app.inject({ method: 'POST', url: '/verify', payload: { ...base, response: answer(`\\boxed{${wrong}}`) } });
      expect(bad.json()).toMatchObject({ reward: 0, parsed_option: wrong });
    }
  });
});
