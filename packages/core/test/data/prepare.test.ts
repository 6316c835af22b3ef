import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { diffMetrics, numericClose } from '../../src/internal/index.js';
import { findAgentDatasets, prepareData, PrepareDataError } from '../../src/data/index.js';
import { type PrepareDataOptions } from '../../src/data/prepare.js';
import { pyJsonLoads } from '../../src/py/index.js';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

function workdir(): string {
  const d = mkdtempSync(join(tmpdir(), 'ng-prep-'));
  dirs.push(d);
  mkdirSync(join(d, 'data'));
  return d;
}

const tool = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: true };
const row = (text: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ responses_create_params: { input: [{ role: 'user', content: text }], tools: [tool] }, ...extra });

function agentConfig(datasets: Record<string, unknown>[], name = 'my_agent') {
  return {
    policy_model: { responses_api_models: { openai_model: { entrypoint: 'app.ts' } } },
    [name]: { responses_api_agents: { simple_agent: { entrypoint: 'app.ts', datasets } } },
  };
}

async function run(cwd: string, config: Record<string, unknown>, extra: Partial<PrepareDataOptions> = {}) {
  const logs: string[] = [];
  const result = await prepareData(config, { mode: 'example_validation', output_dirpath: 'out', cwd, log: (t) => logs.push(t), ...extra });
  return { result, logs: logs.join('\n') };
}

describe('config handling', () => {
  it('keeps only in-scope datasets, with null gitlab identifier and license and one repeat by default', async () => {
    const cwd = workdir();
    writeFileSync(join(cwd, 'data/example.jsonl'), `${row('a')}\n`);
    const config = agentConfig([
      { name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl' },
      { name: 'train', type: 'train', jsonl_fpath: 'data/train.jsonl', license: 'MIT', gitlab_identifier: { dataset_name: 'x', version: '0.0.1', artifact_fpath: 'train.jsonl' } },
    ]);
    const { agents } = findAgentDatasets(config);
    expect(agents).toHaveLength(1);
    const { result } = await run(cwd, config);
    expect(result.datasets).toHaveLength(1);
    expect(result.datasets[0]!.dataset).toEqual({ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl', num_repeats: 1, gitlab_identifier: null, license: null });
  });

  it('fails on a missing example file', async () => {
    const cwd = workdir();
    await expect(run(cwd, agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/nope.jsonl' }]))).rejects.toThrow(
      'You must provide the above missing example jsonl files!',
    );
  });

  it('fails on a missing train file when downloads are disabled', async () => {
    const cwd = workdir();
    const config = agentConfig([
      { name: 'train', type: 'train', jsonl_fpath: 'data/train.jsonl', license: 'MIT', gitlab_identifier: { dataset_name: 'x', version: '0.0.1', artifact_fpath: 'a' } },
    ]);
    await expect(run(cwd, config, { mode: 'train_preparation' })).rejects.toThrow('Missing local datasets. You must provide local datasets since download is disabled.');
  });

  it.each([0, -1])('rejects num_repeats %i', (n) => {
    const config = agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl', num_repeats: n }]);
    expect(() => findAgentDatasets(config)).toThrow(/greater than or equal to 1/);
  });

  it('requires a license and gitlab identifier for train datasets', () => {
    const config = agentConfig([{ name: 'train', type: 'train', jsonl_fpath: 'data/train.jsonl' }]);
    expect(() => findAgentDatasets(config)).toThrow(/A license is required for train/);
  });
});

describe('validation and metrics', () => {
  it('records offending rows by index, reports line numbers and fields, and leaves them out of the metrics', async () => {
    const cwd = workdir();
    const lines = [
      'not json',
      JSON.stringify({ question: 'no params' }),
      JSON.stringify({ responses_create_params: { input: [] } }),
      JSON.stringify({ responses_create_params: { input: [{ role: 'robot', content: 'x' }] } }),
      JSON.stringify({ responses_create_params: { input: 'hi', seed: 3 } }),
      '',
      row('hello world', { score: 2 }),
    ];
    writeFileSync(join(cwd, 'data/example.jsonl'), `${lines.join('\n')}\n`);
    const { result, logs } = await run(cwd, agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl' }]), { output_dirpath: 'out' }).catch(
      (e) => {
        // collation aborts on the non-JSON lines, after the metrics were written
        expect(e).toBeInstanceOf(PrepareDataError);
        expect(String(e.message)).toMatch(/data\/example.jsonl:1: cannot collate a line that is not JSON/);
        return { result: undefined, logs: '' };
      },
    );
    expect(result).toBeUndefined();
    void logs;
    // Metrics file written in step 3.
    const metrics = pyJsonLoads(readFileSync(join(cwd, 'data/example_metrics.json'), 'utf8')) as Map<string, unknown>;
    expect(Number(metrics.get('Number of examples'))).toBe(2);
    const words = metrics.get('Json-dumped number of words (proxy for token count)') as Map<string, unknown>;
    expect(words.get('Min')).toBe(2); // {"input": []} is two words
    // Run the validation step alone to see the report.
    const { DataPrepareEngine } = await import('../../src/internal/index.js');
    const logs2: string[] = [];
    const engine = new DataPrepareEngine({ mode: 'example_validation', output_dirpath: 'out', cwd, log: (t) => logs2.push(t) });
    const state = await engine.validateDataset({ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl', num_repeats: 1, gitlab_identifier: null, license: null });
    expect(state.offendingIndexes).toEqual([0, 1, 3, 4, 5]);
    expect(state.badRows.map((b) => b.line)).toEqual([1, 2, 4, 5, 6]);
    expect(state.badRows[1]!.problems[0]!.field).toBe('responses_create_params');
    expect(state.badRows[2]!.problems[0]!.field).toBe('responses_create_params.input[0].role');
    expect(state.badRows[3]!.problems[0]!.message).toMatch(/"seed"/);
    expect(state.badRows[4]!.problems[0]!.message).toMatch(/blank line/);
  });

  it('prints every bad row with its line number', async () => {
    const cwd = workdir();
    writeFileSync(join(cwd, 'data/example.jsonl'), `${row('a')}\n${JSON.stringify({ responses_create_params: { input: [{ role: 'user' }] } })}\n`);
    const logs: string[] = [];
    await expect(
      prepareData(agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl' }]), {
        mode: 'example_validation',
        output_dirpath: 'out',
        cwd,
        log: (t) => logs.push(t),
      }),
    ).resolves.toBeDefined();
    const text = logs.join('\n');
    expect(text).toMatch(/1 invalid row\(s\) in data\/example.jsonl/);
    expect(text).toMatch(/line 2: responses_create_params\.input\[0\]\.content: /);
    expect(text).toMatch(/invalid rows were left out of the metrics .*\n- data\/example.jsonl: 1 row\(s\), first at line 2/);
  });

  it('computes the metrics of the recorded multineedle-like rows and writes only the dataset and type files', async () => {
    const cwd = workdir();
    const mk = (id: number, values: number[], label: string) =>
      JSON.stringify({ id, responses_create_params: { input: [{ role: 'user', content: 'x y' }], tools: [tool, tool], temperature: 1 }, expected_synonyms: ['Blazing', 'Warm'], expected_synonym_values: values, minefield_label: label, flag: id % 2 === 0 });
    writeFileSync(join(cwd, 'data/example.jsonl'), [mk(0, [711, 407], 'Hot'), mk(1, [711, 407], 'Hot'), mk(2, [711, 407], 'Cold')].join('\n') + '\n');
    const { result } = await run(cwd, agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl' }]));
    const text = readFileSync(join(cwd, 'data/example_metrics.json'), 'utf8');
    expect(text).toContain('"Number of tools": {\n        "Total # non-null values": 3,\n        "Average": 2.0,');
    const m = pyJsonLoads(text) as Map<string, Map<string, unknown>>;
    expect(m.get('expected_synonyms')).toEqual(new Map([['unique_count', 2n], ['total_count', 6n]]));
    expect(m.get('minefield_label')).toEqual(new Map([['unique_count', 2n], ['total_count', 3n]]));
    expect(m.get('expected_synonym_values')!.get('Average')).toBe(559);
    expect(m.get('expected_synonym_values')!.get('Standard deviation')).toBe(166.51);
    expect(m.get('flag')!.get('Average')).toBe(0.667); // booleans as 0/1, 3 decimals below 1
    expect(m.get('Temperature')!.get('Total # non-null values')).toBe(3n);
    expect([...m.keys()].slice(0, 12)).toEqual([
      'name', 'type', 'jsonl_fpath', 'num_repeats', 'gitlab_identifier', 'license', 'Number of examples', 'Number of tools',
      'Json-dumped number of words (proxy for token count)', 'Number of turns', 'Temperature', 'id',
    ]);
    expect(readdirSync(join(cwd, 'data')).sort()).toEqual(['example.jsonl', 'example_metrics.json', 'example_prepare.jsonl']);
    expect(readdirSync(join(cwd, 'out')).sort()).toEqual(['example.jsonl', 'example_metrics.json']);
    expect(result.collated.example).toBe(join(cwd, 'out/example.jsonl'));
    const typeDoc = pyJsonLoads(readFileSync(join(cwd, 'out/example_metrics.json'), 'utf8')) as Map<string, unknown>;
    expect(typeDoc.has('name')).toBe(false);
    expect(typeDoc.get('Number of examples')).toBe(3n);
  });

  it('rejects a top-level key named like a built-in metric, and mixed text/number values', async () => {
    const cwd = workdir();
    writeFileSync(join(cwd, 'data/example.jsonl'), `${row('a', { temperature: 0.5 })}\n`);
    await expect(run(cwd, agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl' }]))).rejects.toThrow(
      /data\/example.jsonl:1: top-level key "temperature"/,
    );
    writeFileSync(join(cwd, 'data/example.jsonl'), `${row('a', { k: 1 })}\n${row('b', { k: 'x' })}\n`);
    await expect(run(cwd, agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl' }]))).rejects.toThrow(
      /data\/example.jsonl:2: key "k" holds text here but numbers/,
    );
    writeFileSync(join(cwd, 'data/example.jsonl'), `${row('a', { k: 'x' })}\n${row('b', { k: true })}\n`);
    await expect(run(cwd, agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl' }]))).rejects.toThrow(
      /data\/example.jsonl:2: key "k" holds a number here but strings/,
    );
    writeFileSync(join(cwd, 'data/example.jsonl'), `${row('a', { temperature: 'hot' })}\n`);
    await expect(run(cwd, agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl' }]))).rejects.toThrow(
      /data\/example.jsonl:1: top-level key "temperature"/,
    );
  });

  it('sums datasets of one type; other metrics from the last dataset win', async () => {
    const cwd = workdir();
    writeFileSync(join(cwd, 'data/a.jsonl'), `${row('a', { s: 1, only_a: 'x' })}\n${row('b', { s: 3 })}\n`);
    writeFileSync(join(cwd, 'data/b.jsonl'), `${row('c', { s: 10 })}\n`);
    const { result } = await run(cwd, agentConfig([
      { name: 'a', type: 'example', jsonl_fpath: 'data/a.jsonl' },
      { name: 'b', type: 'example', jsonl_fpath: 'data/b.jsonl' },
    ]));
    const doc = result.typeMetrics.example!;
    expect(doc.get('Number of examples')).toBe(3);
    const s = doc.get('s') as Map<string, { value: number } | number>;
    expect(s.get('Total # non-null values')).toBe(1);
    expect(doc.has('only_a')).toBe(true);
    const words = doc.get('Json-dumped number of words (proxy for token count)') as Map<string, unknown>;
    expect(words.get('Total # non-null values')).toBe(3);
  });
});

describe('word counts follow the validated dump', () => {
  it('drops unknown keys inside items, content parts and function tools, keeps explicit nulls', async () => {
    const { sampleMetrics } = await import('../../src/data/index.js'); const { createParamsDump } = await import('../../src/internal/index.js');
    const params = {
      input: [
        { role: 'user', content: 'hi there', extra_note: 'dropped words here' },
        { role: 'user', type: 'message', content: [{ type: 'input_text', text: 'a', cache: 'x y z' }] },
        { type: 'function_call_output', call_id: 'c', output: 'o', note: 'n n' },
      ],
      tools: [{ type: 'function', name: 'f', parameters: {}, strict: true, description: 'd', meta: 'a b c' }],
      temperature: 1,
      instructions: null,
    };
    const dump = createParamsDump(params);
    expect(dump).toEqual({
      input: [
        { role: 'user', content: 'hi there' },
        { role: 'user', type: 'message', content: [{ type: 'input_text', text: 'a' }] },
        { type: 'function_call_output', call_id: 'c', output: 'o' },
      ],
      tools: [{ type: 'function', name: 'f', parameters: {}, strict: true, description: 'd' }],
      temperature: 1,
      instructions: null,
    });
    const m = sampleMetrics(params);
    expect(m).toEqual({ tools: 1, turns: 2, temperature: 1, words: m.words });
    // {"input": [{"role": "user", "content": "hi there"}, ...] ...} counted on the pruned dump
    const { countDumpWords } = await import('../../src/internal/index.js');
    expect(m.words).toBe(countDumpWords(dump));
    expect(m.words).toBeLessThan(countDumpWords(params));
  });

  it('a string input is one turn; an explicit empty tools list observes 0 tools', async () => {
    const { sampleMetrics } = await import('../../src/data/index.js');
    expect(sampleMetrics({ input: 'x', tools: [] })).toEqual({ tools: 0, turns: 1, temperature: undefined, words: 4 });
    expect(sampleMetrics({ input: [] })).toEqual({ tools: undefined, turns: undefined, temperature: undefined, words: 2 });
  });
});

describe('output folder and downloads', () => {
  it('explains a missing parent of output_dirpath', async () => {
    const cwd = workdir();
    writeFileSync(join(cwd, 'data/example.jsonl'), `${row('a')}\n`);
    await expect(run(cwd, agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl' }]), { output_dirpath: 'no/such/out' })).rejects.toThrow(
      /parent folder .*no\/such does not exist/,
    );
  });

  it('downloads missing train datasets through the given registry client, then prepares them', async () => {
    const cwd = workdir();
    const fetched: string[] = [];
    const config = agentConfig([
      { name: 'train', type: 'train', jsonl_fpath: 'data/sub/train.jsonl', license: 'MIT', gitlab_identifier: { dataset_name: 'x', version: '0.0.1', artifact_fpath: 'train.jsonl' } },
    ]);
    const { result } = await run(cwd, config, {
      mode: 'train_preparation',
      should_download: true,
      download: async (d, abs) => {
        fetched.push(`${d.gitlab_identifier!.dataset_name}@${d.gitlab_identifier!.version}`);
        writeFileSync(abs, `${row('downloaded')}\n`);
      },
    });
    expect(fetched).toEqual(['x@0.0.1']);
    expect(result.collated.train).toBe(join(cwd, 'out/train.jsonl'));
    expect(readFileSync(join(cwd, 'out/train.jsonl'), 'utf8')).toContain('"downloaded"');
    await expect(run(workdir(), config, { mode: 'train_preparation', should_download: true })).rejects.toThrow(/no dataset registry is configured/);
  });
});

describe('repeats and collation', () => {
  it('repeats each line consecutively, counts offending indexes with repeats, and writes 6 lines for 2 x 3', async () => {
    const cwd = workdir();
    writeFileSync(join(cwd, 'data/example.jsonl'), `${row('first')}\n${JSON.stringify({ nope: 1 })}\n`);
    const { DataPrepareEngine } = await import('../../src/internal/index.js');
    const engine = new DataPrepareEngine({ mode: 'example_validation', output_dirpath: 'out', cwd, log: () => {} });
    const state = await engine.validateDataset({ name: 'e', type: 'example', jsonl_fpath: 'data/example.jsonl', num_repeats: 2, gitlab_identifier: null, license: null });
    expect(state.offendingIndexes).toEqual([2, 3]);
    expect(state.validRows).toBe(2);

    writeFileSync(join(cwd, 'data/example.jsonl'), `${row('first')}\n${row('second')}\n`);
    await run(cwd, agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl', num_repeats: 3 }]));
    const out = readFileSync(join(cwd, 'out/example.jsonl'), 'utf8').trimEnd().split('\n');
    expect(out).toHaveLength(6);
    expect(out.map((l) => (JSON.parse(l) as { responses_create_params: { input: { content: string }[] } }).responses_create_params.input[0]!.content)).toEqual([
      'first', 'first', 'first', 'second', 'second', 'second',
    ]);
    const metrics = pyJsonLoads(readFileSync(join(cwd, 'data/example_metrics.json'), 'utf8')) as Map<string, unknown>;
    expect(metrics.get('Number of examples')).toBe(6n);
    expect(metrics.get('num_repeats')).toBe(3n);
  });

  it('re-serializes rows Python-style with agent_ref last, or in place when present', async () => {
    const cwd = workdir();
    const lines = [
      '{"responses_create_params": {"input": "h\\u00e9llo ✓"}, "x": 1.0, "big": 123456789012345678901234567890, "e": 1e5}',
      '{"agent_ref": {"type": "responses_api_agents", "name": "old"}, "responses_create_params": {"input": "b"}, "1": 2}',
    ];
    writeFileSync(join(cwd, 'data/example.jsonl'), lines.join('\r\n'));
    await run(cwd, agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl' }], 'judge_agent'));
    const out = readFileSync(join(cwd, 'data/example_prepare.jsonl'), 'utf8');
    expect(out).toBe(
      '{"responses_create_params": {"input": "h\\u00e9llo \\u2713"}, "x": 1.0, "big": 123456789012345678901234567890, "e": 100000.0, "agent_ref": {"type": "responses_api_agents", "name": "judge_agent"}}\n' +
        '{"agent_ref": {"type": "responses_api_agents", "name": "judge_agent"}, "responses_create_params": {"input": "b"}, "1": 2}\n',
    );
    expect(readFileSync(join(cwd, 'out/example.jsonl'), 'utf8')).toBe(out);
  });

  it('reproduces the recorded prepared file of equivalence_llm_judge', async () => {
    const upstream = resolve(__dirname, '../../../../../shared/upstream-data/equivalence_llm_judge');
    if (!existsSync(join(upstream, 'example_prepare.jsonl'))) {
      console.log('skipping: upstream example_prepare.jsonl not found');
      return;
    }
    const cwd = workdir();
    writeFileSync(join(cwd, 'data/example.jsonl'), readFileSync(join(upstream, 'example.jsonl')));
    await run(cwd, agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl' }], 'equivalence_llm_judge_simple_agent'));
    expect(readFileSync(join(cwd, 'data/example_prepare.jsonl'), 'utf8')).toBe(readFileSync(join(upstream, 'example_prepare.jsonl'), 'utf8'));
  });
});

describe('conflicts', () => {
  it('an extra key in the old dataset metrics writes <stem>_metrics_conflict.json and fails', async () => {
    const cwd = workdir();
    writeFileSync(join(cwd, 'data/example.jsonl'), `${row('a')}\n`);
    const config = agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl' }]);
    await run(cwd, config);
    const path = join(cwd, 'data/example_metrics.json');
    const first = readFileSync(path, 'utf8');
    // A rerun on identical data is clean.
    await run(cwd, config);
    writeFileSync(path, first.replace('{\n', '{\n    "extra": 1,\n'));
    const err = await run(cwd, config).catch((e: unknown) => e as PrepareDataError);
    expect(err).toBeInstanceOf(PrepareDataError);
    expect((err as PrepareDataError).message).toBe(
      `\nFound conflicting aggregate metrics that need to be corrected:\n- ${join(cwd, 'data/example_metrics_conflict.json')}\n\n` +
        'This could be due to a change in how metrics are calculated, leading to outdated metrics. Try deleting the below file(s) and rerunning data preparation:\n' +
        `- ${path}\n`,
    );
    expect(readFileSync(join(cwd, 'data/example_metrics_conflict.json'), 'utf8')).toBe(first);
  });

  it('a type-level conflict writes only the conflict file and collates nothing', async () => {
    const cwd = workdir();
    writeFileSync(join(cwd, 'data/example.jsonl'), `${row('a')}\n`);
    mkdirSync(join(cwd, 'out'));
    writeFileSync(join(cwd, 'out/example_metrics.json'), '{"Number of examples": 7}');
    const err = await run(cwd, agentConfig([{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl' }])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PrepareDataError);
    expect(readdirSync(join(cwd, 'out')).sort()).toEqual(['example_metrics.json', 'example_metrics_conflict.json']);
    expect(existsSync(join(cwd, 'data/example_prepare.jsonl'))).toBe(false);
  });

  it('tolerance table', () => {
    expect(numericClose(100, 100.004)).toBe(true);
    expect(numericClose(100, 100.006)).toBe(false);
    expect(numericClose(0.5, 0.5004)).toBe(true);
    expect(numericClose(0.5, 0.5006)).toBe(false);
    expect(numericClose(0.999, 1.0039)).toBe(true);
    expect(numericClose(5n, 5.0)).toBe(true);
  });

  it('structure rules: extra new keys ok, missing keys fail, lists compare as multisets', () => {
    const p = (s: string) => pyJsonLoads(s);
    expect(diffMetrics(p('{"a": 1}'), p('{"a": 1, "b": 2}'))).toEqual([]);
    expect(diffMetrics(p('{"a": 1, "b": 2}'), p('{"a": 1}'))).toEqual(['Missing key in new metrics: b']);
    expect(diffMetrics(p('{"l": [1, 2, 2]}'), p('{"l": [2, 1, 2]}'))).toEqual([]);
    expect(diffMetrics(p('{"l": [1, 2, 2]}'), p('{"l": [2, 1, 1]}'))).toHaveLength(1);
    expect(diffMetrics(p('{"l": [1, 2]}'), p('{"l": [1, 2, 3]}'))).toEqual(['List length differs at l: 2 != 3']);
    expect(diffMetrics(p('{"l": [{"x": 1}, {"y": 2}]}'), p('{"l": [{"y": 2}, {"x": 1.001}]}'))).toEqual([]);
    expect(diffMetrics(p('{"l": [{"x": 1}]}'), p('{"l": [{"x": 2}]}'))).toEqual(['No matching element for l[0] in new metrics (unordered)']);
    expect(diffMetrics(p('{"s": "a"}'), p('{"s": "b"}'))).toEqual(['Value differs at s: "a" != "b"']);
  });
});
