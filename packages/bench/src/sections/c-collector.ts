/** C: ng-collect-rollouts peak memory on a large input file. */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@nemo-gym/core/config';
import type { BenchHost } from '../host.js';
import { ROW, STUB_MODEL, fmt, oursStack, peakRssMb, spawnChild, stopChild } from '../stack.js';

export async function sectionCollector(host: BenchHost, rows: number): Promise<void> {
  const stub = await spawnChild(host, STUB_MODEL, ['--delay-ms', '0']);
  const dir = mkdtempSync(join(tmpdir(), 'ng-bench-'));
  try {
    const { fleet, config } = await oursStack(host, stub.port, 1, 1024);
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

