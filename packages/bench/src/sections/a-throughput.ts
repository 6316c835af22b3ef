/** A: N rollouts at concurrency C through simple_agent + simple_weather + openai_model against a stub model on 127.0.0.1, next to a bare node:http chain with the same hops, same run. */
import type { BenchHost } from '../host.js';
import { BARE_CHAIN, STUB_MODEL, cpuMs, cpuUse, drive, fmt, oursStack, spawnChild, stopChild, type CpuUse, type DriveResult } from '../stack.js';

export async function sectionThroughput(host: BenchHost, n: number, c: number, delayMs: number): Promise<void> {
  const stubScript = STUB_MODEL;
  const stub = await spawnChild(host, stubScript, ['--delay-ms', String(delayMs)]);
  try {
    // Ours.
    const { fleet } = await oursStack(host, stub.port, 1, Math.min(c, 1024));
    const agent = fleet.servers.find((s) => s.name === 'simple_weather_simple_agent')!;
    await drive(`${agent.url}/run`, Math.min(500, n), Math.min(c, 64));
    const pids = fleet.servers.map((s) => ({ name: s.name, pid: s.child.pid! }));
    const cpu0 = pids.map((p) => cpuMs(p.pid));
    const ours = await drive(`${agent.url}/run`, n, c);
    const oursCpu = pids.map((p, i) => cpuUse(p.name, p.pid, cpu0[i]!, n));
    await fleet.stop();

    // Bare node:http chain.
    const bareScript = BARE_CHAIN;
    const res = await spawnChild(host, bareScript, ['--role', 'resources']);
    const model = await spawnChild(host, bareScript, ['--role', 'model', '--stub-port', String(stub.port)]);
    const bareAgent = await spawnChild(host, bareScript, ['--role', 'agent', '--resources-port', String(res.port), '--model-port', String(model.port)]);
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

