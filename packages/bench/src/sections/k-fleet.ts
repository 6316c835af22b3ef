/**
 * `pnpm bench` section K: one client routing to 64 stub replicas with many requests held in flight: completion, and
 * the client's CPU per call with routing vs the same calls to one address.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { ServerClient } from '@nemo-gym/core/client';
import { SHARED_NOTE } from '../stats.js';

/** 64 stub servers in one child process; resolves with their ports. */
async function startStubReplicas(count: number, delayMs: number): Promise<{ proc: ChildProcess; ports: number[] }> {
  const code = `
    const http = require('node:http');
    const ports = [];
    let pending = ${count};
    for (let i = 0; i < ${count}; i++) {
      const s = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => setTimeout(() => { res.writeHead(200, {'content-type': 'application/json'}); res.end('{"ok":true}'); }, req.method === 'GET' ? 0 : ${delayMs}));
      });
      s.keepAliveTimeout = 60000;
      s.listen(0, '127.0.0.1', 65535, () => { ports[i] = s.address().port; if (--pending === 0) console.log('ready ' + ports.join(',')); });
    }
    process.stdin.on('end', () => process.exit(0)); process.stdin.resume();`;
  const proc = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] });
  const ports = await new Promise<number[]>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (l) => {
      if (l.startsWith('ready ')) resolve(l.slice(6).split(',').map(Number));
    });
    proc.once('exit', (c) => reject(new Error(`stub replicas exited with ${c}`)));
  });
  return { proc, ports };
}

/** The root cause of a failed call, short: an errno code (ECONNRESET, EMFILE, …), an undici code, or the message. */
function failureCause(err: unknown): string {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && !code.startsWith('NG_ERR_')) return code;
    const next = (e as { cause?: unknown }).cause;
    if (!next) break;
    e = next;
  }
  const msg = String((err as Error)?.message ?? err);
  return msg.length > 120 ? `${msg.slice(0, 120)}…` : msg;
}

/** Open files of a process now (Linux /proc), or null where that cannot be read. */
function openFiles(pid: number | 'self'): number | null {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}

/** The soft limit on open files of a process (Linux /proc), or null. */
function openFilesLimit(pid: number | 'self'): number | null {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

async function heldCalls(
  client: ServerClient,
  name: string,
  inFlight: number,
  serverPid?: number,
): Promise<{ ok: number; failed: number; seconds: number; cpuUsPerCall: number; causes: Map<string, number>; peakFiles: { client: number | null; servers: number | null } }> {
  // Open files of both sides, sampled while the calls are held.
  const peakFiles = { client: openFiles('self'), servers: serverPid ? openFiles(serverPid) : null };
  const sampler = setInterval(() => {
    const c = openFiles('self');
    const sv = serverPid ? openFiles(serverPid) : null;
    if (c !== null) peakFiles.client = Math.max(peakFiles.client ?? 0, c);
    if (sv !== null) peakFiles.servers = Math.max(peakFiles.servers ?? 0, sv);
  }, 100);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const results = await Promise.allSettled(Array.from({ length: inFlight }, () => client.post(name, '/run', '{}')));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  const causes = new Map<string, number>();
  let ok = 0;
  for (const r of results) {
    const cause = r.status === 'rejected' ? failureCause(r.reason) : r.value.ok ? null : `HTTP ${r.value.status}`;
    if (cause === null) ok++;
    else causes.set(cause, (causes.get(cause) ?? 0) + 1);
  }
  return { ok, failed: inFlight - ok, seconds, cpuUsPerCall: (cpu.user + cpu.system) / inFlight, causes, peakFiles };
}

const causeText = (causes: Map<string, number>) => (causes.size ? ` [${[...causes].sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ×${n}`).join(', ')}]` : '');

export async function sectionFleet(inFlight: number, delayMs: number): Promise<void> {
  console.log(`\n== K. one client routing to 64 stub replicas, ${inFlight} requests in flight (each held ${delayMs} ms) ==`);
  // Every call in flight holds one socket on each side: both processes need that many open files.
  const limit = openFilesLimit('self');
  if (limit !== null && limit < inFlight + 512) console.log(`  note: this process may open ${limit} files (ulimit -n), fewer than ${inFlight} sockets and some room; calls beyond it fail with EMFILE`);
  const stubs = await startStubReplicas(64, delayMs);
  const replicas = stubs.ports.map((p) => `127.0.0.1:${p}`);
  const routed = new ServerClient({ globalConfig: { env: { resources_servers: { env: { host: '127.0.0.1', port: stubs.ports[0], replicas } } } }, connectionsPerHost: 4096, retry: { maxAttempts: 1 } });
  let direct: ServerClient | null = null;
  try {
    // Warm-up opens sockets. The two clients take turns, each closed before the other runs: their
    // idle keep-alive sockets would otherwise count against the same open-files limits.
    await heldCalls(routed, 'env', Math.min(inFlight, 4096));
    const r = await heldCalls(routed, 'env', inFlight, stubs.proc.pid);
    const set = routed.replicaSet('env')!;
    const t0 = process.cpuUsage();
    const picks = 200_000;
    for (let i = 0; i < picks; i++) set.pick();
    const pickCpu = process.cpuUsage(t0);
    const pickUs = (pickCpu.user + pickCpu.system) / picks;
    await routed.close();
    direct = new ServerClient({ globalConfig: { env: { resources_servers: { env: { host: '127.0.0.1', port: stubs.ports[0] } } } }, connectionsPerHost: 4096, retry: { maxAttempts: 1 } });
    await heldCalls(direct, 'env', Math.min(inFlight, 4096));
    const d = await heldCalls(direct, 'env', Math.min(inFlight, 4096));
    console.log(`  routed over 64 replicas: ${r.ok}/${inFlight} ok (${r.failed} failed${causeText(r.causes)}) in ${r.seconds.toFixed(2)} s; client CPU ${r.cpuUsPerCall.toFixed(1)} µs per call (most calls open their socket)`);
    console.log(
      `  open files at the peak (sampled): client ${r.peakFiles.client ?? '?'} (limit ${limit ?? '?'}), stub replicas ${r.peakFiles.servers ?? '?'} (limit ${stubs.proc.pid ? (openFilesLimit(stubs.proc.pid) ?? '?') : '?'})`,
    );
    console.log(`  one address (4096 max)  : ${d.ok} ok (${d.failed} failed${causeText(d.causes)}) in ${d.seconds.toFixed(2)} s; client CPU ${d.cpuUsPerCall.toFixed(1)} µs per call`);
    console.log(`  routing CPU per call: the least-busy pick over 64 replicas: ${pickUs.toFixed(2)} µs  (${SHARED_NOTE})`);
  } finally {
    await routed.close();
    await direct?.close();
    stubs.proc.stdin?.end();
  }
}
