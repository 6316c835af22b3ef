/**
 * `pnpm bench` (ng-bench): rollout throughput and overhead, measured, not asserted. One module per
 * section under sections/; the letters, flags and printed tables are those `ng-bench --help` lists.
 */
import type { ConfigDict } from '@nemo-gym/core/config';
import { UsageError } from '@nemo-gym/core/errors';
import type { BenchHost } from './host.js';
import { sectionThroughput } from './sections/a-throughput.js';
import { sectionInFlight } from './sections/b-inflight.js';
import { sectionCollector } from './sections/c-collector.js';
import { sectionExtras } from './sections/extras.js';
import { sectionCompCoding } from './sections/g-comp-coding.js';
import { sectionReplicas } from './sections/i-replicas.js';
import { sectionQueue } from './sections/j-queue.js';
import { sectionFleet } from './sections/k-fleet.js';
import { sectionPython } from './sections/o-python.js';

function num(config: ConfigDict, key: string, def: number): number {
  const v = config[key];
  return typeof v === 'number' ? v : def;
}

/** `+sections=[J,K]` as a set of upper-case letters; null runs every section. */
function sectionList(config: ConfigDict): Set<string> | null {
  const v = config.sections;
  if (v === undefined || v === null) return null;
  const letters = (Array.isArray(v) ? v.map(String) : String(v).split(',')).map((s) => s.trim().toUpperCase()).filter(Boolean);
  const bad = letters.filter((l) => !/^[A-R]$/.test(l));
  if (bad.length) throw new UsageError(`+sections takes section letters A-R (e.g. +sections=[J,K]), got ${bad.map((b) => JSON.stringify(b)).join(', ')}.`);
  return new Set(letters);
}

/** The settings of `ng-bench`, given as +name=value. */
export const BENCH_FLAGS: readonly { name: string; type: 'int' | 'bool' | 'list'; description: string }[] = [
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
  { name: 'sections', type: 'list', description: 'run only these sections, e.g. +sections=[J,K] (letters A-R; D-F, H, M, N, P, Q and R are the per-component extras; default all)' },
  { name: 'extras', type: 'bool', description: 'run the per-component benchmarks D-F, H, M and N: vllm_model overhead, instruction_following verify, math-verify, workbench verify, mini_swe_agent, vllm_model over 64 turns (default true)' },
];

/** Runs the sections the config asks for (every one by default), printing each one's table. */
export async function runBench(config: ConfigDict, host: BenchHost): Promise<void> {
  const n = num(config, 'rollouts', 10000);
  const c = num(config, 'concurrency', 512);
  const only = sectionList(config);
  const want = (...letters: string[]) => only === null || letters.some((l) => only.has(l));
  console.log(`NeMo Gym TS benchmark — node ${process.version}, all servers on 127.0.0.1${only ? ` (sections ${[...only].join(', ')})` : ''}`);
  if (want('A')) await sectionThroughput(host, n, c, num(config, 'delay_ms', 0));
  const inflight = num(config, 'inflight', 16000);
  if (want('B') && inflight > 0) await sectionInFlight(host, inflight, num(config, 'inflight_delay_ms', 2000));
  const rows = num(config, 'collector_rows', 0);
  if (want('C') && rows > 0) await sectionCollector(host, rows);
  if (want('D', 'E', 'F', 'H', 'M', 'N', 'P', 'Q', 'R') && config.extras !== false) await sectionExtras(want);
  if (want('G') && num(config, 'comp_coding_verifies', 640) > 0) await sectionCompCoding(num(config, 'comp_coding_verifies', 640), 64);
  if (want('I') && num(config, 'replicas_seconds', 10) > 0) await sectionReplicas(host, num(config, 'replicas_seconds', 10));
  if (want('J') && num(config, 'queue_rollouts', 20000) > 0) await sectionQueue(num(config, 'queue_rollouts', 20000), 256, 0);
  if (want('K') && num(config, 'fleet_inflight', 16000) > 0) await sectionFleet(num(config, 'fleet_inflight', 16000), 2000);
  if (want('O') && num(config, 'python_rollouts', 10000) > 0) await sectionPython(num(config, 'python_rollouts', 10000), 512);
}
