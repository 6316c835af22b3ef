/**
 * The collector's own errors and its behaviour when the infrastructure fails: file problems are
 * one line and touch nothing, a corrupted output line is set aside (its rollout re-run), failures
 * are classified as they happen, a run against a dead backend stops early, and the checks before
 * a run find a misspelled agent or a dead backend.
 */
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { NgError, ServerResponseError, TimeoutError } from '@nemo-gym/core/errors';
import { ServerUnreachableError } from '../../src/errors.js';
import { classifyFailure, collectRollouts, preflight } from '@nemo-gym/core/rollouts';
import { type FailureEvent } from '../../src/rollouts/collect.js';
import { startStubServer, type StubServer } from '@nemo-gym/core/testing';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const tmp = () => mkdtempSync(join(tmpdir(), 'ng-collect-ops-'));
const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ responses_create_params: { input: `task ${i}` }, i }));
function inputFile(dir: string, n: number): string {
  const p = join(dir, 'in.jsonl');
  writeFileSync(p, rows(n).map((r) => `${JSON.stringify(r)}\n`).join(''));
  return p;
}

/** A stub agent: /run answers from `answer` (status, body) after `delayMs`. */
async function stubAgent(answer: (row: any) => { status: number; body: unknown }, delayMs = 0): Promise<{ port: number; runs: any[] }> {
  const runs: any[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      if (req.url === '/') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"status":"ok"}');
        return;
      }
      const row = JSON.parse(text);
      runs.push(row);
      setTimeout(() => {
        if (res.destroyed) return;
        const a = answer(row);
        res.writeHead(a.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(a.body));
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { port: (server.address() as { port: number }).port, runs };
}

const ok = (row: any) => ({
  status: 200,
  body: { responses_create_params: row.responses_create_params, response: { id: 'r', output: [], usage: { input_tokens: 10 + row.i, output_tokens: 5 } }, reward: row.i % 2 },
});

function client(globalConfig: Record<string, unknown>): ServerClient {
  const c = new ServerClient({ globalConfig, retry: { initialDelayMs: 5, maxDelayMs: 20 } });
  cleanups.push(() => c.close());
  return c;
}
const agentConfig = (port: number, refs: Record<string, unknown> = {}) => ({ my_agent: { responses_api_agents: { simple_agent: { host: '127.0.0.1', port, ...refs } } } });

describe('collector file errors', () => {
  it('refuses an output that is the input, also with +restart=true, and never deletes the input', async () => {
    const dir = tmp();
    const input = inputFile(dir, 3);
    const before = readFileSync(input, 'utf8');
    for (const restart of [false, true]) {
      const err = await collectRollouts({ client: client({}), inputPath: input, outputPath: input, agentName: 'a', concurrency: 1, restart }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NgError);
      expect((err as NgError).code).toBe('NG_ERR_COLLECT_FILE');
      expect((err as Error).message).toMatch(/is the input file .*Choose another \+output_jsonl_fpath/);
      expect((err as Error).message).not.toContain('\n');
    }
    expect(readFileSync(input, 'utf8')).toBe(before);
    expect(readdirSync(dir)).toEqual(['in.jsonl']);
    // The same file through another path (a hard link) is the same file.
    execFileSync('ln', [input, join(dir, 'linked.jsonl')]);
    await expect(collectRollouts({ client: client({}), inputPath: input, outputPath: join(dir, 'linked.jsonl'), agentName: 'a', concurrency: 1, restart: true })).rejects.toThrow(/is the input file/);
    expect(readFileSync(input, 'utf8')).toBe(before);
  });

  it('names the regular file in the way of an output folder, and creates nothing', async () => {
    const dir = tmp();
    const input = inputFile(dir, 1);
    const err = await collectRollouts({ client: client({}), inputPath: input, outputPath: join(input, 'sub', 'out.jsonl'), agentName: 'a', concurrency: 1 }).catch((e: unknown) => e);
    expect((err as NgError).code).toBe('NG_ERR_COLLECT_FILE');
    expect((err as Error).message).toBe(`Cannot create the output ${join(input, 'sub', 'out.jsonl')}: ${input} is a regular file, not a folder. Choose an +output_jsonl_fpath whose folders are folders.`);
    expect(readdirSync(dir)).toEqual(['in.jsonl']);
    await expect(collectRollouts({ client: client({}), inputPath: join(dir, 'nope.jsonl'), outputPath: join(dir, 'o.jsonl'), agentName: 'a', concurrency: 1 })).rejects.toThrow(
      /^Input file not found: .*nope\.jsonl\. Give \+input_jsonl_fpath/,
    );
    await expect(collectRollouts({ client: client({}), inputPath: input, outputPath: dir, agentName: 'a', concurrency: 1 })).rejects.toThrow(/is a folder/);
  });

  it('reports an output it may not write in one line, before anything is sent', async (ctx) => {
    const dir = tmp();
    const input = inputFile(dir, 2);
    const out = join(dir, 'out.jsonl');
    writeFileSync(out, '');
    const root = process.getuid?.() === 0;
    if (root) {
      try {
        execFileSync('chattr', ['+i', out], { stdio: 'ignore' });
      } catch {
        ctx.skip(true, 'running as root without chattr: no way to make a file unwritable here');
      }
      cleanups.push(() => void execFileSync('chattr', ['-i', out], { stdio: 'ignore' }));
    } else {
      chmodSync(out, 0o444);
    }
    const agent = await stubAgent(ok);
    const err = await collectRollouts({ client: client(agentConfig(agent.port)), inputPath: input, outputPath: out, agentName: 'my_agent', concurrency: 1 }).catch((e: unknown) => e);
    expect((err as NgError).code).toBe('NG_ERR_COLLECT_FILE');
    expect((err as Error).message).toMatch(new RegExp(`^cannot write the output ${out}: (permission denied|the operation is not permitted)`));
    expect((err as Error).stack).toBeDefined();
    expect(agent.runs).toHaveLength(0);
  });

  it('sets a corrupted middle line of the output aside with its line number, re-runs its rollout and keeps every good row', async () => {
    const dir = tmp();
    const input = inputFile(dir, 4);
    const out = join(dir, 'out.jsonl');
    const agent = await stubAgent(ok);
    const c = client(agentConfig(agent.port));
    await collectRollouts({ client: c, inputPath: input, outputPath: out, agentName: 'my_agent', concurrency: 1 });
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    const damaged = JSON.parse(lines[1]!)._ng_task_index;
    lines[1] = lines[1]!.slice(0, 25); // torn in the middle of the file
    writeFileSync(out, `${lines.join('\n')}\n`);
    const logged: string[] = [];
    const again = await collectRollouts({ client: c, inputPath: input, outputPath: out, agentName: 'my_agent', concurrency: 1, log: (m) => logged.push(m) });
    expect(again).toMatchObject({ written: 1, skipped: 3, failed: 0 });
    expect(logged.join('\n')).toMatch(new RegExp(`Line 2 of ${out} is not a JSON object .*moved to .*out_corrupt\\.jsonl and the rollout it held runs again`));
    expect(agent.runs.filter((r) => r.i === damaged)).toHaveLength(2);
    const final = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(final.map((r) => r._ng_task_index).sort()).toEqual([0, 1, 2, 3]);
    expect(readFileSync(join(dir, 'out_corrupt.jsonl'), 'utf8')).toBe(`${lines[1]}\n`);
  });
});

describe('failures while they happen', () => {
  it('classifies failures by what went wrong behind the agent', () => {
    const r = (status: number, body: string) => new ServerResponseError('http://a/run', status, body);
    expect(classifyFailure(r(502, '{"detail":"model server `p` answered HTTP 502 (x): could not reach the model backend at http://b/v1/responses: ECONNREFUSED","code":"NG_ERR_MODEL_UNREACHABLE"}'))).toBe('model_unreachable');
    expect(classifyFailure(r(502, '{"detail":"model server `p` answered HTTP 504: the model backend at http://b timed out after 5000 ms","code":"NG_ERR_MODEL_TIMEOUT"}'))).toBe('timeout');
    expect(classifyFailure(r(502, '{"detail":"resources server `w` /verify answered HTTP 500 (http://w/verify): boom","code":"NG_ERR_VERIFY_FAILED"}'))).toBe('verify_error');
    expect(classifyFailure(r(422, '{"detail":"bad field"}'))).toBe('http_4xx');
    expect(classifyFailure(r(500, '{"detail":"TypeError: x"}'))).toBe('http_5xx');
    expect(classifyFailure(r(429, '{"detail":"slow down"}'))).toBe('rate_limited');
    expect(classifyFailure(new ServerUnreachableError('http://a/run', 'ECONNREFUSED'))).toBe('agent_unreachable');
    expect(classifyFailure(new TimeoutError('POST http://a/run timed out'))).toBe('timeout');
    expect(classifyFailure(null)).toBe('bad_row');
  });

  it('classifies by code and status only: reworded texts classify the same, texts without a code by status', () => {
    const r = (status: number, detail: string, code?: string) => new ServerResponseError('http://a/run', status, JSON.stringify(code ? { detail, code } : { detail }));
    // Any wording (or none) with a code: the code decides.
    for (const detail of ['', 'Modell nicht erreichbar', 'the thing failed (timed out? could not reach /verify?)']) {
      expect(classifyFailure(r(502, detail, 'NG_ERR_MODEL_UNREACHABLE')), detail).toBe('model_unreachable');
      expect(classifyFailure(r(500, detail, 'NG_ERR_MODEL_TIMEOUT')), detail).toBe('timeout');
      expect(classifyFailure(r(500, detail, 'NG_ERR_TIMEOUT')), detail).toBe('timeout');
      expect(classifyFailure(r(422, detail, 'NG_ERR_VERIFY_FAILED')), detail).toBe('verify_error');
      expect(classifyFailure(r(500, detail, 'NG_ERR_SERVER_UNREACHABLE')), detail).toBe('server_unreachable');
      expect(classifyFailure(r(503, detail, 'NG_ERR_MODEL_UNREACHABLE')), detail).toBe('rate_limited');
    }
    // The old texts without a code say nothing: status alone.
    expect(classifyFailure(r(502, 'could not reach the model backend at http://b: ECONNREFUSED'))).toBe('http_5xx');
    expect(classifyFailure(r(500, 'POST http://m/v1/responses timed out (UND_ERR_HEADERS_TIMEOUT)'))).toBe('http_5xx');
    expect(classifyFailure(r(422, 'resources server `w` /verify answered HTTP 422'))).toBe('http_4xx');
    expect(classifyFailure(r(500, 'socket hang up, ECONNREFUSED'))).toBe('http_5xx');
    expect(classifyFailure(r(500, 'a code of no class', 'NG_ERR_CONVERSION'))).toBe('http_5xx');
    // The agent not reached: a connection that timed out is a timeout by its code.
    expect(classifyFailure(new ServerUnreachableError('http://a/run', 'Connect Timeout Error (UND_ERR_CONNECT_TIMEOUT)'))).toBe('agent_unreachable');
    expect(classifyFailure(new ServerUnreachableError('http://a/run', 'reason reworded', { code: 'NG_ERR_TIMEOUT' }))).toBe('timeout');
  });

  it('has no regular expression or text search over error messages', () => {
    const source = readFileSync(new URL('../../src/rollouts/failures.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/\.test\(|\.match\(|\.includes\(|\.search\(|new RegExp|_RE\b/);
  });

  it('tells the first failure of each class once, and stops after max_consecutive_failures in a row, cancelling what is in flight', async () => {
    const dead = { status: 502, body: { detail: 'model server `p` answered HTTP 502 (u): could not reach the model backend at http://127.0.0.1:9/v1/responses: ECONNREFUSED', code: 'NG_ERR_MODEL_UNREACHABLE' } };
    const agent = await stubAgent((row) => (row.i < 6 ? ok(row) : dead), 20);
    const dir = tmp();
    const input = inputFile(dir, 400);
    // A bad row (no responses_create_params) neither counts nor resets.
    writeFileSync(input, `${readFileSync(input, 'utf8').split('\n').slice(0, 3).join('\n')}\n{"x":1}\n${readFileSync(input, 'utf8').split('\n').slice(3).join('\n')}`);
    const events: FailureEvent[] = [];
    const started = Date.now();
    const summary = await collectRollouts({
      client: client(agentConfig(agent.port)),
      inputPath: input,
      outputPath: join(dir, 'out.jsonl'),
      agentName: 'my_agent',
      concurrency: 8,
      maxConsecutiveFailures: 10,
      onFailure: (e) => events.push(e),
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(summary.abortedBecause).toMatch(/^10 rollouts failed in a row \(\+max_consecutive_failures=10\).*model unreachable/);
    expect(summary.written).toBe(6);
    expect(summary.failed).toBeLessThan(30);
    expect(agent.runs.length).toBeLessThan(50);
    expect(events.filter((e) => e.first).map((e) => e.label).sort()).toEqual(['bad input row', 'model unreachable']);
    expect(summary.failuresByReason).toMatchObject({ 'model unreachable': expect.any(Number), 'bad input row': 1 });
    const metrics = JSON.parse(readFileSync(summary.metricsPath, 'utf8'));
    expect(metrics.failures_by_reason['model unreachable']).toBe(summary.failed - 1);
  });

  it('an abort stops the run at once: nothing new is sent, rollouts in flight are cancelled and not recorded', async () => {
    const agent = await stubAgent(ok, 600);
    const dir = tmp();
    const stop = new AbortController();
    let abortedAt = 0;
    // Abort once the second wave of 4 has reached the agent (the first is then written).
    const poll = setInterval(() => {
      if (agent.runs.length >= 8 && !abortedAt) {
        abortedAt = Date.now();
        stop.abort();
      }
    }, 5);
    const summary = await collectRollouts({ client: client(agentConfig(agent.port)), inputPath: inputFile(dir, 50), outputPath: join(dir, 'out.jsonl'), agentName: 'my_agent', concurrency: 4, signal: stop.signal });
    clearInterval(poll);
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    expect(summary).toMatchObject({ interrupted: true, written: 4, failed: 0, cancelled: 4 });
    expect(agent.runs).toHaveLength(8);
    expect(existsSync(summary.failuresPath)).toBe(false);
  });
});

describe('metrics beyond means', () => {
  it('writes token usage, per-task pass rate and spread, and rollout latency percentiles', async () => {
    const agent = await stubAgent((row) => ({ ...ok(row), body: { ...ok(row).body, reward: row.i === 0 ? 1 : agent.runs.filter((r) => r.i === row.i).length % 2 } }));
    const dir = tmp();
    const summary = await collectRollouts({ client: client(agentConfig(agent.port)), inputPath: inputFile(dir, 3), outputPath: join(dir, 'out.jsonl'), agentName: 'my_agent', concurrency: 1, numRepeats: 4 });
    const m = JSON.parse(readFileSync(summary.metricsPath, 'utf8'));
    // Input tokens 10 + i per rollout, output 5.
    expect(m.tokens).toEqual({ rollouts_with_usage: 12, input_total: 4 * (10 + 11 + 12), output_total: 60, input_mean: 11, output_mean: 5 });
    expect(m.per_task).toEqual([
      { task: 0, n: 4, pass_rate: 1, mean: 1, std: 0, min: 1, max: 1 },
      { task: 1, n: 4, pass_rate: 0.5, mean: 0.5, std: 0.5, min: 0, max: 1 },
      { task: 2, n: 4, pass_rate: 0.5, mean: 0.5, std: 0.5, min: 0, max: 1 },
    ]);
    expect(m.tasks).toEqual({ count: 3, all_pass: 1, none_pass: 0, some_pass: 2, pass_rate_mean: 0.6667, reward_std_mean: 0.3333 });
    expect(m.latency_s.rollout.count).toBe(12);
    expect(m.latency_s.rollout.p50).toBeLessThanOrEqual(m.latency_s.rollout.p99);
  });
});

describe('checks before the first rollout', () => {
  let backend: StubServer;
  it('names a misspelled agent with a suggestion, a server that is down, and a backend that refuses the key; sends nothing', async () => {
    const agent = await stubAgent(ok);
    backend = await startStubServer({ '/': () => ({ json: { status: 'ok' } }), '/v1/models': () => ({ status: 401, json: { detail: 'the model backend at http://x/v1/models answered HTTP 401: invalid api key' } }) });
    cleanups.push(() => backend.close());
    const config = {
      ...agentConfig(agent.port, { model_server: { type: 'responses_api_models', name: 'policy' }, resources_server: { type: 'resources_servers', name: 'weather' } }),
      policy: { responses_api_models: { openai_model: { host: '127.0.0.1', port: backend.port } } },
      weather: { resources_servers: { simple_weather: { host: '127.0.0.1', port: 9 } } },
    };
    const c = client(config);
    await expect(preflight(c, ['my_agnet'])).rejects.toThrow(/agent `my_agnet` is not in the running config \(did you mean `my_agent`\?\)/);
    const err = (await preflight(c, ['my_agent']).catch((e: unknown) => e)) as NgError;
    expect(err.code).toBe('NG_ERR_PREFLIGHT');
    const lines = err.message.split('\n');
    expect(lines[0]).toBe('2 checks before the first rollout failed; nothing was sent or written:');
    expect(lines.slice(1).sort()).toEqual([
      expect.stringMatching(/^ {2}- resources server `weather` \(my_agent\.resources_server\) at http:\/\/127\.0\.0\.1:9 does not answer: .*ECONNREFUSED/),
      expect.stringMatching(/^ {2}- the model backend behind model server `policy` \(my_agent\.model_server\) failed its check \(HTTP 401\): .*invalid api key\. The backend refused the API key/),
    ]);
    // collectRollouts with preflight: nothing sent, nothing written.
    const dir = tmp();
    await expect(collectRollouts({ client: c, inputPath: inputFile(dir, 2), outputPath: join(dir, 'out.jsonl'), agentName: 'my_agent', concurrency: 1, preflight: true })).rejects.toThrow(/checks before the first rollout failed/);
    expect(agent.runs).toHaveLength(0);
    expect(readdirSync(dir)).toEqual(['in.jsonl']);
  });
});
