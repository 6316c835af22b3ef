import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core/config';
import { server } from '../app.js';
import { boxParser, lastAssistantRepr } from '../src/verify.js';
import { pyStrRepr } from '@nemo-gym/core/py';
import { contentListRepr } from '../src/pyrepr.js';

type App = Awaited<ReturnType<typeof server.build>>;
let app: App;
beforeAll(async () => {
  app = await server.build({ config: { name: 'google_search', domain: 'agent', google_api_key: 'dummy_key', google_cx: 'dummy_cx' } });
});
afterAll(async () => {
  await app.close();
});

function response(output: unknown[]) {
  return { id: 'resp_1', created_at: 0, model: 'm', object: 'response', output, parallel_tool_calls: false, tool_choice: 'auto', tools: [] };
}
function message(...texts: string[]) {
  return { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: texts.map((text) => ({ annotations: [], text, type: 'output_text', logprobs: [] })) };
}
async function verify(output: unknown[], expected: string, extra: Record<string, unknown> = {}) {
  const res = await app.inject({
    method: 'POST',
    url: '/verify',
    payload: { responses_create_params: { input: 'Q' }, response: response(output), expected_answer: expected, task_difficulty_qwen3_32b_avg_8: 0.5, ...extra },
  });
  return { status: res.statusCode, body: res.json() as Record<string, any> };
}

describe('upstream test_app.py', () => {
  it('test_sanity: the server builds with a dummy key and cx', async () => {
    const a = await server.build({ config: { name: '', domain: 'agent', host: '0.0.0.0', port: 8080, entrypoint: '', google_api_key: 'dummy_key', google_cx: 'dummy_cx' } });
    await a.close();
  });

  it('test_box_parser_valid_content', () => {
    expect(boxParser('The answer is \\boxed{42}')).toBe('42');
    expect(boxParser('After calculation: \\boxed{x + y = 10}')).toBe('x + y = 10');
    expect(boxParser('No boxed content here')).toBeNull();
    expect(boxParser('')).toBeNull();
  });
});

describe('Python repr of the content list', () => {
  it('matches CPython repr for quotes, backslashes, newlines and non-printables', () => {
    // Expected strings are what CPython 3 prints for repr(s).
    expect(pyStrRepr("it's")).toBe(`"it's"`);
    expect(pyStrRepr(`say "hi"`)).toBe(`'say "hi"'`);
    expect(pyStrRepr(`both ' and "`)).toBe(`'both \\' and "'`);
    expect(pyStrRepr('a\\b\nc\td\re')).toBe("'a\\\\b\\nc\\td\\re'");
    expect(pyStrRepr('\x00\x7f\x85\u00a0\u200b\u2028é✓😀')).toBe("'\\x00\\x7f\\x85\\xa0\\u200b\\u2028é✓😀'");
    expect(pyStrRepr('\u{e0001}')).toBe("'\\U000e0001'");
  });

  it('prints content parts as the pydantic objects upstream holds', () => {
    expect(contentListRepr([{ type: 'output_text', text: 'The answer is \\boxed{C}', annotations: [], logprobs: [] }])).toBe(
      "[NeMoGymResponseOutputText(annotations=[], text='The answer is \\\\boxed{C}', type='output_text', logprobs=[])]",
    );
    expect(contentListRepr([{ type: 'refusal', refusal: 'no' }, { type: 'output_text', text: 'x' }])).toBe(
      "[NeMoGymResponseOutputRefusal(refusal='no', type='refusal'), NeMoGymResponseOutputText(annotations=[], text='x', type='output_text', logprobs=None)]",
    );
    expect(
      contentListRepr([
        {
          type: 'output_text',
          text: 't',
          annotations: [{ type: 'url_citation', url: 'https://a.b/{x}', title: 'T', start_index: 0, end_index: 1 }],
          logprobs: [{ token: 'a', bytes: [97], logprob: -1, top_logprobs: [{ token: 'b', bytes: [98], logprob: -2.5 }] }],
        },
      ]),
    ).toBe(
      "[NeMoGymResponseOutputText(annotations=[AnnotationURLCitation(end_index=1, start_index=0, title='T', type='url_citation', url='https://a.b/{x}')], text='t', type='output_text', " +
        "logprobs=[Logprob(token='a', bytes=[97], logprob=-1.0, top_logprobs=[LogprobTopLogprob(token='b', bytes=[98], logprob=-2.5)])])]",
    );
  });

  it('is what the regex runs on: \\boxed{\\text{B}} parses with doubled backslashes', () => {
    const s = lastAssistantRepr([message('so\n\\[\n\\boxed{\\text{B}}\n\\]')]);
    expect(boxParser(s)).toBe('\\\\text{B');
  });
});

describe('verify', () => {
  it('a boxed correct letter scores 1.0 and echoes parsed_option', async () => {
    const { status, body } = await verify([message('Reasoning.\n\n\\boxed{C}')], 'C');
    expect(status).toBe(200);
    expect(body.reward).toBe(1);
    expect(body.parsed_option).toBe('C');
    expect(Object.keys(body)).toEqual(['responses_create_params', 'response', 'reward', 'parsed_option']);
  });

  it('a wrong or differently-cased letter scores 0.0', async () => {
    expect((await verify([message('\\boxed{B}')], 'C')).body.reward).toBe(0);
    expect((await verify([message('\\boxed{c}')], 'C')).body.reward).toBe(0);
  });

  it('takes the first box across content parts, refusals included', async () => {
    const out = [{ ...message('first \\boxed{A}', 'then \\boxed{C}') }];
    expect((await verify(out, 'A')).body.parsed_option).toBe('A');
    const withRefusal = { id: 'm', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'refusal', refusal: 'I pick \\boxed{D}' }, { type: 'output_text', text: '\\boxed{C}', annotations: [] }] };
    expect((await verify([withRefusal], 'D')).body).toMatchObject({ reward: 1, parsed_option: 'D' });
  });

  it('only the last output item counts', async () => {
    const call = { type: 'function_call', call_id: 'c1', name: 'search', arguments: '{"query":"q"}', id: 'fc_1', status: 'completed' };
    const { status, body } = await verify([message('\\boxed{C}'), call], 'C');
    expect(status).toBe(200);
    expect(body).toMatchObject({ reward: 0, parsed_option: null });
  });

  it('no \\boxed{} (upstream: HTTP 500) scores 0.0 with parsed_option null; so does an empty output', async () => {
    expect(await verify([message('The answer is C.')], 'C')).toMatchObject({ status: 200, body: { reward: 0, parsed_option: null } });
    expect(await verify([], 'C')).toMatchObject({ status: 200, body: { reward: 0, parsed_option: null } });
  });

  it('expected_answer and task_difficulty_qwen3_32b_avg_8 are required (422)', async () => {
    const res = await app.inject({ method: 'POST', url: '/verify', payload: { responses_create_params: { input: 'Q' }, response: response([message('\\boxed{C}')]), expected_answer: 'C' } });
    expect(res.statusCode).toBe(422);
    expect(JSON.stringify(res.json())).toContain('task_difficulty_qwen3_32b_avg_8');
    const lax = await verify([message('\\boxed{C}')], 'C', { task_difficulty_qwen3_32b_avg_8: '0.25' });
    expect(lax.status).toBe(200);
  });
});

const ROLLOUTS = sharedPath('upstream-data', 'google_search', 'example_rollouts.jsonl');
describe('parity with upstream recorded rollouts', () => {
  const present = existsSync(ROLLOUTS);
  if (!present) console.log(`skipping google_search parity: ${ROLLOUTS} is absent (upstream reference data lives beside the repo)`);
  it.skipIf(!present)('every recorded row: same reward and parsed_option', async () => {
    const rows = readFileSync(ROLLOUTS, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, any>);
    expect(rows).toHaveLength(5);
    const examples = readFileSync(sharedPath('upstream-data', 'google_search', 'example.jsonl'), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, any>);
    let same = 0;
    for (const [i, row] of rows.entries()) {
      // The recorded rows dropped the task fields; take them from the example input of the same question.
      const task = examples.find((e) => JSON.stringify(e.responses_create_params.input) === JSON.stringify(row.responses_create_params.input));
      expect(task, `row ${i}: its example input`).toBeDefined();
      const res = await app.inject({
        method: 'POST',
        url: '/verify',
        payload: { responses_create_params: row.responses_create_params, response: row.response, expected_answer: task!.expected_answer, task_difficulty_qwen3_32b_avg_8: task!.task_difficulty_qwen3_32b_avg_8 },
      });
      expect(res.statusCode, `row ${i}`).toBe(200);
      const out = res.json() as Record<string, any>;
      expect([out.reward, out.parsed_option], `row ${i}`).toEqual([row.reward, row.parsed_option]);
      same++;
    }
    console.log(`google_search parity: ${same}/${rows.length} rows with upstream's reward and parsed_option`);
  });
});
