/**
 * Verify benchmark: starts the workbench server on 127.0.0.1, sends /verify for the example rows
 * (each answered with its own ground-truth calls, so every verify replays real state changes) at a
 * fixed concurrency for a bounded count or time, and prints verifies/s, latency percentiles and the
 * latency of GET / probes sent during the load (how responsive the event loop stays).
 *
 *   pnpm build && node resources_servers/workbench/dist/bench.js \
 *     [--concurrency 256] [--requests 5000] [--seconds 30] [--workers N]
 *
 * `--workers 0` replays on the event loop; the default is the server's (a worker pool).
 * Data: ../shared/upstream-data/workbench/csv_data when present, else the server's usual lookup.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { sharedPath } from '@nemo-gym/core/config';
import { server } from './app.js';

const { values: args } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '256' },
    requests: { type: 'string', default: '5000' },
    seconds: { type: 'string', default: '30' },
    workers: { type: 'string' },
  },
});
const concurrency = Number(args.concurrency);
const maxRequests = Number(args.requests);
const maxSeconds = Number(args.seconds);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function exampleBodies(): Buffer[] {
  const text = readFileSync(new URL(import.meta.url.includes('/dist/') ? '../data/example.jsonl' : './data/example.jsonl', import.meta.url), 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const row = JSON.parse(l) as { ground_truth: { name: string; arguments: string }[] };
      const output = row.ground_truth.map((c, i) => ({ type: 'function_call', call_id: `call_${i}`, id: `fc_${i}`, status: 'completed', ...c }));
      const response = { id: 'resp', created_at: 0, model: 'bench', object: 'response', output, parallel_tool_calls: false, tool_choice: 'auto', tools: [] };
      return Buffer.from(JSON.stringify({ ...row, response }));
    });
}

async function main(): Promise<void> {
  const shared = sharedPath('upstream-data', 'workbench', 'csv_data');
  const config: Record<string, unknown> = { name: 'workbench', domain: 'agent' };
  if (existsSync(shared)) config.csv_data_dir = shared;
  if (args.workers !== undefined) config.verify_workers = Number(args.workers);
  const app = await server.build({ config });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('no listening address');

  const bodies = exampleBodies();
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency + 8 });
  const call = (method: string, path: string, body?: Buffer) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: addr.port, method, path, agent, headers: body ? { 'content-type': 'application/json', 'content-length': body.length } : {} },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  let wrong = 0;
  const post = async (i: number) => {
    const res = await call('POST', '/verify', bodies[i % bodies.length]);
    const json = JSON.parse(res.text) as { reward?: number };
    if (res.status !== 200 || typeof json.reward !== 'number') throw new Error(`status ${res.status}`);
    if (json.reward !== 1) wrong++;
  };

  await Promise.all(Array.from({ length: 32 }, (_, i) => post(i)));

  const latencies: number[] = [];
  const probe: number[] = [];
  let errors = 0;
  let issued = 0;
  const start = performance.now();
  const deadline = start + maxSeconds * 1000;
  let running = true;
  const prober = (async () => {
    while (running) {
      const t = performance.now();
      await call('GET', '/');
      probe.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const client = async () => {
    while (issued < maxRequests && performance.now() < deadline) {
      const i = issued++;
      const t = performance.now();
      try {
        await post(i);
        latencies.push(performance.now() - t);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const elapsed = (performance.now() - start) / 1000;
  running = false;
  await prober;
  agent.destroy();
  await app.close();

  latencies.sort((a, b) => a - b);
  probe.sort((a, b) => a - b);
  const fmt = (x: number) => x.toFixed(1);
  const workers = args.workers === undefined ? 'default worker pool' : Number(args.workers) === 0 ? 'replay on the event loop' : `${args.workers} worker(s)`;
  console.log(`workbench verify bench (${availableParallelism()} cores, concurrency ${concurrency}, ${workers}, ${bodies.length} example rows)`);
  console.log(`  verifies: ${latencies.length} ok, ${errors} failed, ${wrong} not scored 1.0, in ${elapsed.toFixed(2)} s`);
  console.log(`  throughput: ${(latencies.length / elapsed).toFixed(0)} verifies/s`);
  console.log(
    `  latency ms: p50 ${fmt(percentile(latencies, 50))}  p90 ${fmt(percentile(latencies, 90))}  p99 ${fmt(percentile(latencies, 99))}  max ${fmt(latencies[latencies.length - 1] ?? NaN)}`,
  );
  console.log(`  GET / during load, ms: p50 ${fmt(percentile(probe, 50))}  p99 ${fmt(percentile(probe, 99))}  (${probe.length} probes)`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
