import { describe, expect, it } from 'vitest';
import { checkExampleData, exampleRows, functionCall, modelResponse, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';

const multineedle = useTestServer(server, { config: { name: 'multineedle_resources_server', domain: 'instruction_following' } });
const here = new URL('..', import.meta.url);
const rows = exampleRows(here);

describe('our example rows', () => {
  it('pass the example-data checks (config, 5 rows, sendable create params)', () => {
    checkExampleData(here);
  });

  it('5 rows whose expected values are what the tool answers, in list order', async () => {
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      const system = row.responses_create_params.input[0].content as string;
      const values: number[] = [];
      for (const s of row.expected_synonyms as string[]) {
        expect(system).toContain(`The term '${row.minefield_label}' has a synonym '${s}'.`);
        values.push((await multineedle.post('/get_synonym_value', { synonym: s })).json.synonym_value);
      }
      expect(values).toEqual(row.expected_synonym_values);
      const positions = (row.expected_synonyms as string[]).map((s) => system.indexOf(`synonym '${s}'`));
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      const output = [functionCall('extract_synonym_values', { synonym_values: values }, 'f')];
      const res = await multineedle.post('/verify', { ...row, response: modelResponse(output, { parallel_tool_calls: false }) });
      expect(res.json.reward).toBe(1);
    }
  });
});
