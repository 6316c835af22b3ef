import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core/config';
import { decodeSession } from '@nemo-gym/core/server';
import { checkExampleData, functionCall, messageItem, modelResponse, recordedRollouts, textResponse, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';

// Over HTTP on 127.0.0.1: the node:http fast path a deployed server answers on.
const weather = useTestServer(server, { config: { name: 'simple_weather', domain: 'agent' }, listen: true });

describe('get_weather', () => {
  it('answers the city and a cold description, for any city text', async () => {
    const r = await weather.post('/get_weather', { city: 'San Francisco' });
    expect(r.status).toBe(200);
    expect(r.text).toBe('{"city":"San Francisco","weather_description":"The weather in San Francisco is cold."}');
    expect((await weather.post('/get_weather', { city: 'Zürich 🏔' })).json).toEqual({ city: 'Zürich 🏔', weather_description: 'The weather in Zürich 🏔 is cold.' });
  });

  it('a missing or mistyped city is a 422 naming the field', async () => {
    const missing = await weather.post('/get_weather', {});
    expect(missing.status).toBe(422);
    expect(missing.json.detail[0]).toMatchObject({ type: 'missing', loc: ['body', 'city'] });
    const typed = await weather.post('/get_weather', { city: 3 });
    expect(typed.status).toBe(422);
    expect(typed.json.detail[0].loc).toEqual(['body', 'city']);
  });
});

describe('verify', () => {
  it('gives reward 1.0 whatever the response holds, and echoes the full dumps', async () => {
    const params = { input: [{ role: 'user', content: "what's it like in sf?" }] };
    for (const response of [textResponse('It is cold.'), modelResponse([]), modelResponse([functionCall('get_weather', { city: 'sf' })])]) {
      const r = await weather.post('/verify', { responses_create_params: params, response });
      expect(r.status).toBe(200);
      expect(r.json.reward).toBe(1);
      expect(Object.keys(r.json).sort()).toEqual(['response', 'responses_create_params', 'reward']);
      // full dumps: defaults filled in as upstream serializes them
      expect(r.json.responses_create_params.tool_choice).toBe('auto');
      expect(r.json.response.output).toHaveLength((response.output as unknown[]).length);
    }
  });

  it('a verify request without a response is a 422', async () => {
    const r = await weather.post('/verify', { responses_create_params: { input: [] } });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.json.detail)).toContain('response');
  });
});

describe('session', () => {
  it('every answer sets the signed session cookie; a session keeps its id across calls', async () => {
    const s = weather.session();
    const seeded = await s.post('/seed_session', {});
    expect([seeded.status, seeded.json]).toEqual([200, {}]);
    const first = s.cookies[weather.cookieName]!;
    expect(weather.cookieName).toBe('SimpleWeatherResourcesServer___simple_weather');
    const id = decodeSession(first, weather.cookieName);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await s.post('/get_weather', { city: 'Oslo' });
    const v = await s.post('/verify', { responses_create_params: { input: [] }, response: modelResponse([messageItem('cold')]) });
    expect(v.json.reward).toBe(1);
    expect(decodeSession(s.cookies[weather.cookieName], weather.cookieName)).toBe(id);
    // a request without the cookie starts another session
    const other = await weather.post('/get_weather', { city: 'Oslo' });
    expect(decodeSession(other.cookies[weather.cookieName], weather.cookieName)).not.toBe(id);
  });
});

describe('example data', () => {
  it('passes the example-data checks; every row verifies to 1.0 over HTTP', async () => {
    const rows = checkExampleData(new URL('..', import.meta.url));
    for (const row of rows) {
      expect(row.responses_create_params.tools.map((t: { name: string }) => t.name)).toEqual(['get_weather']);
      const r = await weather.post('/verify', { ...row, response: textResponse('Bring a coat: it is cold.') });
      expect(r.json.reward).toBe(1);
    }
  });
});

const dataDir = sharedPath('upstream-data', 'simple_weather');
describe.skipIf(!existsSync(dataDir))('parity with upstream recorded rollouts', () => {
  if (!existsSync(dataDir)) console.log(`skipping simple_weather parity: ${dataDir} is absent`);
  it('example_rollouts.jsonl: the recorded tool outputs and rewards', async () => {
    const pairs = recordedRollouts(dataDir);
    expect(pairs.length).toBe(5);
    for (const { input, recorded } of pairs) {
      expect(input).toBeDefined();
      const output = recorded.response.output as { type: string; name?: string; arguments?: string; call_id?: string; output?: string }[];
      for (const call of output.filter((o) => o.type === 'function_call')) {
        const seen = output.find((o) => o.type === 'function_call_output' && o.call_id === call.call_id)!;
        expect((await weather.post(`/${call.name}`, JSON.parse(call.arguments!))).json).toEqual(JSON.parse(seen.output!));
      }
      const v = await weather.post('/verify', { ...input!, response: recorded.response });
      expect(v.status).toBe(200);
      expect(v.json.reward).toBe(recorded.reward);
    }
  });
});
