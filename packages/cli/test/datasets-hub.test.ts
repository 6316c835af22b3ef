/**
 * ng-download-dataset and ng-upload-dataset against a stand-in of the Hugging Face Hub's HTTP API
 * on 127.0.0.1 (test/fixtures/hub-standin.ts), through the real client library.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { downloadDatasetCommand } from '../src/commands/download-dataset.js';
import { prepareDataCommand } from '../src/commands/prepare-data.js';
import { uploadDatasetCommand } from '../src/commands/upload-dataset.js';
import { splitDataFiles } from '../src/hub/split.js';
import { runCli } from '../src/runtime.js';
import { HubStandin, STANDIN_TOKEN } from './fixtures/hub-standin.js';

const row = (i: number) => JSON.stringify({ responses_create_params: { input: `question number ${i}: what is ${i} + ${i}?` }, expected_answer: String(2 * i) });
/** ~60 kB of valid rows, so a cut after 10 kB leaves most of the body to a Range request. */
const DATA = `${Array.from({ length: 600 }, (_, i) => row(i)).join('\n')}\n`;

// The machine's own Hub settings must not leak into these tests.
delete process.env.HF_TOKEN;
delete process.env.HF_ENDPOINT;

let dir: string;
let hub: HubStandin;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ng-hub-'));
  hub = new HubStandin();
  hub.addRepo('acme/math-rl', { 'train.jsonl': DATA, 'README.md': '# acme math\n' });
  hub.addRepo('acme/gated-rl', { 'train.jsonl': DATA }, { gated: true });
  await hub.start();
});

afterEach(async () => {
  await hub.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An agent config with one train dataset published at `repo`/`artifact`. */
function agentConfig(repo: string, artifact = 'train.jsonl', name = 'math_train'): { configPath: string; target: string } {
  const target = join(dir, 'data', `${name}.jsonl`);
  const configPath = join(dir, `${name}.yaml`);
  writeFileSync(
    configPath,
    `math_agent:
  responses_api_agents:
    simple_agent:
      entrypoint: app.ts
      datasets:
        - name: ${name}
          type: train
          jsonl_fpath: ${target}
          huggingface_identifier:
            repo_id: ${repo}
            artifact_fpath: ${artifact}
          license: Apache 2.0
`,
  );
  return { configPath, target };
}

function envYaml(extra = ''): string {
  const p = join(dir, 'env.yaml');
  writeFileSync(p, `hf_endpoint: ${hub.url}\n${extra}`);
  return p;
}

/** Runs a command in-process; returns its exit code and everything it wrote. */
async function run(spec: typeof downloadDatasetCommand, argv: string[], envPath = envYaml()): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((stdout += String(s)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((stderr += String(s)), true));
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void (stdout += `${a.join(' ')}\n`));
  try {
    const code = await runCli(spec, argv, { envPath });
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    log.mockRestore();
  }
}

const resolveGets = () => hub.requests.filter((r) => r.method === 'GET' && r.url.includes('/resolve/') && r.range !== 'bytes=0-0');

describe('ng-download-dataset', () => {
  it('downloads the artifact to jsonl_fpath, checks it, validates the rows and prints the counts', async () => {
    const { configPath, target } = agentConfig('acme/math-rl');
    const r = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`]);
    expect(r.stderr).not.toContain('ng-download-dataset:');
    expect(r.code).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe(DATA);
    expect(existsSync(`${target}.part`)).toBe(false);
    expect(r.stdout).toContain('math_agent/math_train (train): downloaded acme/math-rl/train.jsonl to');
    expect(r.stdout).toContain('sha256 checked');
    expect(r.stdout).toContain('600 valid row(s), 0 invalid');
    expect(r.stdout).toContain('Datasets: 1 downloaded, 0 already present, 0 failed');
    // The library's metadata calls, then one GET of the whole body.
    expect(hub.requests.some((q) => q.method === 'POST' && q.url === '/api/datasets/acme/math-rl/paths-info/main')).toBe(true);
    expect(resolveGets().map((q) => q.range)).toEqual([undefined]);
  });

  it("works from an environment's config alone: servers its agent names but that are not given are not needed", async () => {
    const { configPath, target } = agentConfig('acme/math-rl');
    const text = readFileSync(configPath, 'utf8').replace(
      '      entrypoint: app.ts\n',
      '      entrypoint: app.ts\n      model_server:\n        type: responses_api_models\n        name: policy_model\n      resources_server:\n        type: resources_servers\n        name: math_env\n',
    );
    writeFileSync(configPath, text);
    const r = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`]);
    expect(r.stderr).not.toContain('refers to the');
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe(DATA);
  });

  it('continues a download cut mid-body with a Range request; the file is byte-identical', async () => {
    const { configPath, target } = agentConfig('acme/math-rl');
    hub.cut = { path: 'train.jsonl', afterBytes: 10_000, times: 1 };
    const r = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`]);
    expect(r.code, r.stderr).toBe(0);
    const gets = resolveGets();
    expect(gets).toHaveLength(2);
    expect(gets[0]!.range).toBeUndefined();
    expect(gets[1]!.range).toBe(`bytes=10000-${Buffer.byteLength(DATA) - 1}`);
    expect(readFileSync(target).equals(Buffer.from(DATA))).toBe(true);
    expect(r.stderr).toContain('continuing from byte 10000');
    expect(r.stdout).toContain('1 broken connection(s) continued with a Range request');
  });

  it('continues a .part left by an earlier run', async () => {
    const { configPath, target } = agentConfig('acme/math-rl');
    hub.cut = { path: 'train.jsonl', afterBytes: 15_000, times: 3 };
    const first = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`]);
    // Three attempts are cut after 15,000 more bytes each: it keeps making progress, so it finishes too.
    expect(first.code, first.stderr).toBe(0);
    expect(readFileSync(target).equals(Buffer.from(DATA))).toBe(true);

    rmSync(target);
    writeFileSync(`${target}.part`, DATA.slice(0, 12_345));
    hub.cut = undefined;
    hub.requests.length = 0;
    const second = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`]);
    expect(second.code, second.stderr).toBe(0);
    expect(resolveGets().map((q) => q.range)).toEqual([`bytes=12345-${Buffer.byteLength(DATA) - 1}`]);
    expect(readFileSync(target, 'utf8')).toBe(DATA);
    expect(second.stdout).toContain('continued from 12 kB already in');
  });

  it('refuses a file whose SHA-256 differs from the Hub LFS metadata, leaving nothing in place', async () => {
    const { configPath, target } = agentConfig('acme/math-rl');
    hub.wrongSha.add('train.jsonl');
    const r = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/ng-download-dataset: acme\/math-rl\/train\.jsonl: SHA-256 [0-9a-f]{64} does not match the Hub's [0-9a-f]{64}; the file was deleted/);
    expect(existsSync(target)).toBe(false);
    expect(existsSync(`${target}.part`)).toBe(false);
  });

  it('a gated dataset without a token fails with a clear error; with hf_token in env.yaml it works and the token is never printed', async () => {
    const { configPath, target } = agentConfig('acme/gated-rl');
    const denied = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`]);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain('ng-download-dataset: the Hugging Face Hub refused to download acme/gated-rl/train.jsonl without a token (HTTP 401)');
    expect(denied.stderr).toContain('Add `hf_token: hf_…` to env.yaml');
    expect(denied.stderr).toContain(`accept its conditions at ${hub.url}/datasets/acme/gated-rl`);
    expect(existsSync(target)).toBe(false);

    const wrong = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`], envYaml('hf_token: hf_notTheRightOne\n'));
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('refused to download acme/gated-rl/train.jsonl with the configured token (HTTP 403');
    expect(wrong.stderr + wrong.stdout).not.toContain('hf_notTheRightOne');

    const ok = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`], envYaml(`hf_token: ${STANDIN_TOKEN}\n`));
    expect(ok.code, ok.stderr).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe(DATA);
    expect(ok.stdout + ok.stderr).not.toContain(STANDIN_TOKEN);
    expect(ok.stdout + ok.stderr).not.toContain(STANDIN_TOKEN.slice(3));
  });

  it('skips a dataset already present and valid, without asking the Hub', async () => {
    const { configPath, target } = agentConfig('acme/math-rl');
    expect((await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`])).code).toBe(0);
    hub.requests.length = 0;
    const again = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`, '+dataset=math_train']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`math_agent/math_train (train): ${target} is already present and valid (600 rows); skipped`);
    expect(again.stdout).toContain('Datasets: 0 downloaded, 1 already present, 0 failed');
    expect(hub.requests).toEqual([]);
  });

  it('an unreachable Hub gives one line: what to fetch and where to put it', async () => {
    const { configPath, target } = agentConfig('acme/math-rl');
    // A port nothing listens on.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const envPath = join(dir, 'env-offline.yaml');
    writeFileSync(envPath, `hf_endpoint: http://127.0.0.1:${port}\n`);
    const r = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`], envPath);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual([
      `ng-download-dataset: the Hugging Face Hub at http://127.0.0.1:${port} is unreachable (ECONNREFUSED): fetch http://127.0.0.1:${port}/datasets/acme/math-rl/resolve/main/train.jsonl and save it as ${target}`,
    ]);
    expect(existsSync(target)).toBe(false);
  });

  it('a file missing from the repo, and an unknown +dataset, are named', async () => {
    const { configPath } = agentConfig('acme/math-rl', 'nope.jsonl');
    const r = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('acme/math-rl/nope.jsonl was not found on the Hugging Face Hub');
    const u = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`, '+dataset=other']);
    expect(u.code).toBe(2);
    expect(u.stderr).toContain('no dataset named "other" in the config; its datasets are: math_train');
  });
});

describe('ng-prepare-data +should_download=true', () => {
  it('fetches a missing train dataset from the Hub, then prepares it', async () => {
    const { configPath, target } = agentConfig('acme/gated-rl');
    const outDir = join(dir, 'prepared');
    const r = await run(prepareDataCommand, [`+config_paths=[${configPath}]`, '+mode=train_preparation', `+output_dirpath=${outDir}`, '+should_download=true'], envYaml(`hf_token: ${STANDIN_TOKEN}\n`));
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe(DATA);
    expect(readFileSync(join(outDir, 'train.jsonl'), 'utf8').split('\n').filter(Boolean)).toHaveLength(600);
    expect(r.stdout + r.stderr).not.toContain(STANDIN_TOKEN);
  });
});

describe('ng-upload-dataset', () => {
  it('publishes a dataset and its metrics to a new repo; downloading it gives the same bytes', async () => {
    const src = join(dir, 'my_train.jsonl');
    writeFileSync(src, DATA);
    const env = envYaml(`hf_token: ${STANDIN_TOKEN}\n`);
    const up = await run(uploadDatasetCommand, [`+jsonl_fpath=${src}`, '+repo_id=me/new-set', '+path_in_repo=data/train.jsonl'], env);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toContain('600 valid row(s); publishing to me/new-set as data/train.jsonl and data/train_metrics.json');
    expect(up.stdout).toContain(`created ${hub.url}/datasets/me/new-set: data/train.jsonl`);
    expect(up.stdout + up.stderr).not.toContain(STANDIN_TOKEN);
    const repo = hub.repos.get('me/new-set')!;
    expect(repo.files.get('data/train.jsonl')!.equals(Buffer.from(DATA))).toBe(true);
    const metrics = JSON.parse(repo.files.get('data/train_metrics.json')!.toString()) as Record<string, unknown>;
    expect(metrics).toMatchObject({ name: 'my_train', type: 'train', 'Number of examples': 600 });
    // The JSONL went by LFS: the batch endpoint and a PUT of the object.
    expect(hub.requests.some((q) => q.method === 'PUT' && q.url.startsWith('/lfs-upload/'))).toBe(true);

    const { configPath, target } = agentConfig('me/new-set', 'data/train.jsonl');
    const down = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`], env);
    expect(down.code, down.stderr).toBe(0);
    expect(readFileSync(target).equals(readFileSync(src))).toBe(true);

    // A second upload to the existing repo updates it.
    const again = await run(uploadDatasetCommand, [`+jsonl_fpath=${src}`, '+repo_id=me/new-set', '+path_in_repo=data/train.jsonl'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`updated ${hub.url}/datasets/me/new-set`);
  });

  it('refuses invalid rows with their line numbers and sends nothing', async () => {
    const src = join(dir, 'bad.jsonl');
    writeFileSync(src, `${row(1)}\nnot json\n${JSON.stringify({ responses_create_params: { input: [{ role: 'wizard', content: 'x' }] } })}\n${row(2)}\n`);
    const r = await run(uploadDatasetCommand, [`+jsonl_fpath=${src}`, '+repo_id=me/bad-set'], envYaml(`hf_token: ${STANDIN_TOKEN}\n`));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('ng-upload-dataset: ');
    expect(r.stderr).toContain('2 invalid row(s), nothing was uploaded');
    expect(r.stderr).toMatch(/line 2: /);
    expect(r.stderr).toMatch(/line 3: responses_create_params\.input/);
    expect(hub.requests).toEqual([]);
  });

  it('without a token it says how to supply one', async () => {
    const src = join(dir, 'ok.jsonl');
    writeFileSync(src, `${row(1)}\n`);
    const r = await run(uploadDatasetCommand, [`+jsonl_fpath=${src}`, '+repo_id=me/x'], envYaml());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('ng-upload-dataset: publishing to me/x needs a Hugging Face token with write access: add `hf_token: hf_…` to env.yaml');
    expect(hub.requests).toEqual([]);
  });
});

describe('ng-download-dataset: an entry without artifact_fpath is read by split', () => {
  it("finds a split's files by the Hub's layouts, the first layout that matches winning", () => {
    const repo = [
      'README.md',
      'data/train-00001-of-00002.parquet',
      'data/train-00000-of-00002.parquet',
      'data/trainer.jsonl',
      'data/dev.jsonl',
      'train.jsonl',
      'train/part-0.jsonl',
      'test/a.parquet',
      'data/test.csv',
    ];
    expect(splitDataFiles(repo, 'train')).toEqual(['data/train-00000-of-00002.parquet', 'data/train-00001-of-00002.parquet']);
    expect(splitDataFiles(repo.filter((p) => !p.startsWith('data/train-')), 'train')).toEqual(['train.jsonl']);
    expect(splitDataFiles(['train/b.jsonl', 'train/a.json', 'train/notes.txt'], 'train')).toEqual(['train/a.json', 'train/b.jsonl']);
    expect(splitDataFiles(repo, 'validation')).toEqual(['data/dev.jsonl']);
    expect(splitDataFiles(repo, 'test')).toEqual(['test/a.parquet']);
    expect(splitDataFiles(['data/trainer.jsonl', 'training_notes.md'], 'train')).toEqual([]);
  });

  /** Parquet as `datasets`' push_to_hub writes it: nested structs and lists, 64-bit ints, nulls. */
  const SCHEMA = [
    { name: 'root', num_children: 6 },
    { name: 'id', type: 'INT64' as const, repetition_type: 'REQUIRED' as const },
    { name: 'responses_create_params', repetition_type: 'OPTIONAL' as const, num_children: 1 },
    { name: 'input', type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const, repetition_type: 'OPTIONAL' as const },
    { name: 'options', repetition_type: 'OPTIONAL' as const, num_children: 1, converted_type: 'LIST' as const },
    { name: 'list', repetition_type: 'REPEATED' as const, num_children: 1 },
    { name: 'element', type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const, repetition_type: 'OPTIONAL' as const },
    { name: 'expected_answer', type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const, repetition_type: 'OPTIONAL' as const },
    { name: 'score', type: 'DOUBLE' as const, repetition_type: 'OPTIONAL' as const },
    { name: 'meta', repetition_type: 'OPTIONAL' as const, num_children: 2 },
    { name: 'k', type: 'INT64' as const, repetition_type: 'OPTIONAL' as const },
    { name: 'tag', type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const, repetition_type: 'OPTIONAL' as const },
  ];
  interface Rec {
    id: bigint;
    q: string;
    options: string[] | null;
    answer: string | null;
    score: number | null;
    meta: { k: bigint | null; tag: string | null } | null;
  }
  const rec = (i: number): Rec => ({
    id: BigInt(1_000_000_000_000 + i),
    q: `Which letter is number ${i}? (ü/é)`,
    options: i % 3 === 0 ? [] : ['A', 'B', `C${i}`],
    answer: i % 4 === 0 ? null : 'B',
    score: i % 2 === 0 ? i / 4 : null,
    meta: i % 5 === 0 ? null : { k: BigInt(i), tag: i % 2 ? 'odd' : null },
  });
  async function parquet(recs: Rec[], gzip = false): Promise<Buffer> {
    const { parquetWriteBuffer } = await import('hyparquet-writer');
    const buf = parquetWriteBuffer({
      schema: SCHEMA,
      ...(gzip ? { codec: 'GZIP' as const, compressors: { GZIP: (b: Uint8Array) => new Uint8Array(gzipSync(b)) } } : {}),
      rowGroupSize: 4,
      columnData: [
        { name: 'id', data: recs.map((r) => r.id) },
        { name: 'responses_create_params', data: recs.map((r) => ({ input: r.q })) },
        { name: 'options', data: recs.map((r) => r.options) },
        { name: 'expected_answer', data: recs.map((r) => r.answer) },
        { name: 'score', data: recs.map((r) => r.score) },
        { name: 'meta', data: recs.map((r) => r.meta) },
      ],
    });
    return Buffer.from(buf);
  }
  /** The line Python's datasets to_json writes for a record (as values: keys in column order). */
  const line = (r: Rec) =>
    JSON.stringify({
      id: Number(r.id),
      responses_create_params: { input: r.q },
      options: r.options,
      expected_answer: r.answer,
      score: r.score,
      meta: r.meta && { k: r.meta.k === null ? null : Number(r.meta.k), tag: r.meta.tag },
    });

  function splitConfig(repo: string, type: 'train' | 'validation', name: string): { configPath: string; target: string } {
    const target = join(dir, 'data', `${name}.jsonl`);
    const configPath = join(dir, `${name}.yaml`);
    writeFileSync(
      configPath,
      `mcqa_agent:
  responses_api_agents:
    simple_agent:
      entrypoint: app.ts
      datasets:
        - name: ${name}
          type: ${type}
          jsonl_fpath: ${target}
          huggingface_identifier:
            repo_id: ${repo}
          license: Apache 2.0
`,
    );
    return { configPath, target };
  }

  it('converts a Parquet split of two shards, in name order, to JSONL row for row', async () => {
    const first = Array.from({ length: 7 }, (_, i) => rec(i));
    const second = Array.from({ length: 5 }, (_, i) => rec(100 + i));
    // Added out of order: the listing, not the insertion, decides.
    hub.addRepo('acme/mcqa', {
      'data/train-00001-of-00002.parquet': await parquet(second),
      'README.md': '# mcqa\n',
      'data/train-00000-of-00002.parquet': await parquet(first),
      'data/validation-00000-of-00001.parquet': await parquet([rec(999)]),
    });
    hub.treePageSize = 2; // the listing comes in pages
    const { configPath, target } = splitConfig('acme/mcqa', 'train', 'mcqa_train');
    const r = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe([...first, ...second].map((x) => `${line(x)}\n`).join(''));
    expect(r.stdout).toContain('mcqa_agent/mcqa_train (train): converted the train split of acme/mcqa (data/train-00000-of-00002.parquet, data/train-00001-of-00002.parquet;');
    expect(r.stdout).toContain('to ' + target + ': 12 row(s)');
    expect(r.stdout).toContain('12 valid row(s), 0 invalid');
    expect(hub.requests.filter((q) => q.url.startsWith('/api/datasets/acme/mcqa/tree/main')).length).toBeGreaterThan(1);
    expect(readdirSync(dirname(target)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(existsSync(`${target}.shards`)).toBe(false);
    // The validation files were not fetched.
    expect(hub.requests.some((q) => q.url.includes('validation'))).toBe(false);
  });

  it('reads gzip-compressed Parquet pages too', async () => {
    const recs = Array.from({ length: 6 }, (_, i) => rec(i + 20));
    hub.addRepo('acme/gz', { 'validation/data.parquet': await parquet(recs, true) });
    const { configPath, target } = splitConfig('acme/gz', 'validation', 'gz_validation');
    const r = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe(recs.map((x) => `${line(x)}\n`).join(''));
  });

  it('passes a JSONL split through line by line, and a JSON array split one element a line', async () => {
    const rows = [row(1), row(2), row(3)];
    hub.addRepo('acme/json-splits', {
      'validation.jsonl': `${rows[0]}\n\n${rows[1]}\r\n${rows[2]}`,
      'data/train.json': `  [${rows.join(',\n')}]\n`,
    });
    const v = splitConfig('acme/json-splits', 'validation', 'js_validation');
    const rv = await run(downloadDatasetCommand, [`+config_paths=[${v.configPath}]`]);
    expect(rv.code, rv.stderr).toBe(0);
    expect(readFileSync(v.target, 'utf8')).toBe(`${rows.join('\n')}\n`);
    const t = splitConfig('acme/json-splits', 'train', 'js_train');
    const rt = await run(downloadDatasetCommand, [`+config_paths=[${t.configPath}]`]);
    expect(rt.code, rt.stderr).toBe(0);
    expect(readFileSync(t.target, 'utf8')).toBe(`${rows.map((x) => JSON.stringify(JSON.parse(x))).join('\n')}\n`);
  });

  it('ng-prepare-data +should_download=true converts a missing split the same way', async () => {
    const recs = Array.from({ length: 9 }, (_, i) => rec(i));
    hub.addRepo('acme/mcqa-prep', { 'data/train-00000-of-00001.parquet': await parquet(recs) });
    const { configPath, target } = splitConfig('acme/mcqa-prep', 'train', 'prep_train');
    const outDir = join(dir, 'prepared');
    const r = await run(prepareDataCommand, [`+config_paths=[${configPath}]`, '+mode=train_preparation', `+output_dirpath=${outDir}`, '+should_download=true']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe(recs.map((x) => `${line(x)}\n`).join(''));
    expect(readFileSync(join(outDir, 'train.jsonl'), 'utf8').split('\n').filter(Boolean)).toHaveLength(9);
  });

  it('a repo with no file for the split: the error lists its files and names artifact_fpath', async () => {
    hub.addRepo('acme/odd-layout', { 'README.md': '# x\n', 'questions/all.csv': 'a,b\n' });
    const { configPath, target } = splitConfig('acme/odd-layout', 'train', 'odd_train');
    const r = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('ng-download-dataset: acme/odd-layout has no data file for the "train" split');
    expect(r.stderr).toContain('the repo has: README.md, questions/all.csv. Set huggingface_identifier.artifact_fpath');
    expect(existsSync(target)).toBe(false);
  });

  it('a row that cannot be written as JSON fails the whole conversion, leaving no file', async () => {
    const bad = { ...rec(50), id: 2n ** 60n };
    hub.addRepo('acme/huge-ids', {
      'data/train-00000-of-00002.parquet': await parquet([rec(1), rec(2)]),
      'data/train-00001-of-00002.parquet': await parquet([rec(3), bad]),
    });
    const { configPath, target } = splitConfig('acme/huge-ids', 'train', 'huge_train');
    const r = await run(downloadDatasetCommand, [`+config_paths=[${configPath}]`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`acme/huge-ids/data/train-00001-of-00002.parquet row 2, column "id": the integer ${2n ** 60n} is beyond 2^53`);
    expect(existsSync(target)).toBe(false);
    expect(readdirSync(dirname(target)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(existsSync(`${target}.shards`)).toBe(false);
  });
});
