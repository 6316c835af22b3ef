/**
 * Example and recorded data for server tests: JSONL reading, the checks every server's
 * `data/example.jsonl` must pass, and pairing upstream's recorded rollouts with their input rows.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from '../config/parse.js';
import { readJsonlSync } from '../data/jsonl.js';
import { ResponseCreateParamsSchema } from '../openai/schemas.js';

export type Row = Record<string, any>;

function pathOf(p: string | URL): string {
  return p instanceof URL ? fileURLToPath(p) : p;
}

/** The JSON objects of a JSONL file (blank lines skipped). */
export function readJsonl(path: string | URL): Row[] {
  return readJsonlSync(pathOf(path)) as Row[];
}

/** Rows of `<server folder>/data/<file>`; pass `new URL('..', import.meta.url)` from a test. */
export function exampleRows(serverDir: string | URL, file = 'example.jsonl'): Row[] {
  return readJsonl(join(pathOf(serverDir), 'data', file));
}

/**
 * The checks every resources server's example data must pass: each `configs/*.yaml` names
 * `app.ts` as entrypoint and only example files that exist, and `data/example.jsonl` holds 5 rows,
 * each a run request whose `responses_create_params` the agent can send. Returns the rows.
 */
export function checkExampleData(serverDir: string | URL): Row[] {
  const dir = pathOf(serverDir);
  const configs = readdirSync(join(dir, 'configs')).filter((f) => f.endsWith('.yaml'));
  expect(configs.length, `${dir}/configs holds no YAML file`).toBeGreaterThan(0);
  for (const file of configs) {
    const text = readFileSync(join(dir, 'configs', file), 'utf8');
    expect(text, `configs/${file}`).toContain('entrypoint: app.ts');
    const doc = parseYaml(text) as unknown;
    for (const path of exampleDatasetPaths(doc)) expect(existsSync(join(repoRoot(), path)), `${file}: ${path}`).toBe(true);
  }
  const rows = exampleRows(dir);
  expect(rows, 'data/example.jsonl rows').toHaveLength(5);
  for (const [i, row] of rows.entries()) {
    const parsed = ResponseCreateParamsSchema.safeParse(row.responses_create_params);
    expect(parsed.success, `row ${i}: ${parsed.success ? '' : parsed.error.message}`).toBe(true);
  }
  return rows;
}

/** `jsonl_fpath` of every dataset of type example in a config document. */
function exampleDatasetPaths(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const v of node) exampleDatasetPaths(v, out);
  else if (node !== null && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    if (o.type === 'example' && typeof o.jsonl_fpath === 'string') out.push(o.jsonl_fpath);
    for (const v of Object.values(o)) exampleDatasetPaths(v, out);
  }
  return out;
}

/**
 * A row's identity across upstream's files: rollouts re-serialize the input messages (adding
 * `type`), so rows are matched on message contents.
 */
export function inputKey(row: Row): string {
  const input = (row.responses_create_params as { input: unknown }).input;
  return JSON.stringify(Array.isArray(input) ? input.map((m: { content?: unknown }) => m.content) : input);
}

/**
 * Upstream's recorded rollouts next to their input rows (matched by {@link inputKey}); `input` is
 * undefined for a recording without a matching row.
 */
export function recordedRollouts(dataDir: string, examples = 'example.jsonl', rollouts = 'example_rollouts.jsonl'): { input: Row | undefined; recorded: Row }[] {
  const inputs = new Map(readJsonl(join(dataDir, examples)).map((r) => [inputKey(r), r]));
  return readJsonl(join(dataDir, rollouts)).map((recorded) => ({ input: inputs.get(inputKey(recorded)), recorded }));
}
