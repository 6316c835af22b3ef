/**
 * `pnpm bench` section I: instruction_following /verify throughput through ServerClient routing, 2 replicas vs 1, same
 * run, two ways: checks inline on each replica's own thread (`num_workers: 0`, so the replica
 * count is the parallelism; the acceptance ratio), and one check worker thread per replica
 * (`num_workers: 1`, where one replica already keeps two threads busy). The four fleets run side
 * by side and are measured in rounds of short windows, 1 and 2 replicas back to back, so that a
 * change in the machine's outside load between runs does not decide the ratio.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerClient } from '@nemo-gym/core/client';
import { textResponse } from '@nemo-gym/core/openai';
import { findOpenPort, parseGlobalConfig, sharedPath } from '@nemo-gym/core/config';
import type { BenchFleet, BenchHost } from '../host.js';
import { SHARED_NOTE, median } from '../stats.js';

function verifyRow(i: number): Record<string, unknown> {
  const para = 'Dr. Smith reviewed the results on Monday. The team, which had worked for months, was relieved! However, several questions remained open. ';
  const text = `<<Report ${i}>>\n\n${para.repeat(8)}\n\n***\n\n${para.repeat(5)}\n\nP.S. Thanks.`;
  return {
    id: i,
    instruction_id_list: ['detectable_format:title', 'length_constraints:number_sentences', 'punctuation:no_comma'],
    prompt: 'Write a short report.',
    kwargs: [{}, { num_sentences: 10, relation: 'at least' }, {}],
    responses_create_params: { input: [{ role: 'user', content: 'Write a short report.' }] },
    response: textResponse(text, { id: `resp_${i}`, model: 'bench' }),
  };
}

async function drive(concurrency: number, seconds: number, once: (i: number) => Promise<void>): Promise<{ n: number; errors: number; rate: number }> {
  let n = 0;
  let errors = 0;
  let next = 0;
  let firstError: unknown = null;
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        try {
          await once(next++);
          n++;
        } catch (err) {
          errors++;
          firstError ??= err;
        }
      }
    }),
  );
  if (firstError) console.log(`  first error: ${String((firstError as Error).message ?? firstError).slice(0, 300)}`);
  return { n, errors, rate: n / ((performance.now() - t0) / 1000) };
}

const CLK_TCK_MS = 10;

/**
 * CPU ms so far of a process's main thread and of everything else in it (check workers, libuv and V8
 * helpers, and threads that already ended, such as the watchdog of an inline time limit), from /proc;
 * NaN elsewhere.
 */
function threadCpuMs(pid: number): { main: number; others: number } {
  const ticks = (stat: string) => {
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * CLK_TCK_MS;
  };
  try {
    // The process's own line counts every thread it ever had; the first task is the main thread.
    const total = ticks(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    const main = ticks(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8'));
    return { main, others: total - main };
  } catch {
    return { main: NaN, others: NaN };
  }
}

interface VerifyRun {
  n: number;
  errors: number;
  rate: number;
  seconds: number;
  /** CPU µs per verify: this process (the client: ServerClient routing + HTTP), the replicas' main threads (HTTP, validation, hand-off), their other threads (the checks). */
  clientUs: number;
  mainUs: number;
  othersUs: number;
  /** CPU ns of one least-busy pick among this run's replicas (the router's share of the client). */
  pickNs: number;
}

interface VerifyFleet {
  replicas: number;
  workers: number;
  fleet: BenchFleet;
  client: ServerClient;
  dir: string;
  /** Measurement windows so far. */
  windows: VerifyRun[];
}

const VERIFY_BODIES = Array.from({ length: 64 }, (_, i) => JSON.stringify(verifyRow(i)));

function postVerify(client: ServerClient): (i: number) => Promise<void> {
  return async (i) => void (await client.post('instruction_following', '/verify', VERIFY_BODIES[i % 64]!)).raiseForStatus();
}

/** Starts `replicas` instruction_following processes with `workers` check threads each, and warms them up. */
async function startVerifyFleet(host: BenchHost, replicas: number, workers: number): Promise<VerifyFleet> {
  // Only the resources server: /verify needs no agent or model.
  const dir = mkdtempSync(join(tmpdir(), 'ng-bench-replicas-'));
  const yaml = join(dir, 'if.yaml');
  writeFileSync(yaml, 'instruction_following:\n  resources_servers:\n    instruction_following:\n      entrypoint: app.ts\n      domain: instruction_following\n');
  const args = [
    `+config_paths=[${yaml}]`,
    `++instruction_following.resources_servers.instruction_following.num_replicas=${replicas}`,
    `++instruction_following.resources_servers.instruction_following.num_workers=${workers}`,
    `+head_server.port=${await findOpenPort([])}`,
  ];
  const nltk = sharedPath('nltk_data');
  if (existsSync(nltk)) args.push(`++instruction_following.resources_servers.instruction_following.nltk_data_dir=${nltk}`);
  const { config } = await parseGlobalConfig({ skipEnv: true, argv: args });
  const fleet = host.fleet(config);
  try {
    await fleet.start();
    await fleet.waitReady();
  } catch (err) {
    await fleet.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const client = new ServerClient({ globalConfig: config, retry: { maxAttempts: 1 } });
  // Warm-up: every replica starts its pool and loads its data.
  await drive(16, 2, postVerify(client));
  return { replicas, workers, fleet, client, dir, windows: [] };
}

async function stopVerifyFleet(f: VerifyFleet): Promise<void> {
  await f.client.close();
  await f.fleet.stop();
  rmSync(f.dir, { recursive: true, force: true });
}

/** One measurement window of `seconds` at concurrency 64; its CPU per verify by process and thread. */
async function measureWindow(f: VerifyFleet, seconds: number): Promise<VerifyRun> {
  const pids = f.fleet.servers.map((s) => s.child.pid!);
  const before = pids.map(threadCpuMs);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const run = await drive(64, seconds, postVerify(f.client));
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const after = pids.map(threadCpuMs);
  const n = Math.max(1, run.n);
  const sum = (k: 'main' | 'others') => after.reduce((acc, a, i) => acc + a[k] - before[i]![k], 0);
  const w = { ...run, seconds: wall, clientUs: (cpu.user + cpu.system) / n, mainUs: (sum('main') * 1000) / n, othersUs: (sum('others') * 1000) / n, pickNs: NaN };
  f.windows.push(w);
  return w;
}

/** Every window of a fleet as one run (rates and CPU weighted by verifies), with the cost of one replica pick. */
function totalRun(f: VerifyFleet): VerifyRun {
  const n = f.windows.reduce((a, w) => a + w.n, 0);
  const seconds = f.windows.reduce((a, w) => a + w.seconds, 0);
  const weighted = (k: 'clientUs' | 'mainUs' | 'othersUs') => f.windows.reduce((a, w) => a + w[k] * w.n, 0) / Math.max(1, n);
  const set = f.client.replicaSet('instruction_following')!;
  const picks = 1_000_000;
  const p0 = process.cpuUsage();
  for (let i = 0; i < picks; i++) set.pick();
  const p1 = process.cpuUsage(p0);
  return {
    n,
    errors: f.windows.reduce((a, w) => a + w.errors, 0),
    rate: n / seconds,
    seconds,
    clientUs: weighted('clientUs'),
    mainUs: weighted('mainUs'),
    othersUs: weighted('othersUs'),
    pickNs: ((p1.user + p1.system) * 1000) / picks,
  };
}

function describeRun(label: string, r: VerifyRun, inline: boolean): string {
  const total = r.clientUs + r.mainUs + r.othersUs;
  const cores = (total * r.rate) / 1e6;
  const main = inline ? 'HTTP, validation and the checks' : 'HTTP, validation, hand-off';
  const others = inline ? 'time-limit watchdogs, libuv and V8 helpers' : 'the checks';
  return (
    `  ${label}: ${r.rate.toFixed(1)} verifies/s (${r.n} ok, ${r.errors} failed); CPU per verify ${total.toFixed(0)} µs = ` +
    `client ${r.clientUs.toFixed(0)} (HTTP; the replica pick ${r.pickNs.toFixed(0)} ns of it) + replica main threads ${r.mainUs.toFixed(0)} (${main}) + ` +
    `other replica threads ${r.othersUs.toFixed(0)} (${others}); ${cores.toFixed(2)} cores busy`
  );
}

const cost = (r: VerifyRun) => r.clientUs + r.mainUs + r.othersUs;

/** Ratio of each round's 2-replica window to its 1-replica window (taken back to back). */
function pairedRatios(one: VerifyFleet, two: VerifyFleet): number[] {
  return one.windows.map((w, i) => two.windows[i]!.rate / w.rate);
}

const fmtRatios = (xs: number[]) => xs.map((x) => `${x.toFixed(2)}x`).join(', ');

export async function sectionReplicas(host: BenchHost, seconds: number, rounds = 5): Promise<void> {
  const cores = availableParallelism();
  const window = seconds / rounds;
  console.log(
    `\n== I. instruction_following /verify through replica routing: 2 replicas vs 1 (${cores} cores, concurrency 64, ${seconds} s each in ${rounds} windows of ${window.toFixed(1)} s) ==`,
  );
  const load0 = loadavg()[0]!;
  // Four fleets, all started first; then rounds of one window each, the 1- and 2-replica windows of a
  // mode back to back (in alternating order), so each round's ratio compares the same outside load.
  const fleets: VerifyFleet[] = [];
  try {
    for (const [replicas, workers] of [[1, 0], [2, 0], [1, 1], [2, 1]] as const) fleets.push(await startVerifyFleet(host, replicas, workers));
    const [inline1, inline2, worker1, worker2] = fleets as [VerifyFleet, VerifyFleet, VerifyFleet, VerifyFleet];
    for (let r = 0; r < rounds; r++) {
      for (const pair of [[inline1, inline2], [worker1, worker2]]) {
        for (const f of r % 2 === 0 ? pair : [...pair].reverse()) await measureWindow(f, window);
      }
    }
    const load1 = loadavg()[0]!;
    const [i1, i2, w1, w2] = [inline1, inline2, worker1, worker2].map(totalRun) as [VerifyRun, VerifyRun, VerifyRun, VerifyRun];
    const inlineRatios = pairedRatios(inline1, inline2);
    const workerRatios = pairedRatios(worker1, worker2);
    const inlineRatio = median(inlineRatios);
    // One inline replica is one thread: on a machine with room it keeps a core busy. When it got much
    // less, other work held the cores, and two processes simply get a larger share of a contended
    // machine than one: the ratio then measures the scheduler, not the replicas.
    const replica1Cores = ((i1.mainUs + i1.othersUs) * i1.rate) / 1e6;
    const verdict =
      replica1Cores < 0.8
        ? `not judged: the 1-replica process kept only ${replica1Cores.toFixed(2)} of its core busy (other work on the machine), and 2 processes get a larger share of a contended machine than 1`
        : inlineRatio >= 1.5
          ? 'met'
          : 'NOT met';
    console.log(`  (a) checks inline on each replica's thread (num_workers: 0): a replica is one busy thread, so the replicas are the parallelism`);
    console.log(describeRun('1 replica ', i1, true));
    console.log(describeRun('2 replicas', i2, true));
    console.log(
      `  ratio     : ${inlineRatio.toFixed(2)}x median of the rounds (${fmtRatios(inlineRatios)}); overall ${(i2.rate / i1.rate).toFixed(2)}x. ` +
        `Target ≥ 1.5x, judged on this mode: ${verdict}`,
    );
    // What bounds it: the client runs on the same cores. One replica is at most one busy thread; two
    // cannot use more than every core at their cost per verify, the client's share included.
    const replica1 = i1.mainUs + i1.othersUs;
    console.log(
      `  bound     : at the 2-replica cost per verify (${cost(i2).toFixed(0)} µs, the client's ${i2.clientUs.toFixed(0)} µs included), ${cores} busy cores give at most ` +
        `${((cores * 1e6) / cost(i2)).toFixed(0)} verifies/s = ${((cores * 1e6) / cost(i2) / i1.rate).toFixed(2)}x this 1-replica run; with a whole core for the ` +
        `1-replica thread (${replica1.toFixed(0)} µs per verify) it would be ${((cores * replica1) / cost(i2)).toFixed(2)}x`,
    );
    console.log(`  (b) one check worker thread per replica (num_workers: 1): one replica already keeps its main thread and its worker busy`);
    console.log(describeRun('1 replica ', w1, false));
    console.log(describeRun('2 replicas', w2, false));
    console.log(`  ratio     : ${median(workerRatios).toFixed(2)}x median of the rounds (${fmtRatios(workerRatios)}); overall ${(w2.rate / w1.rate).toFixed(2)}x (not the acceptance ratio: see the bound)`);
    // What bounds the ratio: 2 replicas cannot use more than every core, at their own cost per verify.
    const t1 = cost(w1);
    const t2 = cost(w2);
    const ceiling = (cores * 1e6) / t2;
    console.log(
      `  bound     : at the 2-replica cost per verify (${t2.toFixed(0)} µs, ${(t2 / t1).toFixed(2)}x the 1-replica cost), ${cores} busy cores give at most ` +
        `${ceiling.toFixed(0)} verifies/s = ${(ceiling / w1.rate).toFixed(2)}x this 1-replica run, which kept ${((t1 * w1.rate) / 1e6).toFixed(2)} cores busy`,
    );
    console.log(
      `  across    : 2 inline replicas ${i2.rate.toFixed(1)} verifies/s vs 1 worker-mode replica ${w1.rate.toFixed(1)} = ${(i2.rate / w1.rate).toFixed(2)}x; ` +
        `CPU per verify inline ${cost(i2).toFixed(0)} µs vs worker mode ${cost(w2).toFixed(0)} µs (2 replicas each)`,
    );
    console.log(`  load      : ${load0.toFixed(1)} before, ${load1.toFixed(1)} after (1-minute average); ${SHARED_NOTE}`);
  } finally {
    for (const f of fleets) await stopVerifyFleet(f);
  }
}
