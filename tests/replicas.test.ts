/**
 * Replicas over two simulated hosts (127.0.0.2 and 127.0.0.3): the main ng-run starts the head
 * server, the agent, the model server and one simple_weather replica; a second ng-run joins with
 * `+only=[simple_weather]` on the other address. kill -9 of the joined replica in the middle of a
 * collection fails only the rollouts whose sessions it held; a rerun completes them, no row twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionCall, startStubServer, textResponse, type StubServer } from '@nemo-gym/core/testing';
import { BIN, isAlive, ROOT, runCommand, startStack, type Stack } from './helpers/stack.js';

const WEATHER = 'resources_servers/simple_weather/configs/simple_weather.yaml';
const OPENAI = 'responses_api_models/openai_model/configs/openai_model.yaml';
const EXAMPLE = 'resources_servers/simple_weather/data/example.jsonl';
const IMPL = 'simple_weather.resources_servers.simple_weather';

const lines = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8').split('\n').filter((l) => l.trim()) : []);

function startJoined(args: string[]): Promise<{ proc: ChildProcess; output: () => string }> {
  const proc = spawn(process.execPath, [BIN('run'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the joining ng-run did not register:\n${out}`)), 30_000);
    proc.stdout!.on('data', () => {
      if (/Joined the head server/.test(out)) {
        clearTimeout(timer);
        resolve({ proc, output: () => out });
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the joining ng-run exited with ${code}:\n${out}`));
    });
  });
}

describe('replicas on two hosts', () => {
  let model: StubServer;
  let stack: Stack;
  let joined: { proc: ChildProcess; output: () => string };
  const common: string[] = [];

  beforeAll(async () => {
    // The model asks for the weather, then answers; each turn takes 150 ms, so rollouts overlap.
    model = await startStubServer({
      '/v1/responses': async (req) => {
        await new Promise((r) => setTimeout(r, 150));
        const input = req.body.input as { type?: string }[];
        return { json: input.some((i) => i.type === 'function_call_output') ? textResponse('Take a coat.') : { ...textResponse(''), output: [functionCall('get_weather', { city: 'Boston' })] } };
      },
    });
    common.push(`+config_paths=[${WEATHER},${OPENAI}]`, `+policy_base_url=${model.url}/v1`, '+policy_api_key=test-key', '+policy_model_name=stub', `++${IMPL}.num_replicas=1`, '+replica_health_interval_s=0.2');
    stack = await startStack([...common, `++${IMPL}.host=127.0.0.2`]);
    joined = await startJoined([...common, `++${IMPL}.host=127.0.0.3`, '+only=[simple_weather]', `+head_server.port=${stack.headPort}`, '+head_server.host=127.0.0.1']);
  }, 90_000);

  afterAll(async () => {
    joined?.proc.kill('SIGKILL');
    await stack?.stop('SIGKILL');
    await model?.close();
  });

  it('ng-status lists both hosts; kill -9 of one replica fails only its sessions; a rerun completes them once; ng-stop ends it', async () => {
    const status = await runCommand('status', [`+head_server.port=${stack.headPort}`, '+json=true']);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    const rows = JSON.parse(status.stdout) as { name: string; url: string; pid: number; state: string; registered: boolean }[];
    const weather = rows.filter((r) => r.name === 'simple_weather');
    expect(weather.map((r) => new URL(r.url).hostname).sort()).toEqual(['127.0.0.2', '127.0.0.3']);
    expect(rows.every((r) => r.state === 'up')).toBe(true);
    const victim = weather.find((r) => r.url.includes('127.0.0.3'))!;
    expect(victim.registered).toBe(true);

    const dir = mkdtempSync(join(tmpdir(), 'ng-replicas-'));
    const input = join(dir, 'in.jsonl');
    const rowsIn = lines(join(ROOT, EXAMPLE));
    writeFileSync(input, `${Array.from({ length: 12 }, () => rowsIn.join('\n')).join('\n')}\n`);
    const out = join(dir, 'out.jsonl');
    const args = [`+head_server.port=${stack.headPort}`, '+agent_name=simple_weather_simple_agent', `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${out}`, '+num_samples_in_parallel=12'];
    const first = runCommand('collect-rollouts', args);
    const deadline = Date.now() + 30_000;
    while (lines(out).length < 8 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    // Frozen first, so that it surely holds sessions when it dies (however far the collection got
    // on a loaded machine): those in flight on it wait, and new ones go to it until its health
    // check fails, since it is then the least busy.
    process.kill(victim.pid, 'SIGSTOP');
    await new Promise((r) => setTimeout(r, 500));
    process.kill(victim.pid, 'SIGKILL');
    const r1 = await first;
    const failures = lines(out.replace(/\.jsonl$/, '_failures.jsonl')).map((l) => JSON.parse(l) as { reason: string });
    const written = lines(out).length;
    expect(written + failures.length, r1.stdout + r1.stderr).toBe(60);
    // Only the sessions the dead replica held: at most the rollouts in flight (12).
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.length).toBeLessThanOrEqual(12);
    for (const f of failures) expect(f.reason).toMatch(/127\.0\.0\.3/);
    expect(r1.code).toBe(1);

    const r2 = await runCommand('collect-rollouts', args);
    expect(r2.code, r2.stdout + r2.stderr).toBe(0);
    const keys = lines(out).map((l) => {
      const row = JSON.parse(l) as { _ng_task_index: number; _ng_rollout_index: number; reward: number };
      expect(row.reward).toBe(1);
      return `${row._ng_task_index}:${row._ng_rollout_index}`;
    });
    expect(keys).toHaveLength(60);
    expect(new Set(keys).size).toBe(60);

    const after = JSON.parse((await runCommand('status', [`+head_server.port=${stack.headPort}`, '+json=true'])).stdout) as { url: string }[];
    expect(after.some((r) => r.url === victim.url)).toBe(false);

    const stop = await runCommand('stop', [`+head_server.port=${stack.headPort}`]);
    expect(stop.code, stop.stderr).toBe(0);
    expect(await stack.stop()).toBe(0);
    for (const r of rows) expect(isAlive(r.pid)).toBe(false);
  }, 90_000);
});
