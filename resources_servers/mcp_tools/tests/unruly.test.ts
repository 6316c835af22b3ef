/**
 * A stdio MCP server that misbehaves (tests/fixtures/unruly-server.mjs, run with node): a flood
 * of stdout lines that are not MCP, an endless line, an answer over max_message_bytes, a call
 * that hangs with a child process of its own; and a verify module naming a server that is not
 * configured. Each is a clear error for the call (or the rollout) concerned, and no other
 * rollout waits for it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer, textResponse, type TestServer, type TestSession } from '@nemo-gym/core/testing';
import { server } from '../app.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/unruly-server.mjs', import.meta.url));
const UNKNOWN_SERVER_MODULE = fileURLToPath(new URL('./fixtures/verify-unknown-server.mjs', import.meta.url));
const unruly = { command: process.execPath, args: [FIXTURE] };
const SUM_MODULE = 'resources_servers/mcp_tools/examples/sum_in_answer.mjs';

const open: TestServer[] = [];
async function start(config: Record<string, unknown>): Promise<TestServer> {
  const s = await startTestServer(server, { config: { name: 'mcp_tools', domain: 'agent', mcp_servers: { unruly }, verify: { type: 'module', path: SUM_MODULE }, ...config }, listen: true });
  open.push(s);
  return s;
}
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
});

/** A process that exists and is not a zombie. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function goneWithin(pids: number[], ms: number): Promise<number> {
  const t0 = Date.now();
  while (pids.some(running)) {
    if (Date.now() - t0 > ms) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - t0;
}

/** Latencies (ms) of `n` echo calls in one rollout, one after another. */
async function echoTimes(sess: TestSession, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await sess.post('/echo', { message: `m${i}` });
    times.push(performance.now() - t0);
    expect(r.json.output).toBe(`Echo: m${i}`);
  }
  return times;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

describe('a stdio MCP server that floods stdout', () => {
  it('the flooding call gets a clear error at once and its server is stopped; that rollout is not scored, the others go on', async () => {
    const s = await start({ tool_timeout_s: 5 });
    const other = s.session();
    await echoTimes(other, 40); // warm-up
    for (const tool of ['flood', 'flood_line']) {
      const unloaded = median(await echoTimes(other, 80));
      const flooder = s.session();
      const pid = Number((await flooder.post('/pid', {})).json.output);
      const t0 = performance.now();
      let floodMs = NaN;
      const flooding = flooder.post(`/${tool}`, {}).then((r) => ((floodMs = performance.now() - t0), r));
      const during = await echoTimes(other, 40);
      const res = await flooding;
      console.log(
        `${tool}, default limit: the flooding call answered in ${floodMs.toFixed(0)} ms; the other rollout's echo call, median of 80 before ${unloaded.toFixed(2)} ms, ` +
          `median of 40 from the flood's start ${median(during).toFixed(2)} ms (max ${Math.max(...during).toFixed(2)} ms)`,
      );
      expect(res.status).toBe(502);
      expect(res.json.error).toMatch(
        /^MCP server `unruly` \(.*pid \d+\) wrote \d+ bytes to stdout that are not MCP messages \(the first: `(server log: working on it|x+)/,
      );
      expect(res.json.error).toMatch(/more than max_stdout_noise_bytes \(65536\).*logs go to stderr.*This rollout cannot be scored\.$/s);
      expect(floodMs).toBeLessThan(2000);
      expect(await goneWithin([pid], 1000)).toBeLessThan(1000);
      // That rollout is failed (never scored); the other one goes on.
      const v = await flooder.post('/verify', { responses_create_params: { input: [] }, response: textResponse('x'), verify_arguments: { a: 1, b: 2 } });
      expect(v.status).toBe(502);
    }
  }, 30_000);

  it('a flood let go on (max_stdout_noise_bytes raised) is read slowly: another rollout stays within 2x its unloaded latency; the timed-out flooder is stopped', async () => {
    const s = await start({ tool_timeout_s: 1, max_stdout_noise_bytes: 1e12 });
    const other = s.session();
    await echoTimes(other, 40); // warm-up
    for (const tool of ['flood', 'flood_line']) {
      const flooder = s.session();
      const pid = Number((await flooder.post('/pid', {})).json.output);
      // Rounds of calls without and with a flood in turn, so a change in the machine's load weighs on both alike.
      const unloaded: number[] = [];
      const loaded: number[] = [];
      for (let round = 0; round < 4; round++) {
        unloaded.push(...(await echoTimes(other, 20)));
        let flooding = true;
        const flood = flooder.post(`/${tool}`, { ms: 600 }).then((r) => ((flooding = false), r));
        await new Promise((r) => setTimeout(r, 50));
        loaded.push(...(await echoTimes(other, 20)));
        expect(flooding, 'the 20 calls ran while the server flooded').toBe(true);
        expect((await flood).json.output).toBe('flooded');
      }
      console.log(
        `${tool}, sustained: the other rollout's echo call, median of 80 unloaded ${median(unloaded).toFixed(2)} ms, median of 80 during the flood ${median(loaded).toFixed(2)} ms ` +
          `(max ${Math.max(...loaded).toFixed(2)} ms)`,
      );
      expect(median(loaded)).toBeLessThanOrEqual(2 * median(unloaded));
      // Endless: the call times out and the flooder is stopped.
      const res = await flooder.post(`/${tool}`, {});
      expect(res.status).toBe(504);
      expect(await goneWithin([pid], 1000)).toBeLessThan(1000);
    }
  }, 30_000);
});

describe('limits of a stdio MCP server', () => {
  it('an answer over max_message_bytes is an error for that call naming its size; the session goes on', async () => {
    const s = await start({ max_message_bytes: 1024 * 1024 });
    const sess = s.session();
    const pid = Number((await sess.post('/pid', {})).json.output);
    const big = await sess.post('/big', { bytes: 3 * 1024 * 1024 });
    expect(big.status).toBe(200);
    expect(big.json.error).toMatch(/^MCP tool `big` on server `unruly` answered with a message of \d{7} bytes, more than max_message_bytes \(1048576\); the answer was dropped\. Ask for less output/);
    // Same process, still answering.
    expect((await sess.post('/echo', { message: 'after' })).json.output).toBe('Echo: after');
    expect(Number((await sess.post('/pid', {})).json.output)).toBe(pid);
    expect((await sess.post('/big', { bytes: 1000 })).json.output).toBe('y'.repeat(1000));
  });

  it('a timed-out call stops its server and what it started at once; the next call gets a fresh one', async () => {
    const s = await start({ tool_timeout_s: 0.3, close_grace_s: 30, session_idle_ttl_s: 900 });
    const sess = s.session();
    const pid = Number((await sess.post('/pid', {})).json.output);
    const child = Number((await sess.post('/spawn_child', {})).json.output);
    expect(running(pid) && running(child)).toBe(true);
    const hung = await sess.post('/hang', {});
    expect(hung.status).toBe(504);
    expect(hung.json.error).toMatch(/did not answer within 0\.3 s; the call was cancelled and the server process stopped/);
    const ms = await goneWithin([pid, child], 1000);
    console.log(`timed-out server and its child gone ${ms} ms after the 504`);
    expect(ms).toBeLessThan(1000);
    const next = Number((await sess.post('/pid', {})).json.output);
    expect(next).not.toBe(pid);
    expect(running(next)).toBe(true);
  });

  it('a server that floods stdout while listing its tools stops the start with the reason', async () => {
    const err = await start({ mcp_servers: { unruly: { ...unruly, env: { UNRULY_FLOOD_ON_LIST: '1' } } } }).catch((e: Error) => e);
    expect(String(err)).toMatch(/MCP server `unruly` did not list its tools: MCP server `unruly` .* wrote \d+ bytes to stdout that are not MCP messages \(the first: `starting up\.\.\.`\).*Check mcp_servers\.unruly/s);
  });

  it('a verify module calling a server that is not configured is told which servers there are', async () => {
    const s = await start({ verify: { type: 'module', path: UNKNOWN_SERVER_MODULE } });
    const v = await s.post('/verify', { responses_create_params: { input: [] }, response: textResponse('x') });
    expect(v.status).toBe(500);
    expect(v.json.detail).toBe(
      'MCP server `calculator` is not configured in this mcp_tools instance; mcp_servers has: `unruly`. Fix the server name in the verify module, or add the server to mcp_servers.',
    );
  });
});
