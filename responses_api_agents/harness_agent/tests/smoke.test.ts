import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStubModel, type StubModel } from '../src/stub_model.js';
import { fixingScript, inProcessStack, rows, type InProcess } from './helpers.js';

let model: StubModel;
beforeAll(async () => {
  model = await startStubModel(fixingScript);
}, 60_000);
afterAll(async () => {
  await model?.close();
});
it.each(['codex', 'claude_code', 'opencode'])('%s smoke', async (preset) => {
  const stack: InProcess = await inProcessStack({ preset, model_base_url: model.url, timeout_s: 60 });
  const r = await stack.agent.post('/run', rows()[0]);
  await stack.close();
  console.log(preset, r.status, JSON.stringify(r.json.response?.output ?? r.json).slice(0, 1500), r.json.harness?.patch);
  expect(r.json.reward).toBe(1);
}, 60_000);
