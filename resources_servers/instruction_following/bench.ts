/**
 * Verify benchmark: starts the instruction_following server on 127.0.0.1 (checks in its worker
 * pool), sends /verify requests at a fixed concurrency for a bounded count or time, and prints
 * verifies/s and latency percentiles, plus the latency of GET / probes sent during the load
 * (how responsive the event loop stays).
 *
 *   pnpm build && node resources_servers/instruction_following/dist/bench.js \
 *     [--concurrency 256] [--requests 5000] [--seconds 30] [--workers N]
 *
 * Punkt data: NLTK_DATA / NLTK's usual folders, or ../shared/nltk_data when present.
 */
import { existsSync } from 'node:fs';
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

const PARAGRAPH =
  'Dr. Smith reviewed the results on Monday. The team, which had worked for months, was relieved! ' +
  'However, several questions remained open: how would the U.S. partners react, and what would it cost? ' +
  'Nobody knew yet. "We will see," she said, before leaving the lab at 5 p.m. sharp. ';

function makeRow(i: number) {
  const text = `<<Quarterly Report ${i}>>\n\n${PARAGRAPH.repeat(6)}\n\n***\n\n${PARAGRAPH.repeat(4)}\n\nP.S. Thanks to everyone.`;
  const variants: [string[], unknown[]][] = [
    [
      ['detectable_format:title', 'length_constraints:number_sentences', 'count:count_unique'],
      [{}, { num_sentences: 10, relation: 'at least' }, {}],
    ],
    [
      ['change_case:capital_word_frequency', 'language:response_language', 'keywords:existence'],
      [{ capital_frequency: 3, capital_relation: 'less than' }, { language: 'en' }, { keywords: ['team', 'partners'] }],
    ],
    [
      ['length_constraints:number_paragraphs', 'detectable_content:postscript', 'keywords:start_end'],
      [{ num_paragraphs: 2 }, { postscript_marker: 'P.S.' }, {}],
    ],
    [
      ['length_constraints:number_words', 'punctuation:no_comma', 'keywords:keyword_specific_position'],
      [{ num_words: 300, relation: 'at least' }, {}, { keyword: 'team', n: 2, m: 2 }],
    ],
  ];
  const [ids, kwargs] = variants[i % variants.length]!;
  return {
    id: i,
    instruction_id_list: ids,
    prompt: 'Write a short report.',
    kwargs,
    responses_create_params: { input: [{ role: 'user', content: 'Write a short report.' }] },
    response: {
      id: `resp_${i}`,
      created_at: 0,
      model: 'bench',
      object: 'response',
      output: [{ id: `msg_${i}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }],
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: [],
    },
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const shared = sharedPath('nltk_data');
  const config: Record<string, unknown> = { name: 'instruction_following', domain: 'instruction_following' };
  if (existsSync(shared)) config.nltk_data_dir = shared;
  if (args.workers) config.num_workers = Number(args.workers);
  const app = await server.build({ config });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('no listening address');

  const bodies = Array.from({ length: 64 }, (_, i) => Buffer.from(JSON.stringify(makeRow(i))));
  // A plain keep-alive HTTP client: cheap on the event loop it shares with the server.
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency + 8 });
  const call = (method: string, path: string, body?: Buffer) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: addr.port,
          method,
          path,
          agent,
          headers: body ? { 'content-type': 'application/json', 'content-length': body.length } : {},
        },
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
  const post = async (i: number) => {
    const res = await call('POST', '/verify', bodies[i % bodies.length]);
    const json = JSON.parse(res.text) as { reward?: number };
    if (res.status !== 200 || typeof json.reward !== 'number') throw new Error(`status ${res.status}`);
  };

  // Warm-up: start every worker and load its data.
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
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const worker = async () => {
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
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - start) / 1000;
  running = false;
  await prober;
  agent.destroy();
  await app.close();

  latencies.sort((a, b) => a - b);
  probe.sort((a, b) => a - b);
  const fmt = (x: number) => x.toFixed(1);
  console.log(`instruction_following verify bench (${availableParallelism()} cores, concurrency ${concurrency})`);
  console.log(`  verifies: ${latencies.length} ok, ${errors} failed in ${elapsed.toFixed(2)} s`);
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
