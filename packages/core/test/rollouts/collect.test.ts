import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerClient, type RetryPolicy } from '@nemo-gym/core/client';
import { collectRollouts } from '@nemo-gym/core/rollouts';
import { type FailureRecord } from '../../src/rollouts/sink.js';

/** What the stub agent does with one /run: answer with a body and status, or drop the connection. */
type Behaviour = (row: Record<string, any>, req: IncomingMessage, res: ServerResponse) => void;

interface StubAgent {
  port: number;
  /** Every /run body the agent read, in arrival order. */
  runs: Record<string, any>[];
  times: number[];
  behaviour: Behaviour;
  stop(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function startAgent(behaviour: Behaviour, port = 0): Promise<StubAgent> {
  const agent = { runs: [], times: [], behaviour } as unknown as StubAgent;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const row = JSON.parse(body) as Record<string, any>;
      agent.runs.push(row);
      agent.times.push(Date.now());
      agent.behaviour(row, req, res);
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  agent.port = (server.address() as { port: number }).port;
  agent.stop = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  cleanups.push(agent.stop);
  return agent;
}

/** The verify answer a real agent passes back: the row, a response and a reward, as compact JSON. */
const verifyAnswer = (row: Record<string, any>) =>
  JSON.stringify({ responses_create_params: row.responses_create_params, response: { id: 'resp_1', output: [], extra: 1.5 }, reward: row.expected === 'yes' ? 1 : 0, city: row.city });

const answer: Behaviour = (row, _req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(verifyAnswer(row));
};

function clientFor(port: number, retry: Partial<RetryPolicy> = {}): ServerClient {
  const client = new ServerClient({
    globalConfig: { my_agent: { responses_api_agents: { simple_agent: { host: '127.0.0.1', port } } } },
    retry: { initialDelayMs: 5, maxDelayMs: 20, ...retry },
  });
  cleanups.push(() => client.close());
  return client;
}

function inputFile(rows: Record<string, unknown>[]): { dir: string; input: string; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ng-collect-'));
  const input = join(dir, 'in.jsonl');
  writeFileSync(input, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return { dir, input, output: join(dir, 'out.jsonl') };
}

const readJsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, any>);

const rows = ['Paris', 'Oslo', 'Lima'].map((city, i) => ({ responses_create_params: { input: `weather in ${city}?` }, city, expected: i === 1 ? 'no' : 'yes' }));

describe('collectRollouts with a stub agent', () => {
  it('writes each verify answer as the agent sent it, plus the three tags', async () => {
    const agent = await startAgent(answer);
    const { input, output } = inputFile(rows);
    const summary = await collectRollouts({ client: clientFor(agent.port), inputPath: input, outputPath: output, agentName: 'my_agent', concurrency: 2, numRepeats: 2 });
    expect(summary).toMatchObject({ written: 6, failed: 0, total: 6 });
    const lines = readFileSync(output, 'utf8').trim().split('\n');
    for (const line of lines) {
      const row = JSON.parse(line) as Record<string, any>;
      // Byte for byte: the agent's text, then the tags spliced before its closing brace.
      const own = verifyAnswer(rows[row._ng_task_index]!);
      expect(line).toBe(`${own.slice(0, -1)},"_ng_task_index":${row._ng_task_index},"_ng_rollout_index":${row._ng_rollout_index},"_ng_agent":"my_agent"}`);
    }
    expect(new Set(lines.map((l) => JSON.parse(l)._ng_rollout_index))).toEqual(new Set([0, 1]));
    // The rows reach the agent unchanged.
    expect(agent.runs.map((r) => r.city).sort()).toEqual(['Lima', 'Lima', 'Oslo', 'Oslo', 'Paris', 'Paris']);
    // …apart from the identity upstream's collector adds to every /run body (agents derive rollout ids from it).
    for (const run of agent.runs) {
      const { _ng_task_index: t, _ng_rollout_index: r, _ng_attempt_index: a, ...own } = run;
      expect(own).toEqual(rows[t]);
      expect([r, a]).toEqual([expect.any(Number), 0]);
    }
    expect(new Set(agent.runs.map((x) => `${x._ng_task_index}-${x._ng_rollout_index}`)).size).toBe(6);
    const metrics = JSON.parse(readFileSync(summary.metricsPath, 'utf8'));
    expect(metrics.mean.reward).toBeCloseTo(4 / 6);
    expect(metrics['pass@1']).toBeCloseTo(2 / 3);
  });

  it('posts a rollout whose connection dropped after sending exactly once, records it, and a rerun completes it once', async () => {
    const agent = await startAgent((row, req, res) => (row.city === 'Oslo' ? req.socket.destroy() : answer(row, req, res)));
    const { input, output } = inputFile(rows);
    const client = clientFor(agent.port, { maxAttempts: 6 });
    const first = await collectRollouts({ client, inputPath: input, outputPath: output, agentName: 'my_agent', concurrency: 4 });
    expect(first).toMatchObject({ written: 2, failed: 1, abortedBecause: undefined });
    expect(agent.runs.filter((r) => r.city === 'Oslo')).toHaveLength(1);
    const [failure] = readJsonl(first.failuresPath) as FailureRecord[];
    expect(failure).toMatchObject({ _ng_task_index: 1, _ng_rollout_index: 0, line: 2, agent: 'my_agent', attempts: 1, status: null });
    expect(failure!.reason).toMatch(/not resent because it may have reached the server/);
    expect(failure!.history).toEqual([{ attempt: 1, started_at: expect.any(String), reason: failure!.reason, status: null, delivered: 'maybe', http_attempts: 1 }]);

    // The agent is fixed; the same command runs the failed rollout again, as attempt 2.
    agent.behaviour = answer;
    const second = await collectRollouts({ client, inputPath: input, outputPath: output, agentName: 'my_agent', concurrency: 4 });
    expect(second).toMatchObject({ written: 1, failed: 0, skipped: 2 });
    expect(agent.runs.filter((r) => r.city === 'Oslo')).toHaveLength(2);
    expect(agent.runs).toHaveLength(4);
    const out = readJsonl(output);
    expect(out.map((r) => r.city).sort()).toEqual(['Lima', 'Oslo', 'Paris']);
    expect(existsSync(second.failuresPath)).toBe(false);
  });

  it('carries the attempt history of a rollout that fails again', async () => {
    const agent = await startAgent((row, req, res) => {
      if (row.city !== 'Lima') return answer(row, req, res);
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"detail": "tool crashed"}');
    });
    const { input, output } = inputFile(rows);
    const client = clientFor(agent.port);
    await collectRollouts({ client, inputPath: input, outputPath: output, agentName: 'my_agent', concurrency: 2 });
    const again = await collectRollouts({ client, inputPath: input, outputPath: output, agentName: 'my_agent', concurrency: 2 });
    expect(again).toMatchObject({ written: 0, failed: 1, skipped: 2 });
    // 500 is never retried: one POST per run.
    expect(agent.runs.filter((r) => r.city === 'Lima')).toHaveLength(2);
    const [failure] = readJsonl(again.failuresPath) as FailureRecord[];
    expect(failure).toMatchObject({ attempts: 2, status: 500 });
    expect(failure!.history.map((h) => [h.attempt, h.status, h.delivered, h.http_attempts])).toEqual([
      [1, 500, 'yes', 1],
      [2, 500, 'yes', 1],
    ]);
  });

  it('a rerun sends a failed rollout with its next _ng_attempt_index (a new rollout id: <task>-<repeat>-a<n>); a row\'s own identity fields are replaced, its _ng_rollout_id kept', async () => {
    const agent = await startAgent((row, req, res) => {
      if (row.city !== 'Lima' || row._ng_attempt_index > 1) return answer(row, req, res);
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"detail": "tool crashed"}');
    });
    const stamped = [...rows.slice(0, 2), { ...rows[2]!, _ng_task_index: 99, _ng_attempt_index: 7, _ng_rollout_id: 'lima-explicit' }];
    const { input, output } = inputFile(stamped);
    const client = clientFor(agent.port);
    for (let run = 0; run < 3; run++) await collectRollouts({ client, inputPath: input, outputPath: output, agentName: 'my_agent', concurrency: 2 });
    const lima = agent.runs.filter((r) => r.city === 'Lima');
    expect(lima.map((r) => [r._ng_task_index, r._ng_rollout_index, r._ng_attempt_index, r._ng_rollout_id])).toEqual([
      [2, 0, 0, 'lima-explicit'],
      [2, 0, 1, 'lima-explicit'],
      [2, 0, 2, 'lima-explicit'],
    ]);
    expect(agent.runs.filter((r) => r.city !== 'Lima').map((r) => r._ng_attempt_index)).toEqual([0, 0]);
    expect(readJsonl(output).map((r) => r.city).sort()).toEqual(['Lima', 'Oslo', 'Paris']);
  });

  it('does not resend a 429 that the agent passed on after it had started the rollout; it is recorded as delivered', async () => {
    const agent = await startAgent((row, req, res) => {
      if (row.city !== 'Oslo') return answer(row, req, res);
      res.writeHead(429, { 'retry-after': '0', 'x-nemo-gym-no-resend': '1', 'content-type': 'application/json' });
      res.end('{"detail": "model server `policy_model` answered HTTP 429"}');
    });
    const { input, output } = inputFile(rows);
    const summary = await collectRollouts({ client: clientFor(agent.port, { maxAttempts: 6 }), inputPath: input, outputPath: output, agentName: 'my_agent', concurrency: 3, maxAttempts: 4 });
    expect(summary).toMatchObject({ written: 2, failed: 1 });
    expect(agent.runs.filter((r) => r.city === 'Oslo')).toHaveLength(1);
    const [failure] = readJsonl(summary.failuresPath) as FailureRecord[];
    expect(failure!.history[0]).toMatchObject({ status: 429, delivered: 'yes', http_attempts: 1 });
  });

  it('in a 429 storm, makes no more attempts per rollout than the budget and none after the time budget', async () => {
    const agent = await startAgent((_row, _req, res) => {
      res.writeHead(429, { 'retry-after': '0.05', 'content-type': 'application/json' });
      res.end('{"detail": "busy"}');
    });
    const { input, output } = inputFile(rows);
    const started = Date.now();
    const summary = await collectRollouts({ client: clientFor(agent.port, { maxElapsedMs: 2000 }), inputPath: input, outputPath: output, agentName: 'my_agent', concurrency: 3, maxAttempts: 4 });
    expect(summary).toMatchObject({ written: 0, failed: 3 });
    for (const city of ['Paris', 'Oslo', 'Lima']) expect(agent.runs.filter((r) => r.city === city)).toHaveLength(4);
    const failures = readJsonl(summary.failuresPath) as FailureRecord[];
    for (const f of failures) expect(f.history[0]).toMatchObject({ status: 429, delivered: 'no', http_attempts: 4 });

    // With a time budget shorter than the attempt budget, the time budget ends the storm.
    const timed = inputFile(rows.slice(0, 1));
    agent.runs.length = 0;
    agent.times.length = 0;
    await collectRollouts({ client: clientFor(agent.port, { maxElapsedMs: 300 }), inputPath: timed.input, outputPath: timed.output, agentName: 'my_agent', concurrency: 1, maxAttempts: 100 });
    expect(agent.runs.length).toBeGreaterThan(1);
    expect(agent.runs.length).toBeLessThanOrEqual(7);
    // Arrival times: the last attempt started within the budget (plus the time it took to arrive).
    expect(agent.times.at(-1)! - agent.times[0]!).toBeLessThanOrEqual(300 + 150);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('retries rollouts whose connection was refused until the agent is up, and runs each once', async () => {
    const probe = await startAgent(answer);
    const port = probe.port;
    await probe.stop();
    const { input, output } = inputFile(rows);
    const pending = collectRollouts({ client: clientFor(port, { maxAttempts: 50, initialDelayMs: 20, maxDelayMs: 50 }), inputPath: input, outputPath: output, agentName: 'my_agent', concurrency: 3, maxAttempts: 50 });
    await new Promise((r) => setTimeout(r, 200));
    const agent = await startAgent(answer, port);
    const summary = await pending;
    expect(summary).toMatchObject({ written: 3, failed: 0 });
    expect(agent.runs).toHaveLength(3);
  });

  it('stops taking rollouts when the agent stays unreachable, recording them as never delivered', async () => {
    const probe = await startAgent(answer);
    const port = probe.port;
    await probe.stop();
    const { input, output } = inputFile(rows);
    const summary = await collectRollouts({ client: clientFor(port, { maxAttempts: 2 }), inputPath: input, outputPath: output, agentName: 'my_agent', concurrency: 1 });
    expect(summary.abortedBecause).toMatch(/agent `my_agent` is unreachable/);
    const failures = readJsonl(summary.failuresPath) as FailureRecord[];
    expect(failures).toHaveLength(1);
    expect(failures[0]!.history[0]).toMatchObject({ delivered: 'no', http_attempts: 2 });
  });
});
