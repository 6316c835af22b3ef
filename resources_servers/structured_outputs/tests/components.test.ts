/**
 * `reward_components: true`: JSON syntax and schema conformance, summing to the unchanged reward
 * (NeMo-RL's contract), the upstream rollouts included.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core/config';
import { recordedRollouts } from '@nemo-gym/core/testing';
import { server } from '../app.js';

type App = Awaited<ReturnType<typeof server.build>>;
const SCHEMA = JSON.stringify({ type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } } });
const response = (text: string) => ({ id: 'r', created_at: 0, model: 'm', object: 'response', output: [{ id: 'm', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }], parallel_tool_calls: true, tool_choice: 'auto', tools: [] });
const body = (text: string, schema = SCHEMA) => ({ responses_create_params: { input: [] }, response: response(text), schema_str: schema, schema_type: 'json' });

let app: App;
let plain: App;
beforeAll(async () => {
  app = await server.build({ config: { name: 'so', domain: 'instruction_following', num_workers: 1, reward_components: true } });
  plain = await server.build({ config: { name: 'so', domain: 'instruction_following', num_workers: 1 } });
});
afterAll(async () => {
  await app?.close();
  await plain?.close();
});
const verify = async (a: App, b: unknown) => (await a.inject({ method: 'POST', url: '/verify', payload: b as object })).json() as Record<string, any>;

describe('structured_outputs with reward_components: true', () => {
  it('valid JSON that conforms, JSON that breaks the schema, and text that is not JSON', async () => {
    expect(await verify(app, body('{"name": "Ada", "age": 36}'))).toMatchObject({ reward: 1, reward_components: { json_syntax: 1, schema_conformance: 0 } });
    expect(await verify(app, body('{"name": "Ada", "age": "old"}'))).toMatchObject({ reward: 0, reward_components: { json_syntax: 1, schema_conformance: -1 } });
    expect(await verify(app, body('Ada, 36'))).toMatchObject({ reward: 0, reward_components: { json_syntax: 0, schema_conformance: 0 } });
    expect('reward_components' in (await verify(plain, body('Ada, 36')))).toBe(false);
  });

  const dataDir = sharedPath('upstream-data', 'structured_outputs');
  it.skipIf(!existsSync(dataDir))('keeps every recorded upstream reward; the components sum to it', async () => {
    let n = 0;
    for (const { input, recorded } of recordedRollouts(dataDir)) {
      const r = await verify(app, { ...input!, response: recorded.response });
      expect(r.reward).toBe(recorded.reward);
      expect(r.reward_components.json_syntax + r.reward_components.schema_conformance).toBe(recorded.reward);
      n++;
    }
    expect(n).toBe(5);
  });
});
