import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NgError } from '@nemo-gym/core/errors';
import { functionCall, messageItem, modelResponse, startTestServer, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';

const dir = mkdtempSync(join(tmpdir(), 'replay-model-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const developer = { role: 'developer', content: 'You are a weather assistant.' };
const user = { role: 'user', content: 'Weather in Paris?' };
const call = functionCall('get_weather', { city: 'Paris' }, 'p1');
const toolOutput = { type: 'function_call_output', call_id: 'call_p1', output: '{"city":"Paris","weather_description":"cold"}' };
const answer = messageItem('It is cold in Paris.', { id: 'msg_final' });
const recording = {
  responses_create_params: { input: [developer, user], tools: [{ type: 'function', name: 'get_weather', parameters: {}, strict: true }] },
  response: modelResponse([call, toolOutput, answer], { id: 'resp_recorded', model: 'gpt-recorded', usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } }),
  reward: 1,
};
const recordings = join(dir, 'rollouts.jsonl');
writeFileSync(recordings, `${JSON.stringify(recording)}\n\n`);

const replay = useTestServer(server, { config: { name: 'policy_model', recordings_jsonl_fpaths: recordings } });

describe('replay_model', () => {
  it('a request whose input is a recorded prefix gets the recorded next model turn', async () => {
    const first = await replay.post('/v1/responses', { input: [developer, user] });
    expect(first.status, first.text).toBe(200);
    expect(first.json.output).toEqual([call]);
    expect(first.json.model).toBe('gpt-recorded');
    expect(first.json.id).toMatch(/^resp_replay_[0-9a-f]{32}$/);

    const second = await replay.post('/v1/responses', { input: [developer, user, call, toolOutput] });
    expect(second.status, second.text).toBe(200);
    expect(second.json.output).toEqual([answer]);
  });

  it('the request keeps its own tools, tool_choice and parallel_tool_calls', async () => {
    const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false }];
    const r = await replay.post('/v1/responses', { input: [developer, user], tools, tool_choice: 'required', parallel_tool_calls: false });
    expect([r.json.tools, r.json.tool_choice, r.json.parallel_tool_calls]).toEqual([tools, 'required', false]);
  });

  it('a tool output with other text still replays (the looser key ignores tool-output text)', async () => {
    const reformatted = { ...toolOutput, output: '{"city": "Paris", "weather_description": "cold"}' };
    const r = await replay.post('/v1/responses', { input: [developer, user, call, reformatted] });
    expect(r.status, r.text).toBe(200);
    expect(r.json.output).toEqual([answer]);
  });

  it('anything else is a 404 that says how many conversations are recorded and what did not match', async () => {
    const otherCall = { ...call, name: 'get_forecast' };
    for (const input of [[developer, { role: 'user', content: 'Weather in Rome?' }], [developer, user, otherCall, toolOutput], 'Weather in Paris?']) {
      const r = await replay.post('/v1/responses', { input });
      expect(r.status).toBe(404);
      expect(r.json.detail).toContain('no recorded conversation matches this request (1 recorded');
      expect(r.json.detail).toContain(recordings);
      expect(r.json.detail).toContain('Record this task with a real model first');
    }
    const chat = await replay.post('/v1/chat/completions', { messages: [] });
    expect(chat.status).toBe(501);
  });

  it('a recordings file that is not JSONL fails at startup with a coded error naming the line', async () => {
    const broken = join(dir, 'broken.jsonl');
    writeFileSync(broken, `${JSON.stringify(recording)}\n{not json\n`);
    const err = await startTestServer(server, { config: { name: 'policy_model', recordings_jsonl_fpaths: [broken] } }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NgError);
    expect((err as NgError).code).toBe('NG_ERR_REPLAY_RECORDINGS');
    expect((err as NgError).message).toContain(`line 2 of ${broken} is not valid JSON`);
  });
});
