/**
 * 1,000 seeded random schema/answer pairs (malformed schemas, unresolvable and dynamic references,
 * prototype names, broken regexes, extreme numbers, answers that are not JSON) through POST /verify
 * over HTTP: every one is answered 200 with a reward of 0 or 1, and none is a fault of the
 * validator (an error the Python validator would not raise).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { server } from '../app.js';
import { scoreJson } from '../src/validate.js';
import { fuzzPairs } from './fuzz/random_schema.js';

const SEED = 20261124;
const pairs = fuzzPairs(SEED, 1000);

describe(`1,000 random schema/answer pairs (seed ${SEED})`, () => {
  type App = Awaited<ReturnType<typeof server.build>>;
  let app: App;
  let url: string;
  beforeAll(async () => {
    app = await server.build({ config: { name: 'structured_outputs', domain: 'instruction_following', num_workers: 2 } });
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/verify`;
  });
  afterAll(async () => {
    await app.close();
  });

  it('scoring never faults: every 0.0 is a verdict or an error Python raises too', () => {
    const faults = pairs.map((p) => ({ p, r: scoreJson(p.schemaStr, p.answer) })).filter(({ r }) => r.stage === 'internal_error' || r.stage === 'unsupported');
    expect(faults.map(({ p, r }) => `${p.schemaStr} / ${p.answer}: ${r.message}`)).toEqual([]);
    const ones = pairs.filter((p) => scoreJson(p.schemaStr, p.answer).reward === 1).length;
    expect(ones).toBeGreaterThan(50); // the pairs are not all rejected up front
  });

  it('POST /verify answers every pair with 200 and a reward of 0 or 1', async () => {
    const wrong: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < pairs.length) {
        const p = pairs[next++]!;
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            responses_create_params: { input: [] },
            response: {
              id: 'r',
              created_at: 0,
              model: 'm',
              object: 'response',
              output: [{ id: 'm', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: p.answer, annotations: [] }] }],
              parallel_tool_calls: false,
              tool_choice: 'none',
              tools: [],
            },
            schema_str: p.schemaStr,
            schema_type: 'json',
          }),
          signal: AbortSignal.timeout(30_000),
        });
        const json = (await res.json()) as { reward?: unknown; error_message?: unknown };
        if (res.status !== 200 || (json.reward !== 0 && json.reward !== 1) || /internal error/.test(String(json.error_message ?? ''))) {
          wrong.push(`HTTP ${res.status} ${JSON.stringify(json).slice(0, 300)} for ${p.schemaStr} / ${p.answer}`);
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    expect(wrong).toEqual([]);
  }, 60_000);
});
