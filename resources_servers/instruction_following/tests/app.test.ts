import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { server } from '../app.js';
import { testNltkData, UPSTREAM_EXAMPLES, UPSTREAM_ROLLOUTS } from './helpers.js';

const dataDir = testNltkData();

type App = Awaited<ReturnType<typeof server.build>>;

function message(text: string, id = 1) {
  return {
    id: `resp_test_${id}`,
    created_at: 0.0,
    model: 'dummy',
    object: 'response',
    output: [
      {
        id: `msg_test_${id}`,
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

function request(instructionIds: unknown[], prompt: string, kwargs: unknown[], text: string, id = 1) {
  return {
    id,
    instruction_id_list: instructionIds,
    prompt,
    kwargs,
    responses_create_params: { input: [] },
    response: message(text, id),
  };
}

// Both ways of running the checks: one worker thread, and inline on the server's thread.
const MODES = [
  { mode: 'worker thread', num_workers: 1 },
  { mode: 'inline', num_workers: 0 },
] as const;

/** The pool of a built app (to tell how its checks run). */
function poolOf(app: App): { threaded: boolean } {
  return (app.ngContext.state as { pool: { threaded: boolean } }).pool;
}

describe.skipIf(!dataDir).each(MODES)('instruction_following server, checks $mode', ({ num_workers }) => {
  let app: App;

  beforeAll(async () => {
    app = await server.build({ config: { name: 'instruction_following', domain: 'instruction_following', nltk_data_dir: dataDir, num_workers } });
    if (num_workers === 0) expect(poolOf(app).threaded).toBe(false);
  });
  afterAll(async () => {
    await app?.close();
  });

  async function verify(body: unknown) {
    const res = await app.inject({ method: 'POST', url: '/verify', payload: body as object });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  }

  // The cases of upstream's tests/test_app.py.
  const upstreamCases: [string, string[], string, unknown[], string, boolean, number, boolean[]][] = [
    ['title positive', ['detectable_format:title'], 'Write the entire response with a title.', [{}], '<<My Title>>\n\nThis is the content of my response.', true, 1.0, [true]],
    ['title negative', ['detectable_format:title'], 'Write the entire response with a title.', [{}], 'This response has no title.', false, 0.0, [false]],
    ['no comma positive', ['punctuation:no_comma'], 'The output should not contain any commas.', [{}], 'Hello world without commas at all', true, 1.0, [true]],
    ['no comma negative', ['punctuation:no_comma'], 'The output should not contain any commas.', [{}], 'Hello, world with commas', false, 0.0, [false]],
    ['word count positive', ['length_constraints:number_words'], 'The response must contain at least 6 words.', [{ num_words: 6, relation: 'at least' }], 'This response has exactly six words.', true, 1.0, [true]],
    ['word count negative', ['length_constraints:number_words'], 'The response must contain at least 10 words.', [{ num_words: 10, relation: 'at least' }], 'Too short.', false, 0.0, [false]],
    ['multiple constraints positive', ['detectable_format:title', 'punctuation:no_comma'], 'Write a response with a title and no commas.', [{}, {}], '<<My Great Title>>\n\nThis is a response without any commas at all.', true, 1.0, [true, true]],
    ['multiple constraints negative', ['detectable_format:title', 'punctuation:no_comma'], 'Write a response with a title and no commas.', [{}, {}], '<<My Great Title>>\n\nThis response has commas, which should fail.', false, 0.0, [true, false]],
  ];
  for (const [name, ids, prompt, kwargs, text, all, reward, list] of upstreamCases) {
    it(`upstream case: ${name}`, async () => {
      const { status, body } = await verify(request(ids, prompt, kwargs, text));
      expect(status).toBe(200);
      expect(body.follow_all_instructions).toBe(all);
      expect(body.reward).toBe(reward);
      expect(body.follow_instruction_list).toEqual(list);
    });
  }

  it('answers with exactly upstream keys (id dropped) and echoes the task fields', async () => {
    const req = request(['punctuation:no_comma'], 'No commas.', [null], 'fine');
    const { status, body } = await verify(req);
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual([
      'responses_create_params',
      'response',
      'reward',
      'follow_all_instructions',
      'follow_instruction_list',
      'kwargs',
      'instruction_id_list',
      'prompt',
    ]);
    expect(body.kwargs).toEqual([null]);
    expect(body.prompt).toBe('No commas.');
  });

  it('scores the first content part of the last output item only', async () => {
    const req = request(['punctuation:no_comma'], 'p', [{}], 'no comma here');
    const out = req.response.output[0]!;
    out.content.push({ annotations: [], text: 'a, b', type: 'output_text' });
    let r = await verify(req);
    expect(r.body.follow_instruction_list).toEqual([true]);
    // A function call as last item: the checks run on "".
    const withCall = request(['detectable_format:title'], 'p', [{}], '<<Title>>');
    (withCall.response.output as unknown[]).push({ type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}', id: 'fc_1', status: 'completed' });
    r = await verify(withCall);
    expect(r.body.follow_instruction_list).toEqual([false]);
  });

  it('zips instructions with kwargs (shorter list wins); empty lists give reward 0', async () => {
    let r = await verify(request(['punctuation:no_comma', 'detectable_format:title'], 'p', [{}], 'x'));
    expect(r.body.follow_instruction_list).toEqual([true]);
    r = await verify(request([], 'p', [], 'x'));
    expect(r.body.follow_instruction_list).toEqual([]);
    expect(r.body.follow_all_instructions).toBe(false);
    expect(r.body.reward).toBe(0);
  });

  it('accepts every row of data/example.jsonl as a run request', async () => {
    const rows = readJsonl(new URL('../data/example.jsonl', import.meta.url).pathname);
    expect(rows.length).toBe(5);
    for (const row of rows) {
      const { status, body } = await verify({ ...row, response: message('a short answer') });
      expect(status).toBe(200);
      expect((body.follow_instruction_list as boolean[]).length).toBe((row.instruction_id_list as unknown[]).length);
    }
  });

  it('answers 422 with the field location for a malformed request', async () => {
    const bad = request(['punctuation:no_comma'], 'p', [{}], 'x') as Record<string, unknown>;
    delete bad.kwargs;
    let r = await verify(bad);
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body.detail)).toContain('kwargs');
    r = await verify({ ...request(['punctuation:no_comma'], 'p', [{}], 'x'), id: 'abc' });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body.detail)).toContain('id');
    r = await verify({ ...request(['punctuation:no_comma'], 'p', [{}], 'x'), prompt: 5 });
    expect(r.status).toBe(422);
  });

  it('survives hostile input: a megabyte of text, odd Unicode, empty output', async () => {
    const ids = [
      'length_constraints:number_sentences',
      'count:count_unique',
      'keywords:start_end',
      'language:response_language',
      'keywords:existence',
      'detectable_format:json_format',
      'change_case:capital_word_frequency',
    ];
    const kwargs = [
      { num_sentences: 3, relation: 'at least' },
      {},
      {},
      { language: 'en' },
      { keywords: ['needle'] },
      {},
      { capital_frequency: 1, capital_relation: 'at least' },
    ];
    const big = 'The quick brown fox jumps over the lazy dog. Dr. Smith said "Hi!" to U.S. officials... '.repeat(12_000);
    let r = await verify(request(ids, 'p', kwargs, big));
    expect(r.status).toBe(200);
    expect(r.body.follow_instruction_list).toEqual([true, false, false, true, false, false, true]);

    const odd = '\u0000\u202e𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \ud800 e\u0301\u0301 ﷽ 👩‍👩‍👧 \u3000 İstanbul ß'.repeat(2000);
    r = await verify(request(ids, 'p', kwargs, odd));
    expect(r.status).toBe(200);
    expect((r.body.follow_instruction_list as boolean[]).length).toBe(7);

    const empty = request(ids, 'p', kwargs, 'x');
    (empty.response as { output: unknown[] }).output = [];
    r = await verify(empty);
    expect(r.status).toBe(200);
    // "" has no sentences, tokens or JSON; langdetect finds no features (counted as followed).
    expect(r.body.follow_instruction_list).toEqual([false, true, false, true, false, false, false]);
  });
});

function readJsonl(p: string): Record<string, unknown>[] {
  return readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

if (!existsSync(UPSTREAM_ROLLOUTS)) console.log(`skipping parity: ${UPSTREAM_ROLLOUTS} is absent`);
describe.skipIf(!dataDir || !existsSync(UPSTREAM_ROLLOUTS)).each(MODES)('parity with upstream rollouts, checks $mode', ({ mode, num_workers }) => {
  let app: App;
  beforeAll(async () => {
    app = await server.build({ config: { name: 'instruction_following', domain: 'instruction_following', nltk_data_dir: dataDir, num_workers } });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('reproduces every recorded reward and follow_instruction_list', async () => {
    // Rollouts keep only the verify response; the run request (with `id`) is the example row with
    // the same prompt. Its create params are what the agent sent (the recorded dump has nulls that
    // the request schema does not take); verify never reads them.
    const inputs = new Map(readJsonl(UPSTREAM_EXAMPLES).map((r) => [r.prompt, r]));
    const rows = readJsonl(UPSTREAM_ROLLOUTS);
    expect(rows.length).toBe(5);
    let same = 0;
    for (const row of rows) {
      const input = inputs.get(row.prompt);
      expect(input).toBeDefined();
      const res = await app.inject({ method: 'POST', url: '/verify', payload: { ...input!, response: row.response } });
      expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
      const body = res.json() as Record<string, unknown>;
      expect(body.reward).toBe(row.reward);
      expect(body.follow_instruction_list).toEqual(row.follow_instruction_list);
      expect(body.follow_all_instructions).toBe(row.follow_all_instructions);
      expect(body.kwargs).toEqual(row.kwargs);
      expect(body.instruction_id_list).toEqual(row.instruction_id_list);
      expect(Object.keys(body)).toEqual(Object.keys(row));
      same++;
    }
    console.log(`instruction_following parity (checks ${mode}): ${same}/${rows.length} recorded rollouts reproduced`);
  });
});

describe.skipIf(!dataDir).each(MODES)('check time limit, checks $mode', ({ num_workers }) => {
  it('stops a catastrophic keyword regex, scores not followed, and keeps serving', async () => {
    const app = await server.build({
      config: { name: 'if', domain: 'instruction_following', nltk_data_dir: dataDir, verify_timeout_s: 0.5, num_workers },
    });
    try {
      if (num_workers > 0 && !poolOf(app).threaded) {
        console.log('skipping the worker time-limit check: checks run inline (build first: pnpm build)');
        return;
      }
      // `(a+)+$` against 40 a's and a "!" backtracks for hours: only the time limit ends it.
      const slow = request(['punctuation:no_comma', 'keywords:existence'], 'p', [{}, { keywords: ['(a+)+$'] }], `${'a'.repeat(40)}!`);
      const t0 = performance.now();
      let res = await app.inject({ method: 'POST', url: '/verify', payload: slow });
      const took = performance.now() - t0;
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ reward: 0, follow_all_instructions: false, follow_instruction_list: [false, false] });
      expect(took).toBeGreaterThanOrEqual(450);
      expect(took).toBeLessThan(15_000);
      // The same regex on a short text finishes: it is the time, not the pattern, that scored 0.
      res = await app.inject({ method: 'POST', url: '/verify', payload: request(['keywords:existence'], 'p', [{ keywords: ['(a+)+$'] }], 'aaaa') });
      expect(res.json()).toMatchObject({ reward: 1, follow_instruction_list: [true] });
      res = await app.inject({ method: 'POST', url: '/verify', payload: request(['punctuation:no_comma'], 'p', [{}], 'fine') });
      expect(res.json()).toMatchObject({ reward: 1, follow_instruction_list: [true] });
    } finally {
      await app.close();
    }
  });
});

describe.skipIf(!dataDir)('checks inline and in a worker thread', () => {
  it('give the same answers for every example row with every recorded and hostile response', async () => {
    const base = { name: 'if', domain: 'instruction_following', nltk_data_dir: dataDir };
    const worker = await server.build({ config: { ...base, num_workers: 1 } });
    const inline = await server.build({ config: { ...base, num_workers: 0 } });
    try {
      expect(poolOf(inline).threaded).toBe(false);
      const rows = readJsonl(new URL('../data/example.jsonl', import.meta.url).pathname);
      if (existsSync(UPSTREAM_EXAMPLES)) rows.push(...readJsonl(UPSTREAM_EXAMPLES));
      const texts = [
        'a short answer',
        '<<Title>>\n\nFirst paragraph, with a comma.\n\n***\n\nSecond one! P.S. bye',
        'ALL CAPS ANSWER IN ENGLISH WITHOUT ANY PUNCTUATION',
        '\u0000\u202e𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \ud800 e\u0301 ﷽ 👩‍👩‍👧 İstanbul ß',
        'Dr. Smith said "Hi!" to U.S. officials... '.repeat(200),
      ];
      const responses = texts.map((t, i) => message(t, i));
      if (existsSync(UPSTREAM_ROLLOUTS)) for (const r of readJsonl(UPSTREAM_ROLLOUTS)) responses.push(r.response as ReturnType<typeof message>);
      let compared = 0;
      let followed = 0;
      for (const row of rows) {
        for (const response of responses) {
          const payload = { ...row, response };
          const [a, b] = await Promise.all([worker, inline].map((app) => app.inject({ method: 'POST', url: '/verify', payload })));
          expect(a!.statusCode).toBe(200);
          expect(b!.json()).toEqual(a!.json());
          followed += (a!.json() as { follow_instruction_list: boolean[] }).follow_instruction_list.filter(Boolean).length;
          compared++;
        }
      }
      expect(compared).toBeGreaterThanOrEqual(25);
      // Not a comparison of empty answers: some instructions are followed, some not.
      expect(followed).toBeGreaterThan(0);
    } finally {
      await worker.close();
      await inline.close();
    }
  });

  it('default to inline checks when the replicas on the host take every core', async () => {
    // num_replicas is what ng-run passes on to each replica; 4096 replicas leave no core for a worker thread.
    const app = await server.build({ config: { name: 'if', domain: 'instruction_following', nltk_data_dir: dataDir, num_replicas: 4096 } });
    try {
      expect(poolOf(app).threaded).toBe(false);
      const res = await app.inject({ method: 'POST', url: '/verify', payload: request(['punctuation:no_comma'], 'p', [{}], 'fine') });
      expect(res.json()).toMatchObject({ reward: 1, follow_instruction_list: [true] });
    } finally {
      await app.close();
    }
  });

  it('refuse a negative or fractional num_workers, naming the key and what to use', async () => {
    const base = { name: 'if', domain: 'instruction_following', nltk_data_dir: dataDir };
    await expect(server.build({ config: { ...base, num_workers: -1 } })).rejects.toThrow(/num_workers: got -1; use 0 \(checks inline on the server's thread\) or a whole number of check worker threads/);
    await expect(server.build({ config: { ...base, num_workers: 1.5 } })).rejects.toThrow(/num_workers: got 1\.5/);
  });
});

describe.skipIf(!dataDir)('start-up with a bad langdetect_profiles_dir', () => {
  it('names the key and the folder', async () => {
    await expect(
      server.build({
        config: { name: 'if', domain: 'instruction_following', nltk_data_dir: dataDir, langdetect_profiles_dir: '/nonexistent/profiles' },
      }),
    ).rejects.toThrow(/langdetect_profiles_dir \/nonexistent\/profiles: ENOENT/);
  });
});

describe('start-up without Punkt data', () => {
  it('fails with the folders searched and how to get the data', async () => {
    const saved = { NLTK_DATA: process.env.NLTK_DATA, HOME: process.env.HOME };
    process.env.NLTK_DATA = '/nonexistent/nltk_a:/nonexistent/nltk_b';
    process.env.HOME = '/nonexistent/home';
    try {
      await expect(
        server.build({ config: { name: 'instruction_following', domain: 'instruction_following', nltk_data_dir: '/nonexistent/cfg', nltk_download: false } }),
      ).rejects.toThrow(/downloading is off[\s\S]*\/nonexistent\/cfg[\s\S]*\/nonexistent\/nltk_a[\s\S]*\/nonexistent\/nltk_b[\s\S]*punkt_tab/);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});
