import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { sharedPath } from '@nemo-gym/core/config';
import { parseVerdict, server } from '../app.js';
import { StubJudge, judgeSays, message, responseWith } from './stub-judge.js';

const configPath = fileURLToPath(new URL('../configs/equivalence_llm_judge.yaml', import.meta.url));
const shipped = (parseYaml(readFileSync(configPath, 'utf8')) as any).equivalence_llm_judge.resources_servers.equivalence_llm_judge as Record<string, unknown>;
const TEMPLATE = shipped.judge_prompt_template as string;

const judge = new StubJudge();
type App = Awaited<ReturnType<typeof server.build>>;
const apps: App[] = [];

/** Like upstream's test fixture: class defaults plus the shipped prompt template. */
async function build(overrides: Record<string, unknown> = {}, base?: Record<string, unknown>): Promise<App> {
  const config = base ?? {
    domain: 'knowledge',
    judge_model_server: { type: 'responses_api_models', name: 'judge' },
    judge_responses_create_params: { input: [] },
    judge_prompt_template: TEMPLATE,
  };
  const app = await server.build({
    config: { name: 'equivalence_llm_judge', ...config, ...overrides },
    globalConfig: { judge: { responses_api_models: { stub: { host: '127.0.0.1', port: judge.port } } } },
  });
  apps.push(app);
  return app;
}

let app: App;
beforeAll(async () => {
  await judge.start();
  app = await build();
});
afterAll(async () => {
  for (const a of apps) await a.close();
  await judge.stop();
});
beforeEach(() => judge.reset());

async function verify(a: App, body: unknown) {
  const res = await a.inject({ method: 'POST', url: '/verify', payload: body as object });
  return { status: res.statusCode, body: res.json() as Record<string, any> };
}

function request(modelText: string, expected: string | null, extra: Record<string, unknown> = {}, input: unknown = [{ role: 'user', content: 'Q: 1+1?' }]) {
  return {
    responses_create_params: { input },
    response: responseWith([message(modelText)], 'resp'),
    ...(expected === null ? {} : { expected_answer: expected }),
    ...extra,
  };
}

const fill = (q: string, e: string, g: string) => TEMPLATE.replace('{question}', q).replace('{expected_answer}', e).replace('{generated_answer}', g);

describe('verify (upstream test_app cases)', () => {
  it('equal: 1.0 with one evaluation; with the swap check, two', async () => {
    judge.reply(judgeSays('some text [[A=B]] trailing'));
    const r = await verify(app, request('It is 2.', '2'));
    expect(r.status).toBe(200);
    expect(r.body.reward).toBe(1.0);
    expect(r.body.expected_answer).toBe('2');
    expect(r.body.judge_evaluations).toHaveLength(1);
    expect(r.body.judge_evaluations[0].verdict_label).toBe('[[A=B]]');

    const twice = await build({ check_twice_swap: true });
    judge.reset();
    judge.reply(judgeSays('[[A=B]]'), judgeSays('[[A=B]]'));
    const r2 = await verify(twice, request('It is 2.', '2'));
    expect(r2.body.reward).toBe(1.0);
    expect(r2.body.judge_evaluations).toHaveLength(2);
    // the prompts follow the template, and the second one swaps the two answers
    expect(judge.prompt(0)).toBe(fill('Q: 1+1?', '2', 'It is 2.'));
    expect(judge.prompt(1)).toBe(fill('Q: 1+1?', 'It is 2.', '2'));
    expect(judge.requests[0]!.input).toHaveLength(1); // no system message by default
  });

  it('not equal: 0.0 with one evaluation', async () => {
    judge.reply(judgeSays('[[A!=B]]'));
    const r = await verify(app, request('It is 3.', '2'));
    expect(r.body.reward).toBe(0.0);
    expect(r.body.judge_evaluations).toHaveLength(1);
    expect(r.body.judge_evaluations[0].verdict_label).toBe('[[A!=B]]');
  });

  it('no label in the judge output: 0.0 and no verdict label; empty question', async () => {
    // The anchor's scoring (upstream 818984b8e): a judge answer without a verdict counts as "not equal".
    const anchor = await build({ unparseable_verdict_is_wrong: true });
    judge.reply(judgeSays('no label present'));
    const r = await verify(anchor, request('It is 2.', '2', {}, []));
    expect(r.body.reward).toBe(0.0);
    expect(r.body.judge_evaluations[0].verdict_label).toBeNull();
    expect(judge.prompt(0)).toBe(fill('', '2', 'It is 2.'));
  });

  it('no label in the judge output by default: a judge failure (502 NG_ERR_JUDGE_FAILED), not a reward', async () => {
    judge.reply(judgeSays('no label present'));
    const r = await verify(app, request('It is 2.', '2'));
    expect([r.status, r.body.code, r.body.reward]).toEqual([502, 'NG_ERR_JUDGE_FAILED', undefined]);
    expect(r.body.detail).toContain('without a verdict');
  });

  it('swap check failing gives reward_if_swap_fails', async () => {
    const a = await build({ check_twice_swap: true, reward_if_swap_fails: -1.0 });
    judge.reply(judgeSays('[[A=B]]'), judgeSays('[[A!=B]]'));
    const r = await verify(a, request('It is 2.', '2'));
    expect(r.body.reward).toBe(-1.0);
    expect(r.body.judge_evaluations.map((e: any) => e.verdict_label)).toEqual(['[[A=B]]', '[[A!=B]]']);
  });

  it('per-record regex extracts the boxed answer', async () => {
    judge.reply(judgeSays('[[A=B]]'));
    const r = await verify(app, request('Let me explain: The answer is \\boxed{4} because 2+2=4.', '4', { template_metadata: { output_regex: '\\\\boxed\\{(.*?)\\}' } }));
    expect(r.body.reward).toBe(1.0);
    expect(r.body.judge_evaluations).toHaveLength(1);
    expect(judge.requests).toHaveLength(1);
    expect(judge.prompt(0)).toBe(fill('Q: 1+1?', '4', '4'));
  });

  it('rescue: the full generation gets partial credit after a failed first pass', async () => {
    judge.reply(judgeSays('[[A!=B]]'), judgeSays('[[A=B]]'));
    const r = await verify(app, request('The result is 4', '4', { template_metadata: { output_regex: 'ANSWER:\\s*(.+)' } }));
    expect(r.body.reward).toBe(0.5);
    expect(r.body.judge_evaluations).toHaveLength(2);
    expect(judge.requests).toHaveLength(2);
  });

  it('an expected answer over the length threshold ignores the regex and skips the second call', async () => {
    const a = await build({ extraction_length_threshold: 50, check_twice_swap: true });
    const text = 'Photosynthesis is the process by which plants convert light energy into chemical energy stored in glucose.';
    judge.reply(judgeSays('[[A=B]]'));
    const r = await verify(a, request(text, text, { template_metadata: { output_regex: 'ANSWER:\\s*(.+)' } }));
    expect(r.body.reward).toBe(1.0);
    expect(judge.requests).toHaveLength(1);
    expect(judge.prompt(0)).toBe(fill('Q: 1+1?', text, text));
  });
});

describe('extraction and the answer shape', () => {
  it('echoes only upstream response keys, with the expected answer taken from metadata when absent', async () => {
    judge.reply(judgeSays('[[A=B]]'));
    const r = await verify(app, request('zero', null, { metadata: { expected_answer: 0 }, uuid: 7, question: 'x', options: [{ A: 'a' }] }));
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['expected_answer', 'judge_evaluations', 'response', 'responses_create_params', 'reward']);
    expect(r.body.expected_answer).toBe('0');
    const ev = r.body.judge_evaluations[0];
    expect(Object.keys(ev).sort()).toEqual(['response', 'responses_create_params', 'verdict_label']);
    expect(ev.responses_create_params.input).toEqual([{ content: fill('Q: 1+1?', '0', 'zero'), role: 'user', type: 'message' }]);
  });

  it('uses the last user string message, a question regex, a system message and the response regex', async () => {
    const a = await build({ judge_system_message: 'Be strict.', question_extract_regex: '^Question:\\s*(.*)$', response_extract_regex: 'Answer:\\s*(\\w+)' });
    judge.reply(judgeSays('[[A=B]]'));
    const input = [
      { role: 'user', content: 'Question: old' },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'Preamble\nQuestion: Which gas do plants absorb?\n' },
      { role: 'user', content: [{ type: 'input_text', text: 'list contents are skipped' }] },
    ];
    const r = await verify(a, request('Answer: CO2\nAnswer: carbon', 'carbon dioxide', {}, input));
    expect(r.status).toBe(200);
    expect(judge.requests[0]!.input[0]).toMatchObject({ role: 'system', content: 'Be strict.' });
    expect(judge.prompt(0)).toBe(fill('Which gas do plants absorb?', 'carbon dioxide', 'carbon'));
  });

  it('joins the text parts of the last assistant message; an invalid regex falls back to the full text', async () => {
    judge.reply(judgeSays('[[A!=B]]'), judgeSays('[[A!=B]]'));
    const response = responseWith([
      message('earlier'),
      { id: 'm2', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: ' part one', annotations: [] }, { type: 'refusal', refusal: 'no' }, { type: 'output_text', text: 'part two ', annotations: [] }] },
      { type: 'reasoning', id: 'r', summary: [] },
    ]);
    const r = await verify(app, { responses_create_params: { input: 'plain string input' }, response, expected_answer: 'x', template_metadata: { output_regex: '(unclosed' } });
    expect(r.status).toBe(200);
    expect(judge.prompt(0)).toBe(fill('', 'x', 'part one\npart two'));
    // first pass failed and a per-record regex exists: the rescue call used the full text too
    expect(judge.requests).toHaveLength(2);
  });

  it('reads the verdict from the last content part of the last output item only', () => {
    expect(parseVerdict(responseWith([message('[[A=B]]'), { type: 'reasoning', id: 'r', summary: [] }]), '[[A=B]]', '[[A!=B]]')).toEqual({ equal: false, label: null });
    expect(parseVerdict(judgeSays('[[A!=B]] then [[A=B]]'), '[[A=B]]', '[[A!=B]]')).toEqual({ equal: false, label: '[[A!=B]]' });
    expect(parseVerdict(judgeSays('[[A=B]] then [[A!=B]]'), '[[A=B]]', '[[A!=B]]')).toEqual({ equal: true, label: '[[A=B]]' });
    expect(parseVerdict(responseWith([{ type: 'message', role: 'assistant', id: 'm', status: 'completed', content: [] }]), '[[A=B]]', '[[A!=B]]')).toEqual({ equal: false, label: null });
  });
});

describe('bad input and failures', () => {
  it('answers 422 for malformed requests, never 500', async () => {
    expect((await verify(app, { response: responseWith([]) })).status).toBe(422);
    expect((await verify(app, request('a', 'b', { expected_answer: 5 }))).status).toBe(422);
    expect((await verify(app, request('a', 'b', { options: 'A' }))).status).toBe(422);
    const r = await verify(app, request('a', 'b', { template_metadata: { output_regex: 42 } }));
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body.detail)).toContain('output_regex');
    expect(judge.requests).toHaveLength(0);
  });

  it('a judge answering with an error gives 502 naming the judge server', async () => {
    judge.replyStatus(503, { error: 'overloaded' });
    const r = await verify(app, request('a', 'b'));
    expect(r.status).toBe(502);
    expect(r.body.detail).toContain('judge model server `judge`');
  });

  it('rejects a prompt template Python could not format at startup', async () => {
    await expect(build({ judge_prompt_template: 'Q: {question} {unknown}' })).rejects.toThrow(/unknown field \{unknown\}/);
    await expect(build({ judge_prompt_template: 'a } b' })).rejects.toThrow(/Single '\}'/);
    const ok = await build({ judge_prompt_template: '{{literal}} {question!r} / {generated_answer}' });
    judge.reply(judgeSays('[[A=B]]'));
    await verify(ok, request("it's", 'x', {}, [{ role: 'user', content: 'Q' }]));
    expect(judge.prompt(0)).toBe('{literal} \'Q\' / it\'s');
  });
});

const dataDir = sharedPath('upstream-data', 'equivalence_llm_judge');
const readJsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, any>);

describe.skipIf(!existsSync(join(dataDir, 'example_rollouts.jsonl')))('parity: recorded rollouts with the judge replayed', () => {
  const cases = [
    // The SciQ rollouts were recorded before the shipped config turned the swap check on.
    { inputs: 'example.jsonl', rollouts: 'example_rollouts.jsonl', overrides: { check_twice_swap: false } },
    { inputs: 'example_openqa.jsonl', rollouts: 'example_rollouts_openqa.jsonl', overrides: {} },
  ];
  for (const c of cases) {
    it(`${c.rollouts}: rewards, judge prompts, verdicts and evaluations as recorded`, async () => {
      const recorded = readJsonl(join(dataDir, c.rollouts));
      // The judge's own create params (e.g. temperature 0 for the OpenQA run) are recorded in each evaluation.
      const judgeParams: Record<string, unknown> = { input: [] };
      for (const [k, v] of Object.entries(recorded[0]!.judge_evaluations[0].responses_create_params as Record<string, unknown>)) {
        if (v !== null && k !== 'input' && !['parallel_tool_calls', 'tool_choice', 'tools'].includes(k)) judgeParams[k] = v;
      }
      const a = await build({ ...c.overrides, judge_responses_create_params: judgeParams }, { ...shipped, judge_model_server: { type: 'responses_api_models', name: 'judge' } });
      const inputs = new Map(readJsonl(join(dataDir, c.inputs)).map((r) => [r.responses_create_params.input[0].content, r]));
      let reproduced = 0;
      for (const rec of recorded) {
        judge.reset();
        const input = inputs.get(rec.responses_create_params.input[0].content)!;
        expect(input).toBeDefined();
        for (const ev of rec.judge_evaluations) judge.reply(ev.response);
        const r = await verify(a, { ...input, response: rec.response });
        expect(r.status).toBe(200);
        expect(r.body.reward).toBe(rec.reward);
        expect(r.body.expected_answer).toBe(rec.expected_answer);
        expect(r.body.judge_evaluations).toHaveLength(rec.judge_evaluations.length);
        rec.judge_evaluations.forEach((ev: any, i: number) => {
          // the judge received exactly the prompt upstream sent
          expect(judge.requests[i]!.input).toEqual(ev.responses_create_params.input);
          expect(r.body.judge_evaluations[i].verdict_label).toBe(ev.verdict_label);
          expect(r.body.judge_evaluations[i].responses_create_params).toEqual(ev.responses_create_params);
          expect(r.body.judge_evaluations[i].response.output).toEqual(ev.response.output);
        });
        expect(Object.keys(r.body).sort()).toEqual(Object.keys(rec).sort());
        reproduced++;
      }
      console.log(`equivalence_llm_judge ${c.rollouts}: ${reproduced}/${recorded.length} recorded rollouts reproduced`);
      expect(reproduced).toBe(5);
    });
  }

  it('with the shipped config (swap check on) an equal SciQ row asks the judge again with the answers swapped', async () => {
    const a = await build({}, { ...shipped, judge_model_server: { type: 'responses_api_models', name: 'judge' } });
    const inputs = readJsonl(join(dataDir, 'example.jsonl'));
    const rec = readJsonl(join(dataDir, 'example_rollouts.jsonl'))[0]!;
    const input = inputs.find((r) => r.responses_create_params.input[0].content === rec.responses_create_params.input[0].content)!;
    judge.reply(rec.judge_evaluations[0].response, judgeSays('[[A!=B]] not the same'));
    const r = await verify(a, { ...input, response: rec.response });
    expect(r.body.reward).toBe(0.0); // reward_if_swap_fails
    const first = judge.prompt(0);
    expect(first).toBe(rec.judge_evaluations[0].responses_create_params.input[0].content);
    // the inputs section is the last GOLD / CANDIDATE pair of the template
    const gold = first.split('GOLD:\n').at(-1)!.split('\n\nCANDIDATE:\n');
    const swapped = judge.prompt(1).split('GOLD:\n').at(-1)!.split('\n\nCANDIDATE:\n');
    expect(gold).toEqual([rec.expected_answer, expect.any(String)]);
    expect(swapped[0]).toBe(gold[1]);
    expect(swapped[1]).toBe(gold[0]);
  });
});

describe('our example rows', () => {
  for (const file of ['example.jsonl', 'example_openqa.jsonl']) {
    it(`${file}: 5 rows that verify with a judge that agrees`, async () => {
      const rows = readJsonl(fileURLToPath(new URL(`../data/${file}`, import.meta.url)));
      expect(rows).toHaveLength(5);
      for (const row of rows) {
        judge.reset();
        judge.reply(judgeSays('[[A=B]]'), judgeSays('[[A=B]]'));
        const r = await verify(app, { ...row, response: responseWith([message(`Final: \\boxed{${row.expected_answer}}`)]) });
        expect(r.status).toBe(200);
        expect(r.body.reward).toBe(1.0);
        expect(r.body.expected_answer).toBe(row.expected_answer);
      }
    });
  }
});
