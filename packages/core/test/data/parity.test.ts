/**
 * Metrics parity with the reference implementation: every recorded metrics file in
 * ../shared/upstream-data whose input JSONL is there is recomputed from that input and compared.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { metricsJson, prepareData, pyDumps } from '../../src/data/index.js';
import { pyJsonLoads, type PyValue } from '../../src/py/index.js';
import { diffMetrics } from '../../src/internal/index.js';

const upstream = resolve(__dirname, '../../../../../shared/upstream-data');
const have = existsSync(upstream);
if (!have) console.log(`skipping metrics parity: ${upstream} not found`);

/** [server, input jsonl, recorded metrics file] */
function cases(): [string, string, string][] {
  if (!have) return [];
  const out: [string, string, string][] = [];
  for (const server of readdirSync(upstream).sort()) {
    const dir = join(upstream, server);
    const files = new Set(readdirSync(dir));
    for (const f of [...files].sort()) {
      if (!f.endsWith('.json') || !f.includes('_metrics')) continue;
      // example_metrics.json <- example.jsonl; example_metrics_openqa.json <- example_openqa.jsonl
      const input = f.replace('_metrics', '').replace(/\.json$/, '.jsonl');
      if (files.has(input)) out.push([server, input, f]);
    }
  }
  return out;
}

function datasetConfigOf(recorded: PyValue): Record<string, unknown> {
  const m = recorded as Map<string, PyValue>;
  const gi = m.get('gitlab_identifier');
  return {
    name: m.get('name'),
    type: m.get('type'),
    ...(m.has('num_repeats') ? { num_repeats: Number(m.get('num_repeats')) } : {}),
    gitlab_identifier: gi instanceof Map ? Object.fromEntries(gi) : null,
    license: m.get('license') ?? null,
  };
}

const tmpRoots: string[] = [];
afterAll(() => {
  for (const d of tmpRoots) rmSync(d, { recursive: true, force: true });
});

function withoutKey(v: PyValue, key: string): PyValue {
  if (v instanceof Map) {
    const m = new Map(v);
    m.delete(key);
    return m;
  }
  return v;
}

describe.skipIf(!have)('metrics parity with recorded upstream metrics files', () => {
  const all = cases();
  it('finds the recorded metrics files', () => {
    console.log(`metrics parity cases: ${all.length}`);
    expect(all.length).toBeGreaterThanOrEqual(16);
  });

  it.each(all)('%s/%s reproduces %s', async (server, input, metricsFile) => {
    const recorded = pyJsonLoads(readFileSync(join(upstream, server, metricsFile), 'utf8'));
    const recordedPath = (recorded as Map<string, PyValue>).get('jsonl_fpath') as string;
    const cwd = mkdtempSync(join(tmpdir(), 'ng-parity-'));
    tmpRoots.push(cwd);
    const rel = `resources_servers/${server}/data/${input}`;
    mkdirSync(join(cwd, `resources_servers/${server}/data`), { recursive: true });
    copyFileSync(join(upstream, server, input), join(cwd, rel));
    const config = {
      [`${server}_simple_agent`]: {
        responses_api_agents: {
          simple_agent: {
            entrypoint: 'app.ts',
            datasets: [{ ...datasetConfigOf(recorded), jsonl_fpath: rel }],
          },
        },
      },
    };
    const res = await prepareData(config, { mode: 'example_validation', output_dirpath: 'out', cwd, log: () => {} });
    const ours = pyJsonLoads(metricsJson(res.datasets[0]!.metrics)) as Map<string, PyValue>;
    // The recorded file names the dataset as its own config did; compare the metrics, not the path.
    ours.set('jsonl_fpath', recordedPath);
    // The reference implementation's own check: an existing file is accepted by these rules.
    expect(diffMetrics(recorded, ours)).toEqual([]);
    const rec = recorded as Map<string, PyValue>;
    const tools = rec.get('Number of tools');
    if (tools instanceof Map && !tools.has('Median')) {
      // Written by an older version (no median/stddev, no other metrics): only the rule check applies.
      console.log(`${server}/${metricsFile}: older file format, compared with the conflict rules only`);
      return;
    }
    // Files written before `num_repeats` existed lack that key.
    const expected = rec.has('num_repeats') ? ours : withoutKey(ours, 'num_repeats');
    expect(pyDumps(expected, { indent: 4 })).toBe(readFileSync(join(upstream, server, metricsFile), 'utf8').trimEnd());
  });
});
