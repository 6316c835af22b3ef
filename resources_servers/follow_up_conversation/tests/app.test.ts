import { describe, expect, it } from 'vitest';
import { checkExampleData, exampleRows, textResponse, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';
import { isRight } from '../src/script.js';

const fu = useTestServer(server, { config: { name: 'follow_up_conversation', domain: 'knowledge' } });
const here = new URL('..', import.meta.url);
const say = (text: string) => ({ responses_create_params: { input: 'q' }, response: textResponse(text) });

describe('the script', () => {
  it('an answer is right when it contains an expected phrase, ignoring case and spacing', () => {
    expect(isRight({ expect: ['New  York'] }, 'It is new york.')).toBe(true);
    expect(isRight({ expect: ['8', 'eight'] }, 'Eight legs')).toBe(true);
    expect(isRight({ expect: ['Paris'] }, 'Lyon')).toBe(false);
  });
});

describe('the conversation', () => {
  const rows = exampleRows(here);

  it('the next question depends on the answer; each right answer scores 1', async () => {
    const spider = rows.find((r) => JSON.stringify(r).includes('spider'))!;
    const right = fu.session();
    expect((await right.post('/reset', spider)).json.observation).toBeNull();
    expect((await right.post('/step', say('Eight.'))).json).toMatchObject({ observation: 'Yes. And how many does an insect have?', reward: 1, terminated: false });
    expect((await right.post('/step', say('6'))).json).toMatchObject({ observation: null, reward: 1, terminated: true, info: { right: 2, answers: [true, true] } });

    const wrong = fu.session();
    await wrong.post('/reset', spider);
    expect((await wrong.post('/step', say('Six.'))).json).toMatchObject({ observation: 'Not quite: spiders have eight. How many legs does an insect have, then?', reward: 0 });
    expect((await wrong.post('/step', say('no idea'))).json).toMatchObject({ reward: 0, terminated: true, info: { right: 0, answers: [false, false] } });
  });

  it('a closing line without a question ends the conversation and is reported', async () => {
    const france = rows.find((r) => JSON.stringify(r).includes('France'))!;
    const s = fu.session();
    await s.post('/reset', france);
    await s.post('/step', say('Paris'));
    expect((await s.post('/step', say('the Seine'))).json).toMatchObject({ terminated: true, info: { right: 2, closing: 'Correct, that is all.' } });
  });

  it('a script without the first answer fails its reset with a clear error', async () => {
    const r = await fu.post('/reset', { responses_create_params: { input: 'q' }, script: { say: 'hello' } });
    expect(r.json).toMatchObject({ code: 'NG_ERR_ENV_RESET_FAILED', detail: expect.stringContaining('first turn needs `expect`') });
  });

  it('our example rows pass the example-data checks and every row resets', async () => {
    checkExampleData(here);
    expect(rows).toHaveLength(5);
    for (const row of rows) expect((await fu.session().post('/reset', row)).status).toBe(200);
  });
});
