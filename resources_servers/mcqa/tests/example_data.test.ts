import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@nemo-gym/core';
import { server } from '../app.js';

type App = Awaited<ReturnType<typeof server.build>>;
let app: App;
beforeAll(async () => {
  app = await server.build({ config: { name: 'mcqa', domain: 'knowledge' } });
});
afterAll(async () => {
  await app.close();
});

const rows = (file: string) =>
  readFileSync(new URL(`../data/${file}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, any>);

function answer(text: string) {
  return {
    id: 'r',
    created_at: 0,
    model: 'm',
    object: 'response',
    output: [{ id: 'm', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }],
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
  };
}

describe('our example rows', () => {
  it('the config names app.ts and example files that exist', () => {
    const cfg = readFileSync(new URL('../configs/mcqa.yaml', import.meta.url), 'utf8');
    expect(cfg).toContain('entrypoint: app.ts');
    for (const m of cfg.matchAll(/jsonl_fpath: (resources_servers\/mcqa\/data\/example\S*)/g)) {
      expect(existsSync(`${repoRoot()}/${m[1]}`), m[1]).toBe(true);
    }
  });

  it('example.jsonl: 5 rows; a boxed correct letter scores 1, a wrong one 0', async () => {
    const data = rows('example.jsonl');
    expect(data).toHaveLength(5);
    for (const row of data) {
      const good = await app.inject({ method: 'POST', url: '/verify', payload: { ...row, response: answer(`Reasoning...\n\\boxed{${row.expected_answer}}`) } });
      expect(good.json().reward).toBe(1);
      const wrongLetter = Object.keys(row.options[0])[0] === row.expected_answer ? Object.keys(row.options[1])[0] : Object.keys(row.options[0])[0];
      const bad = await app.inject({ method: 'POST', url: '/verify', payload: { ...row, response: answer(`\\boxed{${wrongLetter}}`) } });
      expect(bad.json().reward).toBe(0);
    }
  });

  it('example_with_template_metadata.jsonl: each row is scored through its own output_regex', async () => {
    const data = rows('example_with_template_metadata.jsonl');
    expect(data).toHaveLength(5);
    const replies: Record<string, (l: string) => string> = {
      tpl_option_selected: (l) => `Option Selected: ${l}`,
      tpl_answer_is: (l) => `ANSWER IS ${l}`,
      tpl_final_choice: (l) => `Final Choice: ${l.toLowerCase()}`,
      tpl_answer_colon: (l) => `Answer: ${l}`,
      tpl_boxed: (l) => `\\boxed{ ${l} }`,
    };
    for (const row of data) {
      const reply = replies[row.template_metadata.template_id]!(row.expected_answer);
      const res = await app.inject({ method: 'POST', url: '/verify', payload: { ...row, response: answer(`Thinking it over.\n${reply}`) } });
      expect(res.json().extracted_answer, row.template_metadata.template_id).toBe(row.expected_answer);
    }
  });
});
