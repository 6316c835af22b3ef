/** A queue collection checks its files as a local one does, before it connects to Redis. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { collectViaQueue } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'ng-queue-paths-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('refuses an output that is its input, and leaves the input as it was', async () => {
  const input = join(dir, 'tasks.jsonl');
  const text = '{"responses_create_params":{"input":"hi"}}\n';
  writeFileSync(input, text);
  // Port 9 (discard) on loopback: nothing is ever connected to, the file check comes first.
  await expect(collectViaQueue({ queueUrl: 'redis://127.0.0.1:9', inputPath: input, outputPath: input, restart: true, redisBudgetMs: 1000 })).rejects.toThrow(
    /is the input file .*Choose another \+output_jsonl_fpath/,
  );
  expect(readFileSync(input, 'utf8')).toBe(text);
});
