/**
 * `pnpm bench`: rollout throughput and overhead, measured, not asserted.
 *
 * A: N rollouts at concurrency C through simple_agent + simple_weather + openai_model against a
 *    stub model on 127.0.0.1, next to a bare node:http chain with the same hops, same run.
 * B: many rollouts in flight at once (stub holds every answer for a while).
 * C: (optional) ng-collect-rollouts peak memory on a large input file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { Agent, request } from 'undici';
import { findOpenPort, parseGlobalConfig, repoRoot, type ConfigDict } from '@nemo-gym/core/config';
import { UsageError } from '@nemo-gym/core/errors';
import { serverNodeArgs, type CommandSpec } from '../runtime.js';
import { ServerFleet } from '../commands/run.js';
import { sectionCompCoding } from './comp-coding.js';
import { sectionFleet, sectionQueue, sectionReplicas } from './bench-fleet.js';

const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));

interface Child {
  proc: ChildProcess;
  port: number;
}

async function spawnChild(script: string, args: string[]): Promise<Child> {
  // The stub and the bare chain run with the same node flags as the servers ng-run starts (its
  // defaults and NEMO_GYM_NODE_ARGS, e.g. "--cpu-prof"), so both stacks get the same V8 settings.
  const nodeArgs = serverNodeArgs();
  const proc = spawn(process.execPath, [...nodeArgs, script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    const rl = createInterface({ input: proc.stdout! });
    rl.on('line', (l) => {
      const m = /^ready (\d+)/.exec(l);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (c) => reject(new Error(`${script} exited with ${c}`)));
  });
  return { proc, port };
}

/** Closing stdin lets the child exit on its own (and write a --cpu-prof profile); SIGTERM if it lingers. */
function stopChild(c: Child): void {
  c.proc.stdin?.end();
  setTimeout(() => {
    if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGTERM');
  }, 2000).unref();
}

const CLK_TCK = 100;
/** User and system CPU time of a process so far, in ms (Linux /proc; NaN elsewhere). */
function cpuMs(pid: number): { user: number; sys: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: (Number(fields[11]) * 1000) / CLK_TCK, sys: (Number(fields[12]) * 1000) / CLK_TCK };
  } catch {
    return { user: NaN, sys: NaN };
  }
}

interface CpuUse {
  name: string;
  /** CPU ms per rollout, user + system. */
  cpuPerRollout: number;
  sysPerRollout: number;
  rss: number;
}

function cpuUse(name: string, pid: number, before: { user: number; sys: number }, n: number): CpuUse {
  const after = cpuMs(pid);
  const sys = (after.sys - before.sys) / n;
  return { name, cpuPerRollout: (after.user - before.user) / n + sys, sysPerRollout: sys, rss: peakRssMb(pid) };
}
function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

const ROW = {
  responses_create_params: {
    input: [
      { role: 'developer', content: 'You are a weather assistant.' },
      { role: 'user', content: 'What is the weather in Paris?' },
    ],
    tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }, strict: true, description: '' }],
  },
};

interface DriveResult {
  n: number;
  errors: number;
  firstError?: string;
  wallS: number;
  rate: number;
  p50: number;
  p99: number;
}

/** Sends n /run requests with at most c in flight, over pipelined keep-alive sockets. */
async function drive(url: string, n: number, c: number): Promise<DriveResult> {
  // One socket per request in flight: a Node HTTP/1.1 server answers pipelined requests one at a time.
  const dispatcher = new Agent({ connections: c, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 0, bodyTimeout: 0, connect: { timeout: 60_000 } });
  const body = JSON.stringify(ROW);
  const lat: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < n) {
      next++;
      const t0 = performance.now();
      try {
        const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher, idempotent: true });
        const text = await res.body.text();
        if (res.statusCode !== 200 || !text.includes('"reward":1')) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
        lat.push(performance.now() - t0);
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: c }, worker));
  const wallS = (performance.now() - started) / 1000;
  await dispatcher.close();
  lat.sort((a, b) => a - b);
  const pct = (p: number) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]! : NaN);
  return { n, errors, firstError, wallS, rate: (n - errors) / wallS, p50: pct(0.5), p99: pct(0.99) };
}

async function oursStack(stubPort: number, pipelining: number, connections: number): Promise<{ fleet: ServerFleet; config: ConfigDict }> {
  const headPort = await findOpenPort([]);
  const { config } = await parseGlobalConfig({
    skipEnv: true,
    argv: [
      '+config_paths=[resources_servers/simple_weather/configs/simple_weather.yaml,responses_api_models/openai_model/configs/openai_model.yaml]',
      `+policy_base_url=http://127.0.0.1:${stubPort}/v1`,
      '+policy_api_key=bench-not-a-key',
      '+policy_model_name=stub',
      `+head_server.port=${headPort}`,
      `+http_pipelining=${pipelining}`,
      `+http_connections_per_host=${connections}`,
      // One socket per held model request, so the stub really sees them all at once.
      `+policy_model.responses_api_models.openai_model.max_connections_per_host=${connections}`,
    ],
  });
  const fleet = new ServerFleet(config, { out: () => undefined });
  await fleet.start();
  await fleet.waitReady();
  return { fleet, config };
}

function fmt(x: number, d = 1): string {
  return Number.isFinite(x) ? x.toFixed(d) : '-';
}

function num(config: ConfigDict, key: string, def: number): number {
  const v = config[key];
  return typeof v === 'number' ? v : def;
}

async function sectionThroughput(n: number, c: number, delayMs: number): Promise<void> {
  const stubScript = here('./stub-model.js');
  const stub = await spawnChild(stubScript, ['--delay-ms', String(delayMs)]);
  try {
    // Ours.
    const { fleet } = await oursStack(stub.port, 1, Math.min(c, 1024));
    const agent = fleet.servers.find((s) => s.name === 'simple_weather_simple_agent')!;
    await drive(`${agent.url}/run`, Math.min(500, n), Math.min(c, 64));
    const pids = fleet.servers.map((s) => ({ name: s.name, pid: s.child.pid! }));
    const cpu0 = pids.map((p) => cpuMs(p.pid));
    const ours = await drive(`${agent.url}/run`, n, c);
    const oursCpu = pids.map((p, i) => cpuUse(p.name, p.pid, cpu0[i]!, n));
    await fleet.stop();

    // Bare node:http chain.
    const bareScript = here('./bare-chain.js');
    const res = await spawnChild(bareScript, ['--role', 'resources']);
    const model = await spawnChild(bareScript, ['--role', 'model', '--stub-port', String(stub.port)]);
    const bareAgent = await spawnChild(bareScript, ['--role', 'agent', '--resources-port', String(res.port), '--model-port', String(model.port)]);
    const bare = [
      { name: 'agent', c: bareAgent },
      { name: 'resources', c: res },
      { name: 'model', c: model },
    ];
    await drive(`http://127.0.0.1:${bareAgent.port}/run`, Math.min(500, n), Math.min(c, 64));
    const b0 = bare.map((b) => cpuMs(b.c.proc.pid!));
    const bareRes = await drive(`http://127.0.0.1:${bareAgent.port}/run`, n, c);
    const bareCpu = bare.map((b, i) => cpuUse(b.name, b.c.proc.pid!, b0[i]!, n));
    for (const b of bare) stopChild(b.c);

    const row = (label: string, r: DriveResult, cpu: { cpuPerRollout: number }[]) =>
      `${label.padEnd(34)} ${fmt(r.rate).padStart(9)} ${fmt(r.p50).padStart(9)} ${fmt(r.p99).padStart(9)} ${fmt(cpu.reduce((a, x) => a + x.cpuPerRollout, 0), 3).padStart(10)} ${String(r.errors).padStart(7)}`;
    console.log(`\n== A. ${n} rollouts at concurrency ${c}, stub delay ${delayMs} ms (8 HTTP hops per rollout) ==`);
    console.log(`${'stack'.padEnd(34)} ${'rollout/s'.padStart(9)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'CPU ms/r'.padStart(10)} ${'errors'.padStart(7)}`);
    console.log(row('NeMo Gym TS (agent+weather+openai)', ours, oursCpu));
    console.log(row('bare node:http chain', bareRes, bareCpu));
    console.log(`throughput ratio ours/bare: ${fmt(ours.rate / bareRes.rate, 2)}`);
    console.log(`per server: ${'CPU ms/rollout'.padStart(14)} ${'(of it system)'.padStart(14)} ${'peak RSS MB'.padStart(11)}`);
    const line = (label: string, p: CpuUse) => console.log(`  ${label.padEnd(30)} ${fmt(p.cpuPerRollout, 3).padStart(14)} ${fmt(p.sysPerRollout, 3).padStart(14)} ${fmt(p.rss).padStart(11)}`);
    for (const p of oursCpu) line(p.name, p);
    for (const p of bareCpu) line(`bare ${p.name}`, p);
    if (ours.firstError) console.log(`first error (ours): ${ours.firstError}`);
    if (bareRes.firstError) console.log(`first error (bare): ${bareRes.firstError}`);
  } finally {
    stopChild(stub);
  }
}

async function sectionInFlight(n: number, delayMs: number): Promise<void> {
  const stub = await spawnChild(here('./stub-model.js'), ['--delay-ms', String(delayMs)]);
  try {
    // The agent holds every rollout's socket (one process may open 20,000 files here), so its
    // own pools to the model and the resources server stay at 1024 sockets each.
    const { fleet } = await oursStack(stub.port, 1, 1024);
    const agent = fleet.servers.find((s) => s.name === 'simple_weather_simple_agent')!;
    let maxFds = 0;
    const sampler = setInterval(() => {
      try {
        maxFds = Math.max(maxFds, readdirSync(`/proc/${agent.child.pid}/fd`).length);
      } catch {
        /* not on Linux */
      }
    }, 250);
    const r = await drive(`${agent.url}/run`, n, n);
    clearInterval(sampler);
    const stats = (await (await request(`http://127.0.0.1:${stub.port}/stats`)).body.json()) as { maxInFlight: number; served: number };
    console.log(`\n== B. ${n} rollouts in flight at once, stub delay ${delayMs} ms ==`);
    console.log(`completed ${n - r.errors}/${n}, errors ${r.errors}, wall ${fmt(r.wallS)} s, p50 ${fmt(r.p50 / 1000, 2)} s, p99 ${fmt(r.p99 / 1000, 2)} s`);
    console.log(`agent process: at most ${maxFds} open files at once (one socket per rollout in flight, plus its pools)`);
    console.log(`most model requests held by the stub at once: ${stats.maxInFlight} (model pool: 1024 sockets)`);
    for (const s of fleet.servers) console.log(`  ${s.name.padEnd(30)} peak RSS ${fmt(peakRssMb(s.child.pid!))} MB`);
    if (r.firstError) console.log(`first error: ${r.firstError}`);
    await fleet.stop();
  } finally {
    stopChild(stub);
  }
}

async function sectionCollector(rows: number): Promise<void> {
  const stub = await spawnChild(here('./stub-model.js'), ['--delay-ms', '0']);
  const dir = mkdtempSync(join(tmpdir(), 'ng-bench-'));
  try {
    const { fleet, config } = await oursStack(stub.port, 1, 1024);
    const input = join(dir, 'input.jsonl');
    const line = `${JSON.stringify(ROW)}\n`;
    writeFileSync(input, line.repeat(rows));
    const head = config.head_server as { port: number };
    const bin = join(repoRoot(), 'packages', 'cli', 'bin', 'ng-collect-rollouts.js');
    const started = Date.now();
    const argv = [process.execPath, bin, `+head_server.port=${head.port}`, '+agent_name=simple_weather_simple_agent', `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${join(dir, 'out.jsonl')}`, '+num_samples_in_parallel=256'];
    // GNU time reports the exact peak RSS when it is installed; otherwise /proc is sampled.
    const gnuTime = existsSync('/usr/bin/time');
    const proc = gnuTime
      ? spawn('/usr/bin/time', ['-v', ...argv], { stdio: ['ignore', 'ignore', 'pipe'] })
      : spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'ignore'] });
    let timeReport = '';
    proc.stderr?.on('data', (d: Buffer) => (timeReport += d.toString()));
    let peak = 0;
    const poll = setInterval(() => {
      const v = peakRssMb(proc.pid!);
      if (Number.isFinite(v)) peak = Math.max(peak, v);
    }, 100);
    const code = await new Promise<number | null>((r) => proc.once('exit', r));
    clearInterval(poll);
    const wall = (Date.now() - started) / 1000;
    console.log(`\n== C. ng-collect-rollouts on ${rows} rows ==`);
    const maxRss = /Maximum resident set size \(kbytes\): (\d+)/.exec(timeReport);
    const peakText = maxRss ? `${fmt(Number(maxRss[1]) / 1024)} MB (GNU time -v)` : `${fmt(peak)} MB (sampled every 100 ms)`;
    console.log(`exit ${code}, ${fmt(rows / wall)} rollouts/s, collector peak RSS ${peakText}`);
    await fleet.stop();
  } finally {
    stopChild(stub);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** D-F, H: the component benchmarks that live beside their packages, run as they are documented. */
async function sectionExtras(want: (...letters: string[]) => boolean): Promise<void> {
  const root = repoRoot();
  const runs: [string, string, string[]][] = [
    ['D. vllm_model overhead per call vs calling the stub directly', 'responses_api_models/vllm_model/dist/bench.js', ['--rounds', '3']],
    ['E. instruction_following verify at 256 concurrent requests', 'resources_servers/instruction_following/dist/bench.js', ['--concurrency', '256', '--requests', '3000', '--seconds', '20']],
    ['F. math-verify answer checks', 'packages/math-verify/dist/bench.js', ['5']],
    ['H. workbench verify at 256 concurrent requests (example rows)', 'resources_servers/workbench/dist/bench.js', ['--concurrency', '256', '--requests', '3000', '--seconds', '20']],
    ['M. mini_swe_agent: 16 concurrent episodes against concurrency 4 (live sandboxes)', 'responses_api_agents/mini_swe_agent/dist/bench.js', ['--episodes', '16', '--concurrency', '4']],
    ['N. vllm_model, one 64-turn rollout with token ids: bytes to vLLM and CPU per call by token_id_forwarding mode', 'responses_api_models/vllm_model/dist/bench-turns.js', ['--turns', '64', '--rounds', '4']],
    ['P. token capture + trajectory assembly per model call (vllm_model, 8-call harness rollouts) beside the same calls without capture', 'responses_api_models/vllm_model/dist/bench-capture.js', ['--rounds', '5']],
    ['Q. harness_agent: 256 concurrent harness rollouts, a stub command making 8 model calls each (leaked processes and folders)', 'responses_api_agents/harness_agent/dist/bench.js', ['--rollouts', '256', '--calls', '8', '--concurrency', '256']],
  ];
  for (const [title, script, args] of runs) {
    if (!want(title[0]!)) continue;
    console.log(`\n== ${title} ==`);
    const proc = spawn(process.execPath, [join(root, script), ...args], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    const code = await new Promise<number | null>((r) => proc.once('exit', r));
    if (code !== 0) console.log(`(${script} exited with ${code})`);
  }
}

/** O: the Python package's run_examples beside ng-collect-rollouts, same stack and stub (scripts/bench-python-surface.py). */
async function sectionPython(n: number, c: number): Promise<void> {
  console.log(`\n== O. Python run_examples vs ng-collect-rollouts: ${n} rollouts per round at ${c} in flight, same stack and stub ==`);
  const proc = spawn('python3', [join(repoRoot(), 'scripts', 'bench-python-surface.py'), '--rollouts', String(n), '--concurrency', String(c)], { cwd: repoRoot(), stdio: ['ignore', 'inherit', 'inherit'] });
  const code = await new Promise<number | null>((r) => {
    proc.once('exit', r);
    proc.once('error', () => r(null));
  });
  if (code !== 0) console.log(`(python3 scripts/bench-python-surface.py exited with ${code})`);
}

/** `+sections=[J,K]` as a set of upper-case letters; null runs every section. */
function sectionList(config: ConfigDict): Set<string> | null {
  const v = config.sections;
  if (v === undefined || v === null) return null;
  const letters = (Array.isArray(v) ? v.map(String) : String(v).split(',')).map((s) => s.trim().toUpperCase()).filter(Boolean);
  const bad = letters.filter((l) => !/^[A-Q]$/.test(l));
  if (bad.length) throw new UsageError(`+sections takes section letters A-Q (e.g. +sections=[J,K]), got ${bad.map((b) => JSON.stringify(b)).join(', ')}.`);
  return new Set(letters);
}

export const benchCommand: CommandSpec = {
  name: 'bench',
  summary: 'Measure rollout throughput, latency, CPU and memory against a bare node:http chain',
  pnpmScript: 'bench',
  flags: [
    { name: 'rollouts', type: 'int', description: 'rollouts in section A (default 10000)' },
    { name: 'concurrency', type: 'int', description: 'concurrency in section A (default 512)' },
    { name: 'delay_ms', type: 'int', description: 'stub model delay in section A (default 0)' },
    { name: 'inflight', type: 'int', description: 'rollouts held in flight in section B (default 16000; 0 skips)' },
    { name: 'inflight_delay_ms', type: 'int', description: 'stub delay in section B (default 2000)' },
    { name: 'collector_rows', type: 'int', description: 'input rows for section C (default 0 = skip; e.g. 200000)' },
    { name: 'comp_coding_verifies', type: 'int', description: 'verifies in section G, comp_coding sandboxed vs plain python3 at concurrency 64 (default 640; 0 skips)' },
    { name: 'replicas_seconds', type: 'int', description: 'seconds per measurement in section I, instruction_following verify with 2 replicas vs 1 (default 10; 0 skips)' },
    { name: 'queue_rollouts', type: 'int', description: 'rollouts per round in section J, Redis queue vs local collector (default 20000: a round of about a second, so start-up and drain weigh little; 0 skips)' },
    { name: 'fleet_inflight', type: 'int', description: 'requests held in flight in section K, one client routing to 64 stub replicas (default 16000; 0 skips)' },
    { name: 'python_rollouts', type: 'int', description: 'rollouts per round in section O, the Python package\'s run_examples vs ng-collect-rollouts at concurrency 512 (default 10000; 0 skips)' },
    { name: 'sections', type: 'list', description: 'run only these sections, e.g. +sections=[J,K] (letters A-Q; D-F, H, M, N, P and Q are the per-component extras; default all)' },
    { name: 'extras', type: 'bool', description: 'run the per-component benchmarks D-F, H, M and N: vllm_model overhead, instruction_following verify, math-verify, workbench verify, mini_swe_agent, vllm_model over 64 turns (default true)' },
  ],
  main: async (config) => {
    const n = num(config, 'rollouts', 10000);
    const c = num(config, 'concurrency', 512);
    const only = sectionList(config);
    const want = (...letters: string[]) => only === null || letters.some((l) => only.has(l));
    console.log(`NeMo Gym TS benchmark — node ${process.version}, all servers on 127.0.0.1${only ? ` (sections ${[...only].join(', ')})` : ''}`);
    if (want('A')) await sectionThroughput(n, c, num(config, 'delay_ms', 0));
    const inflight = num(config, 'inflight', 16000);
    if (want('B') && inflight > 0) await sectionInFlight(inflight, num(config, 'inflight_delay_ms', 2000));
    const rows = num(config, 'collector_rows', 0);
    if (want('C') && rows > 0) await sectionCollector(rows);
    if (want('D', 'E', 'F', 'H', 'M', 'N', 'P', 'Q') && config.extras !== false) await sectionExtras(want);
    if (want('G') && num(config, 'comp_coding_verifies', 640) > 0) await sectionCompCoding(num(config, 'comp_coding_verifies', 640), 64);
    if (want('I') && num(config, 'replicas_seconds', 10) > 0) await sectionReplicas(num(config, 'replicas_seconds', 10));
    if (want('J') && num(config, 'queue_rollouts', 20000) > 0) await sectionQueue(num(config, 'queue_rollouts', 20000), 256, 0);
    if (want('K') && num(config, 'fleet_inflight', 16000) > 0) await sectionFleet(num(config, 'fleet_inflight', 16000), 2000);
    if (want('O') && num(config, 'python_rollouts', 10000) > 0) await sectionPython(num(config, 'python_rollouts', 10000), 512);
    return 0;
  },
};
