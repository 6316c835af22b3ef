import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { scoreJson } from '../src/validate.js';

// Rewards computed by upstream's scoring code with openapi-schema-validator 0.6.3 (the version
// upstream pins), recorded by fixtures/gen_schema_cases.py.
const fixture = JSON.parse(readFileSync(new URL('./fixtures/schema_cases.json', import.meta.url), 'utf8')) as {
  cases: { name: string; schema_str: string; answer: string; reward: number }[];
};

describe('JSON scoring matches the Python reference validator', () => {
  for (const c of fixture.cases) {
    it(`${c.name} -> ${c.reward}`, () => {
      const result = scoreJson(c.schema_str, c.answer);
      expect(result.reward, JSON.stringify(result)).toBe(c.reward);
    });
  }
});
