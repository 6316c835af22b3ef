/**
 * Long multi-turn rollouts with token ids: bytes vllm_model sends to vLLM and vllm_model's CPU
 * per call, at turns 1, 16, 32 and 64, for each token_id_forwarding mode, in one run.
 *
 *   pnpm build && node packages/bench/dist/src/sections/n-vllm-turns.js [--turns 64] [--rounds 8]
 *
 * The backend speaks a trainer's vLLM protocol: every completion carries its token bundle on the
 * message (as NeMo-RL's server does) and prompts grow as a real conversation's would (each turn's
 * prompt is the previous prompt + generation + the new tool output). It runs in its own process;
 * so does each vllm_model (one per mode), whose CPU time is read from /proc around every call.
 * The driver plays the agent: it sends the whole history back every turn, token fields included,
 * exactly as simple_agent does. Rounds interleave the modes; medians over rounds are reported.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { importBuilt } from '../built.js';
import { numberArg } from '../load.js';

const TURNS = numberArg('turns', 64);
const ROUNDS = numberArg('rounds', 8);
const MARKS = [1, 16, 32, 64].filter((t) => t <= TURNS);
const MODES = ['last', 'all', 'none'] as const;
const PROMPT0 = 400; // system prompt + tools + first user message, in tokens
const GEN = 60; // tokens per generation
const TOOL = 40; // tokens per tool output and its template framing

type Json = Record<string, unknown>;

/** The backend: a trainer's vLLM server, reduced to its answer shape. Records body sizes. */
function backendMain(): void {
  const sizes: number[] = [];
  const ids = (from: number, n: number) => Array.from({ length: n }, (_, k) => 1000 + ((from + k) % 150000));
  const s = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/sizes') {
        res.end(JSON.stringify(sizes.splice(0)));
        return;
      }
      const raw = Buffer.concat(chunks);
      sizes.push(raw.length);
      const body = JSON.parse(raw.toString('utf8')) as { messages: Json[] };
      const turn = body.messages.filter((m) => m.role === 'assistant').length;
      const promptLen = PROMPT0 + turn * (GEN + TOOL);
      const gen = ids(promptLen, GEN);
      const message = {
        role: 'assistant', content: null,
        tool_calls: [{ id: `chatcmpl-tool-${turn}`, type: 'function', function: { name: 'step', arguments: `{"n": ${turn}}` } }],
        prompt_token_ids: ids(0, promptLen), generation_token_ids: gen, generation_log_probs: gen.map((_, k) => -((k % 13) + 1) / 16),
      };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({
        id: `chatcmpl-${turn}`, object: 'chat.completion', created: 1700000000, model: 'bench',
        choices: [{ index: 0, finish_reason: 'tool_calls', message, logprobs: { content: gen.map((id, k) => ({ token: `token_id:${id}`, logprob: message.generation_log_probs[k], bytes: null, top_logprobs: [] })) } }],
        usage: { prompt_tokens: promptLen, completion_tokens: GEN, total_tokens: promptLen + GEN },
      }));
    });
  });
  s.listen(0, '127.0.0.1', () => process.send!({ port: (s.address() as AddressInfo).port }));
}

/** One vllm_model, configured for a forwarding mode, in this process. */
async function modelMain(baseUrl: string, mode: string): Promise<void> {
  const { server } = await importBuilt<typeof import('../../../../responses_api_models/vllm_model/app.js')>('responses_api_models/vllm_model/dist/app.js');
  const app = await server.build({
    config: { name: 'policy_model', base_url: baseUrl, api_key: 'k', model: 'bench', return_token_id_information: true, uses_reasoning_parser: true, token_id_forwarding: mode, health_check_interval_s: 0 },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.send!({ port: (app.server.address() as AddressInfo).port });
}

function startChild(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(fileURLToPath(import.meta.url), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, port: (m as { port: number }).port }));
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code} before it listened`)));
  });
}

/** CPU time (user + system) of a process so far, in microseconds. */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // utime + stime, in clock ticks of 10 ms
}

const agent = new Agent({ connections: 4 });
async function post(url: string, body: string): Promise<Json> {
  const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Json;
}

const tools = [{ type: 'function', name: 'step', strict: false, parameters: { type: 'object', properties: { n: { type: 'integer' } } } }];

/**
 * One rollout of TURNS calls; per call the bytes the backend received and the model server's
 * CPU. /proc counts in 10 ms ticks, so CPU is read over repeats of the same call (at least
 * 200 ms of the server's CPU).
 */
async function rollout(modelUrl: string, modelPid: number, backendUrl: string, repeats: number, minCpuMicros = 200_000): Promise<{ bytes: number[]; cpu: number[] }> {
  const input: Json[] = [{ role: 'user', content: 'Count to the end, one step at a time.' }];
  const bytes: number[] = [];
  const cpu: number[] = [];
  for (let t = 1; t <= TURNS; t++) {
    const body = JSON.stringify({ input, tools, temperature: 1 });
    let resp: Json = {};
    resp = await post(`${modelUrl}/v1/responses`, body);
    if (MARKS.includes(t)) {
      // Repeat the same call until the server has used at least minCpuMicros (/proc ticks are 10 ms).
      const before = cpuMicros(modelPid);
      let n = 0;
      while (n < 2000 && (n < repeats || cpuMicros(modelPid) - before < minCpuMicros)) {
        await post(`${modelUrl}/v1/responses`, body);
        n++;
      }
      cpu.push((cpuMicros(modelPid) - before) / n);
    } else {
      cpu.push(NaN);
    }
    const sizes = (await post(`${backendUrl}/sizes`, "{}")) as unknown as number[];
    bytes.push(sizes.at(-1)!);
    for (const item of resp.output as Json[]) {
      input.push(item);
      if (item.type === 'function_call') input.push({ type: 'function_call_output', call_id: item.call_id, output: `{"ok": true, "step": ${t}}` });
    }
  }
  return { bytes, cpu };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function main(): Promise<void> {
  const backend = await startChild(['backend']);
  const backendUrl = `http://127.0.0.1:${backend.port}`;
  const models = new Map<string, { child: ChildProcess; port: number }>();
  for (const mode of MODES) models.set(mode, await startChild(['model', `${backendUrl}/v1`, mode]));
  try {
    const results = new Map<string, { bytes: number[][]; cpu: number[][] }>(MODES.map((m) => [m, { bytes: [], cpu: [] }]));
    for (const mode of MODES) await rollout(`http://127.0.0.1:${models.get(mode)!.port}`, models.get(mode)!.child.pid!, backendUrl, 2, 0); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of round % 2 ? [...MODES].reverse() : MODES) {
        const m = models.get(mode)!;
        const r = await rollout(`http://127.0.0.1:${m.port}`, m.child.pid!, backendUrl, 5);
        results.get(mode)!.bytes.push(r.bytes);
        results.get(mode)!.cpu.push(r.cpu);
      }
    }
    console.log(`one rollout of ${TURNS} turns through vllm_model (token ids on), ${ROUNDS} rounds, medians; CPU = vllm_model user+sys per call`);
    console.log('| mode | turn | bytes to vLLM | vllm_model CPU µs/call |');
    console.log('|---|---|---|---|');
    const at = (mode: string, what: 'bytes' | 'cpu', turn: number) => median(results.get(mode)![what].map((run) => run[turn - 1]!));
    for (const mode of MODES) {
      for (const t of MARKS) console.log(`| ${mode} | ${t} | ${Math.round(at(mode, 'bytes', t))} | ${Math.round(at(mode, 'cpu', t))} |`);
    }
    const last = TURNS;
    const half = Math.floor(TURNS / 2);
    for (const mode of MODES) console.log(`${mode}: request at turn ${last} / turn ${half} = ${(at(mode, 'bytes', last) / at(mode, 'bytes', half)).toFixed(2)}x`);
    for (const t of MARKS) console.log(`turn ${t}: CPU last / none = ${(at('last', 'cpu', t) / at('none', 'cpu', t)).toFixed(2)}, all / none = ${(at('all', 'cpu', t) / at('none', 'cpu', t)).toFixed(2)}`);
  } finally {
    backend.child.kill();
    for (const m of models.values()) m.child.kill();
    await agent.close();
  }
}

const role = process.argv[2];
if (role === 'backend') backendMain();
else if (role === 'model') void modelMain(process.argv[3]!, process.argv[4]!);
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
