// R: ng-viewer on a large rollouts file: indexing time and heap, and how long each API answer
// the page asks for takes (first call computes, later calls hit the caches; charts are cached per filter).
// Run after `pnpm build`: node packages/bench/dist/src/sections/r-viewer.js --rows 200000
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startViewer, writeSyntheticFile } from '@nemo-gym/viewer';
import { numberArg } from '../load.js';
import { fmt } from '../stack.js';

const rows = numberArg('rows', 200_000);
const dir = mkdtempSync(join(tmpdir(), 'ng-bench-viewer-'));
try {
  const file = join(dir, 'rollouts.jsonl');
  await writeSyntheticFile(file, rows);
  const heapBefore = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const viewer = await startViewer({ jsonlPath: file, port: 0 });
  const indexMs = performance.now() - t0;
  const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
  console.log(`${rows} rows, ${fmt(statSync(file).size / 1e6)} MB: indexed in ${fmt(indexMs / 1000, 2)} s, heap +${fmt(heapMb)} MB`);
  const timeGet = async (path: string): Promise<number> => {
    const s = performance.now();
    const res = await fetch(new URL(path, viewer.url));
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
    return performance.now() - s;
  };
  const paths: [string, string][] = [
    ['summary (task groups built)', '/api/summary'],
    ['first page of rows', '/api/rows?start=0&limit=50'],
    ['rows, reward filter', '/api/rows?min_reward=1&limit=50'],
    ['rows, agent filter, sorted by reward', '/api/rows?agent=agent_b&sort=reward&order=desc&limit=50'],
    ['tasks, sometimes passed', '/api/tasks?outcome=sometimes&limit=50'],
    ['charts (every aggregate)', '/api/charts?file=a'],
    ['breakdown by category', '/api/breakdown?by=category'],
    ['charts, reward filter (filter -> charts)', '/api/charts?file=a&min_reward=1'],
    ['charts, agent filter', '/api/charts?file=a&agent=agent_b'],
    ['charts, text filter', '/api/charts?file=a&q=city%2012345%3F'],
    ['breakdown, reward filter', '/api/breakdown?by=category&min_reward=1'],
    ['one rollout', `/api/rows/${Math.floor(rows / 2)}`],
    ['text search over the file', '/api/rows?q=city%2012345%3F&limit=50'],
  ];
  console.log(`${'answer'.padEnd(42)} ${'first ms'.padStart(9)} ${'again ms'.padStart(9)}`);
  for (const [label, path] of paths) {
    const first = await timeGet(path);
    const again = await timeGet(path);
    console.log(`${label.padEnd(42)} ${fmt(first).padStart(9)} ${fmt(again).padStart(9)}`);
  }
  await viewer.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
