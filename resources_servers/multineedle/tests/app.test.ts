import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core/config';
import { recordedRollouts, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';
import { score, synonymValue } from '../src/score.js';

const multineedle = useTestServer(server, { config: { name: 'multineedle_resources_server', domain: 'instruction_following' } });

async function post(url: string, payload: unknown) {
  const res = await multineedle.post<Record<string, any>>(url, payload);
  return { status: res.status, json: res.json };
}

function call(name: string, args: string, id = 'fc_1') {
  return { type: 'function_call', name, arguments: args, call_id: `call_${id}`, id, status: 'completed' };
}

function verifyBody(output: unknown[], fields: Record<string, unknown> = {}) {
  return {
    responses_create_params: { input: [{ role: 'user', content: 'How hot is it?' }] },
    response: { id: 'resp_1', created_at: 1, model: 'm', object: 'response', output, parallel_tool_calls: true, tool_choice: 'auto', tools: [] },
    id: 0,
    expected_synonyms: ['Blazing', 'Warm'],
    expected_synonym_values: [711, 407],
    minefield_label: 'Hot',
    minefield_label_value: 299,
    ...fields,
  };
}

describe('tools', () => {
  it('get_synonym_value sums code points', async () => {
    expect(await post('/get_synonym_value', { synonym: 'Hot' })).toEqual({ status: 200, json: { synonym_value: 299 } });
    expect((await post('/get_synonym_value', { synonym: 'Blazing' })).json).toEqual({ synonym_value: 711 });
    // an astral character counts once, by its code point
    expect(synonymValue('a😀')).toBe(97 + 0x1f600);
  });

  it('extract_synonym_values acknowledges', async () => {
    expect(await post('/extract_synonym_values', { synonym_values: [711, '407'] })).toEqual({ status: 200, json: { success: true } });
  });

  it('tool bad input is a 422 the model can read', async () => {
    const r = await post('/get_synonym_value', { synonym: 5 });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.json.detail)).toContain('synonym');
    expect((await post('/get_synonym_value', {})).status).toBe(422);
    expect((await post('/extract_synonym_values', { synonym_values: [1.5] })).status).toBe(422);
    expect((await post('/extract_synonym_values', { synonym_values: 'x' })).status).toBe(422);
  });
});

describe('verify', () => {
  it('exact order scores 1 with full overlap', async () => {
    const { status, json } = await post('/verify', verifyBody([call('extract_synonym_values', '{"synonym_values":[711,407]}')]));
    expect(status).toBe(200);
    expect(json).toMatchObject({
      reward: 1,
      accuracy: true,
      set_overlap: 1,
      parsed_synonym_values: [711, 407],
      original_term_minefield_hit: false,
      order_instruction_following_failure: false,
    });
    expect(Object.keys(json).sort()).toEqual(
      ['accuracy', 'order_instruction_following_failure', 'original_term_minefield_hit', 'parsed_synonym_values', 'response', 'responses_create_params', 'reward', 'set_overlap'],
    );
  });

  it('reversed order scores 0 and flags an ordering failure', async () => {
    const { json } = await post('/verify', verifyBody([call('extract_synonym_values', '{"synonym_values":[407,711]}')]));
    expect(json).toMatchObject({ reward: 0, accuracy: false, set_overlap: 1, order_instruction_following_failure: true });
  });

  it('only the last extraction counts', async () => {
    const output = [call('extract_synonym_values', '{"synonym_values":[711,407]}', 'a'), call('extract_synonym_values', '{"synonym_values":[711]}', 'b')];
    const { json } = await post('/verify', verifyBody(output));
    expect(json).toMatchObject({ reward: 0, set_overlap: 0.5, parsed_synonym_values: [711] });
  });

  it('no extraction call scores 0 with an empty list', async () => {
    const { json } = await post('/verify', verifyBody([{ type: 'message', id: 'm', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done', annotations: [] }] }]));
    expect(json).toMatchObject({ reward: 0, parsed_synonym_values: [], set_overlap: 0, order_instruction_following_failure: false });
  });

  it('minefield hit by value', async () => {
    const { json } = await post('/verify', verifyBody([call('extract_synonym_values', '{"synonym_values":[711,299]}')]));
    expect(json).toMatchObject({ original_term_minefield_hit: true, set_overlap: 0.5 });
  });

  it('Python equality: 711.0 equals 711, "711" does not (but is echoed coerced)', () => {
    const float = score([call('extract_synonym_values', '{"synonym_values":[711.0,407]}')], [711, 407], 'Hot', 299);
    expect(float.reward).toBe(1);
    const str = score([call('extract_synonym_values', '{"synonym_values":["711",407]}')], [711, 407], 'Hot', 299);
    expect(str).toMatchObject({ reward: 0, accuracy: false, set_overlap: 0.5, parsed_synonym_values: [711, 407] });
  });

  it('duplicates in expected count against set_overlap like upstream', () => {
    const r = score([call('extract_synonym_values', '{"synonym_values":[5]}')], [5, 5], 'x', 1);
    expect(r.set_overlap).toBe(0.5);
  });
});

describe('verify bad input', () => {
  it('malformed arguments JSON scores 0 instead of failing', async () => {
    const { status, json } = await post('/verify', verifyBody([call('extract_synonym_values', '{"synonym_values":[711,')]));
    expect(status).toBe(200);
    expect(json).toMatchObject({ reward: 0, accuracy: false, parsed_synonym_values: [] });
  });

  it('arguments without synonym_values or with fractional values score 0', async () => {
    expect((await post('/verify', verifyBody([call('extract_synonym_values', '{"values":[711,407]}')]))).json.reward).toBe(0);
    expect((await post('/verify', verifyBody([call('extract_synonym_values', '{"synonym_values":[711.5,407]}')]))).json.reward).toBe(0);
    expect((await post('/verify', verifyBody([call('extract_synonym_values', '{"synonym_values":{"a":1}}')]))).json.reward).toBe(0);
  });

  it('missing task fields are a 422 naming each', async () => {
    const body = verifyBody([]) as Record<string, unknown>;
    delete body.minefield_label;
    delete body.expected_synonym_values;
    const { status, json } = await post('/verify', body);
    expect(status).toBe(422);
    const locs = (json.detail as { loc: string[] }[]).map((d) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.minefield_label', 'body.expected_synonym_values']));
  });

  it('empty expected list is a 422 (upstream divides by zero)', async () => {
    const { status, json } = await post('/verify', verifyBody([], { expected_synonym_values: [] }));
    expect(status).toBe(422);
    expect(JSON.stringify(json.detail)).toContain('at least one');
  });

  it('a request body that is not JSON is a 422', async () => {
    const res = await multineedle.app.inject({ method: 'POST', url: '/verify', payload: '{"id": 0, ', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(422);
    const tool = await multineedle.app.inject({ method: 'POST', url: '/get_synonym_value', payload: 'synonym=Hot', headers: { 'content-type': 'application/json' } });
    expect(tool.statusCode).toBe(422);
  });

  it('wrong types are a 422', async () => {
    expect((await post('/verify', verifyBody([], { id: 'abc' }))).status).toBe(422);
    expect((await post('/verify', verifyBody([], { expected_synonyms: 'Blazing' }))).status).toBe(422);
  });
});

const dataDir = sharedPath('upstream-data', 'multineedle');

describe.skipIf(!existsSync(dataDir))('parity with upstream recorded rollouts', () => {
  if (!existsSync(dataDir)) console.log(`skipping multineedle parity: ${dataDir} is absent`);
  it('example_rollouts.jsonl: reward and every extra field', async () => {
    const pairs = recordedRollouts(dataDir);
    let reproduced = 0;
    for (const { input, recorded: rec } of pairs) {
      expect(input).toBeDefined();
      const { status, json } = await post('/verify', { ...input!, response: rec.response });
      expect(status, JSON.stringify(json).slice(0, 500)).toBe(200);
      expect(Object.keys(json).sort()).toEqual(Object.keys(rec).sort());
      for (const k of ['reward', 'parsed_synonym_values', 'accuracy', 'set_overlap', 'original_term_minefield_hit', 'order_instruction_following_failure']) {
        expect(json[k], k).toEqual(rec[k]);
      }
      // the tool outputs the model saw are what our tools answer
      for (const item of (rec.response as { output: { type: string; name?: string; arguments?: string; call_id?: string }[] }).output) {
        if (item.type !== 'function_call') continue;
        const out = (rec.response as { output: { type: string; call_id?: string; output?: string }[] }).output.find(
          (o) => o.type === 'function_call_output' && o.call_id === item.call_id,
        );
        const tool = await post(`/${item.name}`, JSON.parse(item.arguments!));
        expect(tool.json).toEqual(JSON.parse(out!.output!));
      }
      reproduced++;
    }
    expect(reproduced).toBe(5);
    console.log(`multineedle example_rollouts.jsonl: ${reproduced}/${pairs.length} recorded rollouts reproduced`);
  });
});
