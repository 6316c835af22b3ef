/** ng-reverify keeps an agent's mask on a sample: a new reward does not make it trainable. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@nemo-gym/core/testing';
import { reverify } from '@nemo-gym/bridge';
import { server as structured } from '../../../resources_servers/structured_outputs/app.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer(structured, { config: { name: 'structured_outputs', domain: 'instruction_following', num_workers: 1 }, listen: true });
});
afterAll(() => srv?.close());

it('a masked row stays masked with its failure_reason; an unmasked one gains no flag', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ng-reverify-masked-'));
  const response = { id: 'r', created_at: 0, model: 'm', object: 'response', output: [{ id: 'm', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: '{"a": 1}', annotations: [] }] }], parallel_tool_calls: true, tool_choice: 'auto', tools: [] };
  const row = { responses_create_params: { input: [] }, response, schema_str: '{"type": "object", "properties": {"a": {"type": "integer"}}}', schema_type: 'json', reward: 0 };
  const input = join(dir, 'in.jsonl');
  writeFileSync(input, `${JSON.stringify({ ...row, mask_sample: true, failure_reason: 'sandbox', _ng_task_index: 0, _ng_rollout_index: 0 })}\n${JSON.stringify({ ...row, _ng_task_index: 1, _ng_rollout_index: 0 })}\n`);
  const output = join(dir, 'out.jsonl');
  const s = await reverify({ input, output, target: { url: srv.url } });
  expect([s.verified, s.changed]).toEqual([2, 2]);
  const out = readFileSync(output, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(out.map((r) => [r.reward, r.mask_sample, r.failure_reason])).toEqual([
    [1, true, 'sandbox'],
    [1, undefined, undefined],
  ]);
});
