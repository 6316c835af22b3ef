/**
 * Verify benchmark: starts the workbench server on 127.0.0.1, sends /verify for the example rows
 * (each answered with its own ground-truth calls, so every verify replays real state changes) at a
 * fixed concurrency for a bounded count or time, and prints verifies/s, latency percentiles and the
 * latency of GET / probes sent during the load (how responsive the event loop stays).
 *
 *   pnpm build && node packages/bench/dist/src/sections/h-workbench.js \
 *     [--concurrency 256] [--requests 5000] [--seconds 30] [--workers N]
 *
 * `--workers 0` replays on the event loop; the default is the server's (a worker pool).
 * Data: ../shared/upstream-data/workbench/csv_data when present, else the server's usual lookup.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { readJsonlSync } from '@nemo-gym/core/data';
import { repoRoot, sharedPath } from '@nemo-gym/core/config';
import { importBuilt } from '../built.js';
import { listenOnLoopback, loadReport, parseLoadArgs, runVerifyLoad } from '../load.js';

const { server } = await importBuilt<typeof import('../../../../resources_servers/workbench/app.js')>('resources_servers/workbench/dist/app.js');

const { concurrency, maxRequests, maxSeconds, workers } = parseLoadArgs();

function exampleBodies(): Buffer[] {
  const path = join(repoRoot(), 'resources_servers/workbench/data/example.jsonl');
  return readJsonlSync(path)
    .map((r) => {
      const row = r as { ground_truth: { name: string; arguments: string }[] };
      const output = row.ground_truth.map((c, i) => ({ type: 'function_call', call_id: `call_${i}`, id: `fc_${i}`, status: 'completed', ...c }));
      const response = { id: 'resp', created_at: 0, model: 'bench', object: 'response', output, parallel_tool_calls: false, tool_choice: 'auto', tools: [] };
      return Buffer.from(JSON.stringify({ ...row, response }));
    });
}

async function main(): Promise<void> {
  const shared = sharedPath('upstream-data', 'workbench', 'csv_data');
  const config: Record<string, unknown> = { name: 'workbench', domain: 'agent' };
  if (existsSync(shared)) config.csv_data_dir = shared;
  if (workers !== undefined) config.verify_workers = workers;
  const app = await server.build({ config });
  const port = await listenOnLoopback(app);

  const bodies = exampleBodies();
  let wrong = 0;
  const result = await runVerifyLoad(port, bodies, { concurrency, maxRequests, maxSeconds }, 20, (reward) => {
    if (reward !== 1) wrong++;
  });
  await app.close();

  const mode = workers === undefined ? 'default worker pool' : workers === 0 ? 'replay on the event loop' : `${workers} worker(s)`;
  console.log(`workbench verify bench (${availableParallelism()} cores, concurrency ${concurrency}, ${mode}, ${bodies.length} example rows)`);
  console.log(`  verifies: ${result.latencies.length} ok, ${result.errors} failed, ${wrong} not scored 1.0, in ${result.elapsedSeconds.toFixed(2)} s`);
  for (const line of loadReport(result, 'verifies')) console.log(line);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
