import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core/config';
import { recordedRollouts, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';

const CONFIG = { name: 'mcqa', domain: 'knowledge' };
const mcqa = useTestServer(server, { config: CONFIG });

function responseWith(text: string, extra: Record<string, unknown>[] = []) {
  return {
    id: 'resp_test',
    created_at: 0.0,
    model: 'dummy',
    object: 'response',
    output: [
      ...extra,
      {
        id: 'msg_test',
        content: [{ annotations: [], text, type: 'output_text' }],
        role: 'assistant',
        status: 'completed',
        type: 'message',
      },
    ],
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
  };
}

const ABCD = [{ A: 'optA' }, { B: 'optB' }, { C: 'optC' }, { D: 'optD' }];

async function verify(body: Record<string, unknown>) {
  const res = await mcqa.post<Record<string, any>>('/verify', body);
  return { status: res.status, json: res.json };
}

function row(text: string, fields: Record<string, unknown>) {
  return {
    responses_create_params: { input: [{ role: 'user', content: 'Q?\nA: optA\nB: optB\nC: optC\nD: optD' }] },
    response: responseWith(text),
    ...fields,
  };
}

describe('upstream test_app.py cases', () => {
  const cases: [string, string, Record<string, unknown>, number, string | null][] = [
    ['strict: plain text has no box', 'The answer is C.', { options: ABCD, expected_answer: 'C' }, 0.0, null],
    ['strict: padded boxed letter', 'Final: \\boxed{ [C] }', { options: ABCD, expected_answer: 'C', grading_mode: 'strict_single_letter_boxed' }, 1.0, 'C'],
    ['lenient_boxed: option text in box', 'Final: \\boxed{ optC }', { options: ABCD, expected_answer: 'C', grading_mode: 'lenient_boxed' }, 1.0, 'C'],
    ['lenient_answer_colon: lowercase letter', 'Answer: c', { options: ABCD, expected_answer: 'C', grading_mode: 'lenient_answer_colon' }, 1.0, 'C'],
    ['lenient_answer_colon: option text', 'Answer: optC', { options: ABCD, expected_answer: 'C', grading_mode: 'lenient_answer_colon' }, 1.0, 'C'],
    [
      'template regex Option Selected',
      'Option Selected: B',
      { options: ABCD, expected_answer: 'B', template_metadata: { output_regex: 'Option Selected:\\s*([A-Za-z])' } },
      1.0,
      'B',
    ],
    [
      'template regex is case-insensitive and upper-cased',
      'ANSWER IS b',
      { options: ABCD, expected_answer: 'B', template_metadata: { output_regex: 'ANSWER IS\\s*([A-Za-z])' } },
      1.0,
      'B',
    ],
    [
      'template regex takes the last match',
      'Maybe Answer: A? Let me reconsider. Final Answer: B',
      { options: ABCD, expected_answer: 'B', template_metadata: { output_regex: 'Answer:\\s*([A-Za-z])' } },
      1.0,
      'B',
    ],
    [
      'template regex has priority over grading_mode',
      'Final Choice: B',
      { options: ABCD, expected_answer: 'B', grading_mode: 'strict_single_letter_boxed', template_metadata: { output_regex: 'Final Choice:\\s*([A-Za-z])' } },
      1.0,
      'B',
    ],
    [
      'invalid template regex falls back to grading_mode',
      '\\boxed{B}',
      { options: [{ A: 'optA' }, { B: 'optB' }], expected_answer: 'B', grading_mode: 'strict_single_letter_boxed', template_metadata: { output_regex: '([' } },
      1.0,
      'B',
    ],
    [
      'template regex works without options',
      'Selected: B',
      { options: [], expected_answer: 'B', template_metadata: { output_regex: 'Selected:\\s*([A-Za-z])' } },
      1.0,
      'B',
    ],
  ];
  for (const [name, text, fields, reward, extracted] of cases) {
    it(name, async () => {
      const { status, json } = await verify(row(text, fields));
      expect(status).toBe(200);
      expect(json.reward).toBe(reward);
      expect(json.extracted_answer).toBe(extracted);
    });
  }
});

describe('verify behaviour', () => {
  it('answers with exactly the upstream key set and a normalized expected_answer', async () => {
    const { json } = await verify(row('\\boxed{C}', { options: ABCD, expected_answer: ' c ', uuid: 'u1', metadata: { x: 1 } }));
    expect(Object.keys(json).sort()).toEqual(['expected_answer', 'extracted_answer', 'response', 'responses_create_params', 'reward']);
    expect(json.expected_answer).toBe('C');
    expect(json.reward).toBe(1);
  });

  it('strict mode rejects a boxed letter that is not an option', async () => {
    const { json } = await verify(row('\\boxed{E}', { options: ABCD, expected_answer: 'E' }));
    expect(json.extracted_answer).toBeNull();
    expect(json.reward).toBe(0);
  });

  it('strict mode takes the first box, lenient_boxed needs exactly one option to match', async () => {
    expect((await verify(row('\\boxed{A} then \\boxed{B}', { options: ABCD, expected_answer: 'B' }))).json.extracted_answer).toBe('A');
    const both = await verify(row('\\boxed{optA or optB}', { options: ABCD, expected_answer: 'A', grading_mode: 'lenient_boxed' }));
    expect(both.json.extracted_answer).toBeNull();
    const wrapped = await verify(row('\\boxed{\\text{ optD }}', { options: ABCD, expected_answer: 'D', grading_mode: 'lenient_boxed' }));
    expect(wrapped.json.extracted_answer).toBe('D');
  });

  it('joins every assistant message with newlines', async () => {
    const body = row('\\boxed{D}', { options: ABCD, expected_answer: 'D', grading_mode: 'lenient_answer_colon' });
    (body.response.output as unknown[]).unshift({
      id: 'msg_0',
      content: [{ annotations: [], text: 'Answer: D', type: 'output_text' }],
      role: 'assistant',
      status: 'completed',
      type: 'message',
    });
    const { json } = await verify(body);
    expect(json.extracted_answer).toBe('D');
  });

  it('a template regex letter outside the options is trusted', async () => {
    const { json } = await verify(row('Pick: Z', { options: ABCD, expected_answer: 'Z', template_metadata: { output_regex: 'Pick: (\\w)' } }));
    expect(json.extracted_answer).toBe('Z');
    expect(json.reward).toBe(1);
  });

  it('a template regex capturing option text maps it to its letter', async () => {
    const { json } = await verify(row('Choice = optB', { options: ABCD, expected_answer: 'B', template_metadata: { output_regex: 'Choice = (\\w+)' } }));
    expect(json.extracted_answer).toBe('B');
  });

  it('accepts Python-only regex syntax in output_regex', async () => {
    const { json } = await verify(
      row('answer → c', { options: ABCD, expected_answer: 'C', template_metadata: { output_regex: '(?P<x>answer)\\s*\\→\\s*(?P<l>[a-d])(?!\\w)' } }),
    );
    // two groups: upstream cannot strip a tuple; this is a 422 with a fix-it message
    expect(json).toHaveProperty('detail');
    const single = await verify(
      row('answer → c', { options: ABCD, expected_answer: 'C', template_metadata: { output_regex: '(?:answer)\\s*\\→\\s*(?P<l>[a-d])\\Z' } }),
    );
    expect(single.json.extracted_answer).toBe('C');
  });
});

describe('bad input', () => {
  it('missing response is a 422 naming the field', async () => {
    const { status, json } = await verify({ responses_create_params: { input: 'q' }, expected_answer: 'A' });
    expect(status).toBe(422);
    expect(JSON.stringify(json.detail)).toContain('response');
  });

  it('unknown grading_mode is a 422', async () => {
    const { status, json } = await verify(row('x', { options: ABCD, expected_answer: 'A', grading_mode: 'fuzzy' }));
    expect(status).toBe(422);
    expect(JSON.stringify(json.detail)).toContain('grading_mode');
  });

  it('an option with a null text is not an allowed letter (fixed upstream after the reference commit)', async () => {
    const options = [{ A: null }, { B: 'optB' }, { C: 'optC' }];
    expect((await verify(row('\\boxed{A}', { options, expected_answer: 'A' }))).json).toMatchObject({ reward: 0, extracted_answer: null });
    expect((await verify(row('\\boxed{B}', { options, expected_answer: 'B' }))).json).toMatchObject({ reward: 1, extracted_answer: 'B' });
    expect((await verify(row('Answer: optC', { options, expected_answer: 'C', grading_mode: 'lenient_answer_colon' }))).json.reward).toBe(1);
    expect((await verify(row('x', { options: [{ A: 5 }], expected_answer: 'A' }))).status).toBe(422);
  });

  it('options of the wrong type are a 422', async () => {
    expect((await verify(row('x', { options: 'A,B', expected_answer: 'A' }))).status).toBe(422);
    expect((await verify(row('x', { options: ABCD, expected_answer: 3 }))).status).toBe(422);
  });

  it('a non-string output_regex is a 422, not a crash', async () => {
    const { status, json } = await verify(row('x', { options: ABCD, expected_answer: 'A', template_metadata: { output_regex: 5 } }));
    expect(status).toBe(422);
    expect(JSON.stringify(json.detail)).toContain('output_regex');
  });

  it('an output_regex with two groups that matches is a 422 explaining the fix', async () => {
    const { status, json } = await verify(row('Answer: B', { options: ABCD, expected_answer: 'B', template_metadata: { output_regex: '(Answer): ([A-D])' } }));
    expect(status).toBe(422);
    expect(JSON.stringify(json.detail)).toContain('(?:...)');
  });

  it('an output_regex with two groups that does not match falls back like upstream', async () => {
    const { status, json } = await verify(row('\\boxed{B}', { options: ABCD, expected_answer: 'B', template_metadata: { output_regex: '(Choice): ([A-D])' } }));
    expect(status).toBe(200);
    expect(json.reward).toBe(1);
  });

  it('an empty response output scores 0', async () => {
    const body = row('', { options: ABCD, expected_answer: 'A' });
    body.response.output = [];
    const { status, json } = await verify(body);
    expect(status).toBe(200);
    expect(json.reward).toBe(0);
    expect(json.extracted_answer).toBeNull();
  });

  it('malformed JSON body is a 422', async () => {
    const res = await mcqa.app.inject({ method: 'POST', url: '/verify', payload: '{"response": ', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(422);
  });
});

describe('dataset regexes that never finish', () => {
  // The limit also covers a replacement worker's start-up (module loading), so it is kept well
  // above that even on a loaded machine; the pattern below never finishes either way.
  const slow = useTestServer(server, { config: { ...CONFIG, num_workers: 1, grading_timeout_ms: 2500 } });

  it('a catastrophically backtracking output_regex is stopped and reported as a 422', async (ctx) => {
    if (!slow.context.state.pool.threaded) {
      console.log('skipping: mcqa is not built (run pnpm build), so grading runs inline and cannot be stopped');
      ctx.skip();
    }
    const res = await slow.app.inject({
      method: 'POST',
      url: '/verify',
      payload: row(`${'a'.repeat(40)}!`, { options: ABCD, expected_answer: 'A', template_metadata: { output_regex: '(a+)+$' } }),
    });
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('did not finish');
    // the server keeps answering
    const ok = await slow.app.inject({ method: 'POST', url: '/verify', payload: row('\\boxed{A}', { options: ABCD, expected_answer: 'A' }) });
    expect(ok.json().reward).toBe(1);
  });
});

const dataDir = sharedPath('upstream-data', 'mcqa');
const pairs: [string, string][] = [
  ['example.jsonl', 'example_rollouts.jsonl'],
  ['example_with_template_metadata.jsonl', 'example_rollouts_with_template_metadata.jsonl'],
];

describe.skipIf(!existsSync(dataDir))('parity with upstream recorded rollouts', () => {
  if (!existsSync(dataDir)) console.log(`skipping mcqa parity: ${dataDir} is absent`);
  for (const [examples, rollouts] of pairs) {
    it(`${rollouts}: every recorded reward, expected_answer and extracted_answer`, async () => {
      // Rollouts keep only the verify response; the task fields come from the matching input row.
      const pairs = recordedRollouts(dataDir, examples, rollouts);
      expect(pairs.length).toBe(5);
      let reproduced = 0;
      for (const { input, recorded: rec } of pairs) {
        expect(input).toBeDefined();
        // The input row's create params are what the agent sends; some recorded params predate the
        // current schema (null parallel_tool_calls/tool_choice) and verify never reads them.
        const { status, json } = await verify({ ...input!, response: rec.response });
        expect(status, JSON.stringify(json).slice(0, 800)).toBe(200);
        expect(json.reward).toBe(rec.reward);
        expect(json.expected_answer).toBe(rec.expected_answer);
        expect(json.extracted_answer).toBe(rec.extracted_answer);
        expect(Object.keys(json).sort()).toEqual(Object.keys(rec).sort());
        reproduced++;
      }
      console.log(`mcqa ${rollouts}: ${reproduced}/${pairs.length} recorded rollouts reproduced`);
    });
  }
});
