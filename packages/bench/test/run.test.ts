import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BENCH_FLAGS, runBench, type BenchHost } from '../src/index.js';
import { numberArg, runVerifyLoad } from '../src/load.js';

/** A host whose fleet must never be started: the tests below run no section that needs one. */
function idleHost(): BenchHost & { fleets: number } {
  const host = {
    fleets: 0,
    fleet: () => {
      host.fleets++;
      throw new Error('no fleet expected');
    },
    nodeArgs: () => [],
  };
  return host;
}

describe('runBench: choosing sections', () => {
  afterEach(() => vi.restoreAllMocks());

  it('refuses a letter that names no section, before running anything', async () => {
    const host = idleHost();
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    await expect(runBench({ sections: ['A', 'z'] }, host)).rejects.toMatchObject({ code: 'NG_ERR_USAGE', message: expect.stringContaining('"Z"') });
    expect(log).not.toHaveBeenCalled();
    expect(host.fleets).toBe(0);
  });

  it('runs only the sections asked for: D with +extras=false runs nothing and says which sections it took', async () => {
    const host = idleHost();
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    await runBench({ sections: 'd', extras: false }, host);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^NeMo Gym TS benchmark — node .* \(sections D\)$/);
    expect(host.fleets).toBe(0);
  });

  it('lists a flag for every section setting it reads', () => {
    expect(BENCH_FLAGS.map((f) => f.name)).toEqual(['rollouts', 'concurrency', 'delay_ms', 'inflight', 'inflight_delay_ms', 'collector_rows', 'comp_coding_verifies', 'replicas_seconds', 'queue_rollouts', 'fleet_inflight', 'python_rollouts', 'sections', 'extras']);
  });
});

describe('the component benchmarks\' tooling', () => {
  it('numberArg reads `--name N`, and the fallback when the flag is absent', () => {
    const argv = ['node', 'x.js', '--rounds', '3', '--calls', '40'];
    expect(numberArg('rounds', 5, argv)).toBe(3);
    expect(numberArg('calls', 2000, argv)).toBe(40);
    expect(numberArg('concurrency', 16, argv)).toBe(16);
  });

  it('runVerifyLoad counts an answer without a numeric reward as failed and hands every reward over', async () => {
    let n = 0;
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.method === 'POST') n++;
        // After the 32 warm-up requests (which must all succeed), every fourth answer has no usable
        // reward; the rest alternate between 1 and 0.
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(n > 32 && n % 4 === 0 ? { reward: 'high' } : { reward: n % 2 }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const rewards: number[] = [];
      const result = await runVerifyLoad((server.address() as AddressInfo).port, [Buffer.from('{}')], { concurrency: 1, maxRequests: 40, maxSeconds: 10 }, 1000, (r) => rewards.push(r));
      expect(result.latencies.length + result.errors).toBe(40);
      expect(result.errors).toBe(10);
      expect(new Set(rewards)).toEqual(new Set([0, 1]));
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
