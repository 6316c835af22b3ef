import { describe, expect, it } from 'vitest';
import { checkExampleData, exampleRows, textResponse, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';

const mcqa = useTestServer(server, { config: { name: 'mcqa', domain: 'knowledge' } });
const here = new URL('..', import.meta.url);

describe('our example rows', () => {
  it('the config names app.ts and example files that exist', () => {
    checkExampleData(here);
  });

  it('example.jsonl: 5 rows; a boxed correct letter scores 1, a wrong one 0', async () => {
    const data = exampleRows(here);
    expect(data).toHaveLength(5);
    for (const row of data) {
      const good = await mcqa.post('/verify', { ...row, response: textResponse(`Reasoning...\n\\boxed{${row.expected_answer}}`) });
      expect(good.json.reward).toBe(1);
      const wrongLetter = Object.keys(row.options[0])[0] === row.expected_answer ? Object.keys(row.options[1])[0] : Object.keys(row.options[0])[0];
      const bad = await mcqa.post('/verify', { ...row, response: textResponse(`\\boxed{${wrongLetter}}`) });
      expect(bad.json.reward).toBe(0);
    }
  });

  it('example_with_template_metadata.jsonl: each row is scored through its own output_regex', async () => {
    const data = exampleRows(here, 'example_with_template_metadata.jsonl');
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
      const res = await mcqa.post('/verify', { ...row, response: textResponse(`Thinking it over.\n${reply}`) });
      expect(res.json.extracted_answer, row.template_metadata.template_id).toBe(row.expected_answer);
    }
  });
});
