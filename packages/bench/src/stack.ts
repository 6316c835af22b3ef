/**
 * What sections A-C share: the stub model and the bare chain as child processes, CPU and memory
 * of a process from /proc, the /run load driver and the NeMo Gym stack under test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { Agent, request } from 'undici';
import { findOpenPort, parseGlobalConfig, type ConfigDict } from '@nemo-gym/core/config';
import type { BenchFleet, BenchHost } from './host.js';

/** The compiled stub model and bare node:http chain, started as child processes. */
export const STUB_MODEL = fileURLToPath(new URL('./stub-model.js', import.meta.url));
export const BARE_CHAIN = fileURLToPath(new URL('./bare-chain.js', import.meta.url));

export interface Child {
  proc: ChildProcess;
  port: number;
}

export async function spawnChild(host: BenchHost, script: string, args: string[]): Promise<Child> {
  // The stub and the bare chain run with the same node flags as the servers ng-run starts (its
  // defaults and NEMO_GYM_NODE_ARGS, e.g. "--cpu-prof"), so both stacks get the same V8 settings.
  const nodeArgs = host.nodeArgs();
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
export function stopChild(c: Child): void {
  c.proc.stdin?.end();
  setTimeout(() => {
    if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGTERM');
  }, 2000).unref();
}

const CLK_TCK = 100;
/** User and system CPU time of a process so far, in ms (Linux /proc; NaN elsewhere). */
export function cpuMs(pid: number): { user: number; sys: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: (Number(fields[11]) * 1000) / CLK_TCK, sys: (Number(fields[12]) * 1000) / CLK_TCK };
  } catch {
    return { user: NaN, sys: NaN };
  }
}

export interface CpuUse {
  name: string;
  /** CPU ms per rollout, user + system. */
  cpuPerRollout: number;
  sysPerRollout: number;
  rss: number;
}

export function cpuUse(name: string, pid: number, before: { user: number; sys: number }, n: number): CpuUse {
  const after = cpuMs(pid);
  const sys = (after.sys - before.sys) / n;
  return { name, cpuPerRollout: (after.user - before.user) / n + sys, sysPerRollout: sys, rss: peakRssMb(pid) };
}
export function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

export const ROW = {
  responses_create_params: {
    input: [
      { role: 'developer', content: 'You are a weather assistant.' },
      { role: 'user', content: 'What is the weather in Paris?' },
    ],
    tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }, strict: true, description: '' }],
  },
};

export interface DriveResult {
  n: number;
  errors: number;
  firstError?: string;
  wallS: number;
  rate: number;
  p50: number;
  p99: number;
}

/** Sends n /run requests with at most c in flight, over pipelined keep-alive sockets. */
export async function drive(url: string, n: number, c: number): Promise<DriveResult> {
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

export async function oursStack(host: BenchHost, stubPort: number, pipelining: number, connections: number): Promise<{ fleet: BenchFleet; config: ConfigDict }> {
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
  const fleet = host.fleet(config);
  await fleet.start();
  await fleet.waitReady();
  return { fleet, config };
}

export function fmt(x: number, d = 1): string {
  return Number.isFinite(x) ? x.toFixed(d) : '-';
}

