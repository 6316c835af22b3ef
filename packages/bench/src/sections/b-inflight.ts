/** B: many rollouts in flight at once (the stub holds every answer for a while). */
import { readdirSync } from 'node:fs';
import { request } from 'undici';
import type { BenchHost } from '../host.js';
import { STUB_MODEL, drive, fmt, oursStack, peakRssMb, spawnChild, stopChild } from '../stack.js';

export async function sectionInFlight(host: BenchHost, n: number, delayMs: number): Promise<void> {
  const stub = await spawnChild(host, STUB_MODEL, ['--delay-ms', String(delayMs)]);
  try {
    // The agent holds every rollout's socket (one process may open 20,000 files here), so its
    // own pools to the model and the resources server stay at 1024 sockets each.
    const { fleet } = await oursStack(host, stub.port, 1, 1024);
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

