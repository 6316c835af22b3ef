/**
 * Overhead of vllm_model per call, measured against calling the backend directly in the same run.
 *
 *   pnpm build && node packages/bench/dist/src/sections/d-vllm-overhead.js [--calls 2000] [--concurrency 16] [--rounds 5]
 *
 * A local stub plays vLLM (fixed completion, constant work). The stub, vllm_model and the load
 * generator each run on their own thread, so they do not share an event loop. Three paths are
 * timed with the same HTTP client: stub directly, vllm_model /v1/chat/completions, and
 * vllm_model /v1/responses (which adds both conversions). Reported: mean latency per call
 * (sequential), throughput at the given concurrency, and the ratio to the direct path.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { Agent, request } from 'undici';
import { importBuilt } from '../built.js';
import { numberArg } from '../load.js';

const CALLS = numberArg('calls', 2000);
const CONCURRENCY = numberArg('concurrency', 16);
const ROUNDS = numberArg('rounds', 5);

const completion = JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion', created: 1700000000, model: 'bench',
  choices: [{
    index: 0, finish_reason: 'tool_calls',
    message: { role: 'assistant', content: 'Let me check the weather for you.', reasoning_content: 'The user wants the weather; call the tool.',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }] },
  }],
  usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
});

async function startStubHere(): Promise<{ url: string; close: () => Promise<void> }> {
  const s = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(completion);
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, close: () => new Promise((r) => s.close(() => r())) };
}

const history = [
  { role: 'user', content: 'What is the weather in Paris?' },
  { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Call the weather tool.' }] },
  { type: 'function_call', call_id: 'call_0', name: 'get_weather', arguments: '{"city": "Paris"}', id: 'call_0', status: 'completed' },
  { type: 'function_call_output', call_id: 'call_0', output: '{"weather": "sunny", "temp_c": 21}' },
];
const tools = [{ type: 'function', name: 'get_weather', strict: true, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
const responsesBody = JSON.stringify({ input: history, tools, temperature: 1 });
const chatBody = JSON.stringify({
  messages: [
    { role: 'user', content: 'What is the weather in Paris?' },
    { role: 'assistant', content: '<think>Call the weather tool.</think>', tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }] },
    { role: 'tool', content: '{"weather": "sunny", "temp_c": 21}', tool_call_id: 'call_0' },
  ],
  tools: [{ type: 'function', function: { name: 'get_weather', strict: true, parameters: { type: 'object' } } }],
});

const agent = new Agent({ connections: 256, keepAliveTimeout: 30_000 });
async function call(url: string, body: string): Promise<void> {
  const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${text.slice(0, 300)}`);
}

async function sequential(url: string, body: string, n: number): Promise<number> {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await call(url, body);
  return Number(process.hrtime.bigint() - t0) / 1e6 / n; // ms per call
}

async function concurrent(url: string, body: string, n: number, c: number): Promise<number> {
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) {
        next++;
        await call(url, body);
      }
    }),
  );
  return n / (Number(process.hrtime.bigint() - t0) / 1e9); // calls per second
}

async function startModelHere(stubUrl: string): Promise<{ url: string; close: () => Promise<void> }> {
  const { server } = await importBuilt<typeof import('../../../../responses_api_models/vllm_model/app.js')>('responses_api_models/vllm_model/dist/app.js');
  const app = await server.build({
    config: { name: 'policy_model', base_url: `${stubUrl}/v1`, api_key: 'bench', model: 'bench', return_token_id_information: false, uses_reasoning_parser: true, health_check_interval_s: 0 },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
}

/** Starts the stub or the model server on a worker thread; resolves with its URL. */
function onThread(role: 'stub' | 'model', stubUrl = ''): Promise<{ url: string; worker: Worker }> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { role, stubUrl } });
  return new Promise((resolve, reject) => {
    worker.once('message', (url: string) => resolve({ url, worker }));
    worker.once('error', reject);
  });
}

async function main(): Promise<void> {
  const stub = await onThread('stub');
  const model = await onThread('model', stub.url);
  const ours = model.url;
  const paths: [string, string, string][] = [
    ['backend directly (/v1/chat/completions)', `${stub.url}/v1/chat/completions`, chatBody],
    ['vllm_model /v1/chat/completions', `${ours}/v1/chat/completions`, chatBody],
    ['vllm_model /v1/responses', `${ours}/v1/responses`, responsesBody],
  ];
  // Warm up every path (JIT, connection pools).
  for (const [, url, body] of paths) await sequential(url, body, Math.min(200, CALLS));

  // Interleave the paths over several rounds and keep the median, so that load changes on the
  // machine during the run affect every path alike.
  const perRound = Math.max(1, Math.floor(CALLS / ROUNDS));
  const samples = paths.map(() => ({ ms: [] as number[], rps: [] as number[] }));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, [, url, body]] of paths.entries()) {
      samples[i]!.ms.push(await sequential(url, body, perRound));
      samples[i]!.rps.push(await concurrent(url, body, perRound, CONCURRENCY));
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const rows = paths.map(([name], i) => ({ name, ms: median(samples[i]!.ms), rps: median(samples[i]!.rps) }));
  const base = rows[0]!;
  console.log(`vllm_model overhead: ${CALLS} calls per path in ${ROUNDS} interleaved rounds (median), sequential and at concurrency ${CONCURRENCY} (node ${process.version})`);
  console.log('path'.padEnd(44) + 'ms/call'.padStart(10) + 'ratio'.padStart(8) + 'added ms'.padStart(10) + 'calls/s'.padStart(10));
  for (const r of rows) {
    console.log(
      r.name.padEnd(44) + r.ms.toFixed(3).padStart(10) + `${(r.ms / base.ms).toFixed(2)}x`.padStart(8) +
        (r.ms - base.ms).toFixed(3).padStart(10) + r.rps.toFixed(0).padStart(10),
    );
  }
  await agent.close();
  await model.worker.terminate();
  await stub.worker.terminate();
}

if (isMainThread) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  const { role, stubUrl } = workerData as { role: 'stub' | 'model'; stubUrl: string };
  const started = role === 'stub' ? startStubHere() : startModelHere(stubUrl);
  void started.then((s) => parentPort!.postMessage(s.url));
}
