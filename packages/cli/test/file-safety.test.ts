/**
 * The data commands under file faults, as a careful user meets them: an output that is its input,
 * a misspelt input, `kill -9` in the middle of a write, two writers of one output, a lock left by a
 * killed process, file-system errors (EACCES as an unprivileged user, ENOSPC on a small tmpfs,
 * EISDIR, a path through a file, /proc) and a torn line in a merge input.
 *
 * Where the behaviour is about processes (kills, locks, permissions) the compiled commands run as
 * their own processes (`pnpm build` first); the rest run in this process through their command-line
 * entry. Kills land at seeded random points after the command's temporary file appears: 12 for a
 * JSONL export and 3 each for a Parquet export, an import with re-scoring, a re-verification and a
 * merge (each kill costs a Node start-up; these counts keep the kills near 15 s on a quiet machine).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parquetMetadata } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { findOpenPort } from '@nemo-gym/core/config';
import { mulberry32 } from '@nemo-gym/core/data';
import { lockPathOf, tempPathOf } from '@nemo-gym/core/files';
import { runWorker } from '@nemo-gym/queue';
import { findRedisServer, startRedisServer, type LocalRedis } from '@nemo-gym/queue/redis-server';
import { startHeadServer } from '@nemo-gym/core/server';
import { collectRolloutsCommand } from '../src/commands/collect-rollouts.js';
import { exportCommand } from '../src/commands/export.js';
import { importCommand } from '../src/commands/import.js';
import { mergeRolloutsCommand } from '../src/commands/merge-rollouts.js';
import { reverifyCommand } from '../src/commands/reverify.js';
import { runCli, type CommandSpec } from '../src/runtime.js';

const BIN = (name: string) => fileURLToPath(new URL(`../bin/ng-${name}.js`, import.meta.url));
const WEATHER = fileURLToPath(new URL('../../../resources_servers/simple_weather/data/example_rollouts.jsonl', import.meta.url));
const BUILT = existsSync(fileURLToPath(new URL('../dist/src/main.js', import.meta.url)));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const lines = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8').split('\n').filter((l) => l.trim()) : []);

let root: string;
/** Tagged rollout rows as ng-collect-rollouts writes them: the quickstart's five, repeated. */
function rolloutRows(n: number, offset = 0): string {
  const base = readFileSync(WEATHER, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  return Array.from({ length: n }, (_, i) => `${JSON.stringify({ ...base[i % 5], _ng_task_index: offset + i, _ng_rollout_index: 0 })}\n`).join('');
}
const dirOf = (name: string) => {
  const d = join(root, name);
  mkdirSync(d, { recursive: true });
  return d;
};

/** A command in this process; what it printed and its exit code. */
async function inProcess(spec: CommandSpec, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation(((c: unknown) => ((out += String(c)), true)) as never);
  const e = vi.spyOn(process.stderr, 'write').mockImplementation(((c: unknown) => ((err += String(c)), true)) as never);
  try {
    return { code: await runCli(spec, argv, { skipEnv: true }), out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

interface Proc {
  proc: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

function start(name: string, args: string[], prefix: string[] = []): Proc {
  const cmd = prefix.length ? prefix[0]! : process.execPath;
  const proc = spawn(cmd, [...prefix.slice(1), ...(prefix.length ? [process.execPath] : []), BIN(name), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  proc.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  return { proc, output: () => text, exit: new Promise((r) => proc.once('exit', (c) => r(c))) };
}

/** The exit code of a started command, which is killed if it has not ended within `ms`. */
async function exitWithin(p: Proc, ms: number): Promise<number | null> {
  const timer = setTimeout(() => p.proc.kill('SIGKILL'), ms);
  const code = await p.exit;
  clearTimeout(timer);
  return code;
}

/** Runs a command to its end (killed after `timeoutMs`, so a command that would hang fails the test instead). */
async function run(name: string, args: string[], prefix: string[] = [], timeoutMs = 30_000): Promise<{ code: number | null; output: string }> {
  const p = start(name, args, prefix);
  const timer = setTimeout(() => p.proc.kill('SIGKILL'), timeoutMs);
  const code = await p.exit;
  clearTimeout(timer);
  return { code, output: p.output() };
}

/**
 * Starts a command, waits until it begins writing — one of its temporary files (named by its pid)
 * exists, or the output no longer holds what it held (`touched`: a command writing in place) —
 * waits a random time below `maxDelayMs`, and kills it with SIGKILL. Whether the kill landed while
 * the temporary file was there and the process still ran.
 */
async function killDuringWrite(name: string, args: string[], temps: (pid: number) => string[], touched: () => boolean, maxDelayMs: number, rand: () => number): Promise<boolean> {
  const p = start(name, args);
  const files = temps(p.proc.pid!);
  const deadline = Date.now() + 20_000;
  while (p.proc.exitCode === null && !files.some((f) => existsSync(f)) && !touched() && Date.now() < deadline) await sleep(2);
  await sleep(Math.floor(rand() * maxDelayMs));
  const midWrite = p.proc.exitCode === null && files.some((f) => existsSync(f));
  p.proc.kill('SIGKILL');
  await p.exit;
  return midWrite;
}

/** Files of a folder that are temporary or lock files. */
const debris = (dir: string) => readdirSync(dir).filter((n) => /\.tmp$|\.lock$|\.stale-/.test(n));

/** A /verify stand-in on 127.0.0.1: reward 1 for every row. */
async function verifyServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ reward: 1, responses_create_params: body.responses_create_params ?? null }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** A stub agent: /run answers reward 1 with the row's question after `delay.ms`. */
async function stubAgent(delay: { ms: number }): Promise<{ port: number; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const row = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { responses_create_params: { input: string } };
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ reward: 1, question: row.responses_create_params.input })), delay.ms);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, server };
}

let verify: { url: string; server: Server };
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ng-file-safety-'));
  chmodSync(root, 0o755);
  verify = await verifyServer();
});
afterAll(async () => {
  await new Promise((r) => verify.server.close(r));
});

describe('an output that is its input is refused, and the input stays whole', () => {
  it('ng-export, ng-import, ng-reverify, ng-merge-rollouts and ng-collect-rollouts, by ./name, a symbolic link or the same path', async () => {
    const dir = dirOf('same');
    const input = join(dir, 'a.jsonl');
    const text = rolloutRows(5);
    writeFileSync(input, text);
    symlinkSync(input, join(dir, 'link.jsonl'));
    const dotted = `${dir}/./a.jsonl`;
    const chat = join(dir, 'chat.jsonl');
    writeFileSync(chat, `${JSON.stringify({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] })}\n`);
    const cases: [CommandSpec, string[], string][] = [
      [exportCommand, [`+input=${input}`, `+output=${dotted}`, '+format=sft'], input],
      [exportCommand, [`+input=${input}`, `+output=${join(dir, 'link.jsonl')}`, '+format=sft'], input],
      [importCommand, [`+input=${chat}`, `+output=${dir}/./chat.jsonl`, '+format=openai_chat'], chat],
      [reverifyCommand, [`+input=${input}`, `+output=${dotted}`, `+resources_server_url=${verify.url}`], input],
      [mergeRolloutsCommand, [`+input_jsonl_fpaths=[${input}]`, `+output_jsonl_fpath=${join(dir, 'link.jsonl')}`], input],
      [collectRolloutsCommand, [`+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${dotted}`, '+agent_name=x'], input],
    ];
    for (const [spec, argv, victim] of cases) {
      const before = readFileSync(victim, 'utf8');
      const r = await inProcess(spec, argv);
      expect(r.code, `${spec.name}: ${r.err}`).not.toBe(0);
      expect(r.err, spec.name).toMatch(/is the input|is the input file/);
      expect(r.err, spec.name).not.toMatch(/unexpected error|\n\s+at /);
      expect(readFileSync(victim, 'utf8'), spec.name).toBe(before);
    }
    expect(debris(dir)).toEqual([]);
  });
});

describe('a misspelt input leaves an existing output untouched', () => {
  it('ng-export, ng-import, ng-reverify (input, and +resources_server), ng-merge-rollouts, ng-collect-rollouts', async () => {
    const dir = dirOf('typo');
    const out = join(dir, 'existing.jsonl');
    const input = join(dir, 'rollouts.jsonl');
    writeFileSync(input, rolloutRows(3));
    const headPort = await findOpenPort([]);
    const head = await startHeadServer({ head_server: { host: '127.0.0.1', port: headPort }, weather: { resources_servers: { simple_weather: { host: '127.0.0.1', port: 1 } } } }, '127.0.0.1', headPort);
    try {
      const typo = join(dir, 'typo.jsonl');
      const cases: [CommandSpec, string[], RegExp][] = [
        [exportCommand, [`+input=${typo}`, `+output=${out}`, '+format=sft'], /Input file not found: \+input=.*typo\.jsonl/],
        [exportCommand, [`+input=${typo}`, `+output=${join(dir, 'existing.parquet')}`, '+format=rl'], /Input file not found/],
        [importCommand, [`+input=${typo}`, `+output=${out}`, '+format=openai_chat'], /Input file not found/],
        [reverifyCommand, [`+input=${typo}`, `+output=${out}`, `+resources_server_url=${verify.url}`], /Input file not found/],
        [reverifyCommand, [`+input=${input}`, `+output=${out}`, '+resources_server=wether', `+head_server.port=${headPort}`], /wether/],
        [importCommand, [`+input=${input}`, `+output=${out}`, '+format=openai_chat', '+resources_server=wether', `+head_server.port=${headPort}`], /wether/],
        [mergeRolloutsCommand, [`+input_jsonl_fpaths=[${input},${typo}]`, `+output_jsonl_fpath=${join(dir, 'merged.jsonl')}`], /not found: .*typo\.jsonl/],
        [collectRolloutsCommand, [`+input_jsonl_fpath=${typo}`, `+output_jsonl_fpath=${out}`, '+agent_name=x'], /Input file not found/],
      ];
      for (const [spec, argv, message] of cases) {
        writeFileSync(out, 'previous\n');
        writeFileSync(join(dir, 'existing.parquet'), 'previous\n');
        const r = await inProcess(spec, argv);
        expect(r.code, `${spec.name} ${argv.join(' ')}: ${r.err}`).not.toBe(0);
        expect(r.err).toMatch(message);
        expect(r.err).not.toMatch(/unexpected error|\n\s+at /);
        expect(readFileSync(out, 'utf8')).toBe('previous\n');
        expect(readFileSync(join(dir, 'existing.parquet'), 'utf8')).toBe('previous\n');
      }
      expect(existsSync(join(dir, 'merged.jsonl'))).toBe(false);
      expect(debris(dir)).toEqual([]);
    } finally {
      await head.close();
    }
  });

  it('ng-merge-rollouts given a folder leaves no output behind, and the corrected rerun works', async () => {
    const dir = dirOf('merge-folder');
    const shard = join(dir, 'out_0.jsonl');
    writeFileSync(shard, rolloutRows(4));
    mkdirSync(join(dir, 'out_1'));
    const out = join(dir, 'merged.jsonl');
    const bad = await inProcess(mergeRolloutsCommand, [`+input_jsonl_fpaths=[${shard},${join(dir, 'out_1')}]`, `+output_jsonl_fpath=${out}`]);
    expect(bad.err).toMatch(/out_1 is a folder; give a file/);
    expect(readdirSync(dir).sort()).toEqual(['out_0.jsonl', 'out_1']);
    const good = await inProcess(mergeRolloutsCommand, [`+input_jsonl_fpaths=[${shard}]`, `+output_jsonl_fpath=${out}`]);
    expect(good.code, good.err).toBe(0);
    expect(lines(out)).toHaveLength(4);
  });
});

describe.skipIf(!BUILT)('kill -9 in the middle of a write: the output is its previous file or the complete new one; a rerun works without clean-up', () => {
  const PREVIOUS = 'previous file\n';
  const rand = mulberry32(20261128);

  /** Whether the output still holds the previous file (or, for a merge, is still absent). */
  const untouched = (out: string) => (existsSync(out) ? readFileSync(out, 'utf8') === PREVIOUS : true);

  /** Runs `trials` kills; checks every outcome with `whole`; returns how many landed mid-write. */
  async function trials(n: number, name: string, args: string[], out: string, temps: (pid: number) => string[], maxDelayMs: number, whole: (path: string) => boolean, reset: () => void): Promise<number> {
    let mid = 0;
    for (let i = 0; i < n; i++) {
      reset();
      const before = existsSync(out);
      if (await killDuringWrite(name, args, temps, () => existsSync(out) !== before || !untouched(out), maxDelayMs, rand)) mid++;
      expect(whole(out), `trial ${i + 1} of ${name}`).toBe(true);
    }
    return mid;
  }

  it('ng-export to JSONL: 12 kills', async () => {
    const dir = dirOf('kill-export-jsonl');
    const input = join(dir, 'rollouts.jsonl');
    writeFileSync(input, rolloutRows(1500));
    const out = join(dir, 'sft.jsonl');
    const args = [`+input=${input}`, `+output=${out}`, '+format=sft'];
    expect((await run('export', args)).code).toBe(0);
    const complete = readFileSync(out, 'utf8');
    expect(complete.split('\n').filter(Boolean)).toHaveLength(1500);
    const mid = await trials(12, 'export', args, out, (pid) => [tempPathOf(out, '', pid)], 80, (p) => [PREVIOUS, complete].includes(readFileSync(p, 'utf8')), () => writeFileSync(out, PREVIOUS));
    console.log(`ng-export JSONL: 12 kills, ${mid} while the temporary file was being written; every time the output was the previous file or the complete one`);
    expect(mid).toBeGreaterThan(0);
    const rerun = await run('export', args);
    expect(rerun.code, rerun.output).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(complete);
    expect(debris(dir)).toEqual([]);
  }, 60_000);

  it('Ctrl-C (SIGINT) during an export: exit 130 with a message, the output as it was, no temporary or lock file left', async () => {
    const dir = dirOf('sigint-export');
    const input = join(dir, 'rollouts.jsonl');
    writeFileSync(input, rolloutRows(3000));
    const out = join(dir, 'sft.jsonl');
    writeFileSync(out, PREVIOUS);
    const p = start('export', [`+input=${input}`, `+output=${out}`, '+format=sft']);
    const deadline = Date.now() + 20_000;
    while (!existsSync(tempPathOf(out, '', p.proc.pid!)) && p.proc.exitCode === null && Date.now() < deadline) await sleep(2);
    expect(existsSync(lockPathOf(out))).toBe(true);
    p.proc.kill('SIGINT');
    expect(await exitWithin(p, 20_000)).toBe(130);
    expect(p.output()).toContain(`ng-export: stopped by SIGINT; ${out} keeps what it held before (nothing was half-written).`);
    expect(readFileSync(out, 'utf8')).toBe(PREVIOUS);
    expect(debris(dir)).toEqual([]);
  }, 30_000);

  it('ng-export to Parquet: 3 kills (never a file without its footer)', async () => {
    const dir = dirOf('kill-export-parquet');
    const input = join(dir, 'rollouts.jsonl');
    writeFileSync(input, rolloutRows(6000));
    const out = join(dir, 'sft.parquet');
    const args = [`+input=${input}`, `+output=${out}`, '+format=sft'];
    const rows = (p: string): number | null => {
      const buf = readFileSync(p);
      if (buf.toString('utf8') === PREVIOUS) return -1;
      try {
        return Number(parquetMetadata(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)).num_rows);
      } catch {
        return null;
      }
    };
    const mid = await trials(3, 'export', args, out, (pid) => [tempPathOf(out, '', pid)], 300, (p) => rows(p) === -1 || rows(p) === 6000, () => writeFileSync(out, PREVIOUS));
    console.log(`ng-export Parquet: 3 kills, ${mid} while the temporary file was being written; every time the output was the previous file or a readable Parquet file of all 6,000 rows`);
    const rerun = await run('export', args);
    expect(rerun.code, rerun.output).toBe(0);
    expect(rows(out)).toBe(6000);
    expect(debris(dir)).toEqual([]);
  }, 60_000);

  it('ng-import with re-scoring: 3 kills (its unscored temporary file included)', async () => {
    const dir = dirOf('kill-import');
    const input = join(dir, 'chats.jsonl');
    const chat = (i: number) => JSON.stringify({ messages: [{ role: 'user', content: `Weather in city ${i}?` }, { role: 'assistant', content: `Cold in city ${i}.` }] });
    writeFileSync(input, Array.from({ length: 1500 }, (_, i) => `${chat(i)}\n`).join(''));
    const out = join(dir, 'imported.jsonl');
    const args = [`+input=${input}`, `+output=${out}`, '+format=openai_chat', `+resources_server_url=${verify.url}`];
    const whole = (p: string) => {
      const text = readFileSync(p, 'utf8');
      if (text === PREVIOUS) return true;
      const ls = text.split('\n').filter(Boolean);
      return ls.length === 1500 && ls.every((l) => (JSON.parse(l) as { reward: number }).reward === 1);
    };
    const mid = await trials(3, 'import', args, out, (pid) => [tempPathOf(out, 'unscored', pid), tempPathOf(out, '', pid)], 400, whole, () => writeFileSync(out, PREVIOUS));
    console.log(`ng-import: 3 kills, ${mid} while a temporary file was being written; every time the output was the previous file or all 1,500 re-scored rows`);
    const rerun = await run('import', args);
    expect(rerun.code, rerun.output).toBe(0);
    expect(whole(out) && readFileSync(out, 'utf8') !== PREVIOUS).toBe(true);
    expect(debris(dir)).toEqual([]);
  }, 60_000);

  it('ng-reverify: 3 kills', async () => {
    const dir = dirOf('kill-reverify');
    const input = join(dir, 'rollouts.jsonl');
    writeFileSync(input, rolloutRows(1000));
    const out = join(dir, 'reverified.jsonl');
    const args = [`+input=${input}`, `+output=${out}`, `+resources_server_url=${verify.url}`];
    const whole = (p: string) => {
      const text = readFileSync(p, 'utf8');
      return text === PREVIOUS || text.split('\n').filter(Boolean).length === 1000;
    };
    const mid = await trials(3, 'reverify', args, out, (pid) => [tempPathOf(out, '', pid)], 300, whole, () => writeFileSync(out, PREVIOUS));
    console.log(`ng-reverify: 3 kills, ${mid} while the temporary file was being written; every time the output was the previous file or all 1,000 rows`);
    const rerun = await run('reverify', args);
    expect(rerun.code, rerun.output).toBe(0);
    expect(lines(out)).toHaveLength(1000);
    expect(existsSync(join(dir, 'reverified_failures.jsonl'))).toBe(false);
    expect(debris(dir)).toEqual([]);
  }, 60_000);

  it('ng-merge-rollouts: 3 kills (no output, or the complete one; the rerun is not blocked)', async () => {
    const dir = dirOf('kill-merge');
    const shards = [join(dir, 'out_0.jsonl'), join(dir, 'out_1.jsonl')];
    writeFileSync(shards[0]!, rolloutRows(1500, 0));
    writeFileSync(shards[1]!, rolloutRows(1500, 1500));
    const out = join(dir, 'merged.jsonl');
    const args = [`+input_jsonl_fpaths=[${shards.join(',')}]`, `+output_jsonl_fpath=${out}`];
    const whole = (p: string) => !existsSync(p) || lines(p).length === 3000;
    const reset = () => {
      // A merge that finished is removed so the next one has something to do (merging never overwrites).
      for (const f of [out, join(dir, 'merged_metrics.json')]) rmSync(f, { force: true });
    };
    const mid = await trials(3, 'merge-rollouts', args, out, (pid) => [tempPathOf(out, '', pid)], 150, whole, reset);
    console.log(`ng-merge-rollouts: 3 kills, ${mid} while the temporary file was being written; every time there was no output or all 3,000 rows`);
    if (existsSync(out)) reset();
    const rerun = await run('merge-rollouts', args);
    expect(rerun.code, rerun.output).toBe(0);
    expect(lines(out)).toHaveLength(3000);
    expect(debris(dir)).toEqual([]);
  }, 60_000);
});

describe.skipIf(!BUILT)('one writer per output', () => {
  let agent: { port: number; server: Server };
  const delay = { ms: 15 };
  let headPort: number;
  let head: Awaited<ReturnType<typeof startHeadServer>>;
  const config = () => ({ head_server: { host: '127.0.0.1', port: headPort }, stub_agent: { responses_api_agents: { stub: { host: '127.0.0.1', port: agent.port } } } });
  beforeAll(async () => {
    agent = await stubAgent(delay);
    headPort = await findOpenPort([]);
    head = await startHeadServer(config(), '127.0.0.1', headPort);
  });
  afterAll(async () => {
    await head?.close();
    agent?.server.close();
  });

  const input = (dir: string, n: number) => {
    const p = join(dir, 'in.jsonl');
    writeFileSync(p, Array.from({ length: n }, (_, i) => `${JSON.stringify({ responses_create_params: { input: `q${i}` } })}\n`).join(''));
    return p;
  };
  const keys = (out: string) => lines(out).map((l) => {
    const r = JSON.parse(l) as { _ng_task_index: number; _ng_rollout_index: number; question: string };
    expect(r.question).toBe(`q${r._ng_task_index}`);
    return `${r._ng_task_index}:${r._ng_rollout_index}`;
  });
  const collectArgs = (inp: string, out: string, extra: string[] = []) => [
    `+input_jsonl_fpath=${inp}`,
    `+output_jsonl_fpath=${out}`,
    '+agent_name=stub_agent',
    `+head_server.port=${headPort}`,
    '+preflight=false',
    '+num_samples_in_parallel=4',
    ...extra,
  ];

  it('two local ng-collect-rollouts on one output: the second is refused naming the first; no row is doubled', async () => {
    const dir = dirOf('two-local');
    // Slow enough that the first collector still runs when the second starts (80 rollouts, 4 at a time: 2 s).
    delay.ms = 100;
    const inp = input(dir, 80);
    const out = join(dir, 'o.jsonl');
    const first = start('collect-rollouts', collectArgs(inp, out));
    try {
      const deadline = Date.now() + 20_000;
      while (lines(out).length < 2 && first.proc.exitCode === null && Date.now() < deadline) await sleep(10);
      const second = await run('collect-rollouts', collectArgs(inp, out), [], 15_000);
      expect(second.code).toBe(1);
      expect(second.output).toContain(`${out} is being written by another process: ng-collect-rollouts (pid ${first.proc.pid} on this host (${hostname()})`);
      expect(await exitWithin(first, 30_000), first.output()).toBe(0);
    } finally {
      first.proc.kill('SIGKILL');
    }
    const k = keys(out);
    expect(k).toHaveLength(80);
    expect(new Set(k).size).toBe(80);
    expect(existsSync(lockPathOf(out))).toBe(false);
    delay.ms = 15;
  }, 60_000);

  it("a collector killed with -9 leaves a lock the rerun takes over with a notice; the rerun resumes, doubling nothing", async () => {
    const dir = dirOf('stale-lock');
    const inp = input(dir, 80);
    const out = join(dir, 'o.jsonl');
    const first = start('collect-rollouts', collectArgs(inp, out));
    const deadline = Date.now() + 20_000;
    while (lines(out).length < 5 && first.proc.exitCode === null && Date.now() < deadline) await sleep(10);
    first.proc.kill('SIGKILL');
    await first.exit;
    expect(JSON.parse(readFileSync(lockPathOf(out), 'utf8')).pid).toBe(first.proc.pid);
    const rerun = await run('collect-rollouts', collectArgs(inp, out));
    expect(rerun.code, rerun.output).toBe(0);
    expect(rerun.output).toContain(`Taking over the lock ${lockPathOf(out)}: the ng-collect-rollouts that held it (pid ${first.proc.pid}, since `);
    expect(rerun.output).toMatch(/is no longer running\.\n/);
    const k = keys(out);
    expect(k).toHaveLength(80);
    expect(new Set(k).size).toBe(80);
    expect(existsSync(lockPathOf(out))).toBe(false);
  }, 60_000);

  const redisBin = findRedisServer();
  it.skipIf(redisBin.path === null)('two queue-mode ng-collect-rollouts on one output: the second is refused; the first finishes with no row doubled', async () => {
    const redis: LocalRedis = await startRedisServer();
    const dir = dirOf('two-queue');
    const inp = input(dir, 60);
    const out = join(dir, 'o.jsonl');
    const stop = new AbortController();
    const client = new ServerClient({ globalConfig: config() });
    const queueArgs = collectArgs(inp, out, [`+queue_url=${redis.url}`, '+queue_name=lock-test']);
    const first = start('collect-rollouts', queueArgs);
    try {
      const deadline = Date.now() + 20_000;
      const holder = () => {
        try {
          return (JSON.parse(readFileSync(lockPathOf(out), 'utf8')) as { pid: number }).pid;
        } catch {
          return null;
        }
      };
      while (holder() !== first.proc.pid && first.proc.exitCode === null && Date.now() < deadline) await sleep(10);
      const second = await run('collect-rollouts', queueArgs, [], 15_000);
      expect(second.code).toBe(1);
      expect(second.output).toContain(`is being written by another process: ng-collect-rollouts (pid ${first.proc.pid} on this host`);
      // Now a worker runs the first collector's jobs.
      const worker = runWorker({ client, queueUrl: redis.url, queue: 'lock-test', concurrency: 8, signal: stop.signal });
      expect(await exitWithin(first, 30_000), first.output()).toBe(0);
      stop.abort();
      await worker;
      const k = keys(out);
      expect(k).toHaveLength(60);
      expect(new Set(k).size).toBe(60);
      expect(existsSync(lockPathOf(out))).toBe(false);
    } finally {
      first.proc.kill('SIGKILL');
      stop.abort();
      await client.close();
      await redis.stop();
    }
  }, 60_000);
});

describe('file-system errors are one line naming the path and the fix', () => {
  const oneLine = (text: string) => {
    expect(text).not.toMatch(/unexpected error|\n\s+at /);
    expect(text.trim().split('\n')).toHaveLength(1);
  };

  it('EISDIR, a path through a regular file, /proc (at once, no spinning), a raw errno from any command', async () => {
    const dir = dirOf('fs-errors');
    const input = join(dir, 'in.jsonl');
    writeFileSync(input, rolloutRows(2));
    writeFileSync(join(dir, 'file.txt'), '');
    const cases: [string, RegExp][] = [
      [dir, /\+output=.* is a folder; give the path of a file to write/],
      [join(dir, 'file.txt', 'o.jsonl'), /file\.txt is a regular file, not a folder/],
      ['/proc/self/sft.jsonl', /is on \/proc, a virtual file system/],
    ];
    for (const [output, message] of cases) {
      const t0 = Date.now();
      const r = await inProcess(exportCommand, [`+input=${input}`, `+output=${output}`, '+format=sft']);
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(message);
      oneLine(r.err);
    }
    const raw: CommandSpec = { name: 'raw', summary: 'reads a file that is not there', main: async () => (readFileSync(join(dir, 'missing', 'x.jsonl')), 0) };
    const r = await inProcess(raw, []);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`ng-raw: cannot open ${join(dir, 'missing', 'x.jsonl')}: it does not exist (check the path) [ENOENT]\n`);
  });

  const canDropPrivileges = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0;
  it.skipIf(!canDropPrivileges || !BUILT)('EACCES: an unprivileged user exporting into a folder it may not write', async () => {
    const dir = dirOf('eacces');
    const input = join(dir, 'in.jsonl');
    writeFileSync(input, rolloutRows(2));
    chmodSync(input, 0o644);
    const locked = join(dir, 'locked');
    mkdirSync(locked);
    chmodSync(locked, 0o555);
    const r = await run('export', [`+input=${input}`, `+output=${join(locked, 'o.jsonl')}`, '+format=sft'], ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups']);
    expect(r.code).toBe(1);
    expect(r.output).toMatch(new RegExp(`cannot create files in ${locked}: permission denied \\(check the owner and mode of the file and its folder\\) \\[EACCES\\]`));
    oneLine(r.output);
  }, 30_000);

  it.skipIf(process.getuid?.() !== 0 || !BUILT)('ENOSPC: a full disk mid-export leaves the previous output and no temporary file', async (ctx) => {
    const mnt = dirOf('enospc');
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mnt]).status !== 0) {
      ctx.skip();
      return;
    }
    try {
      const input = join(root, 'enospc-in.jsonl');
      writeFileSync(input, rolloutRows(2500));
      const out = join(mnt, 'sft.jsonl');
      writeFileSync(out, 'previous\n');
      const r = await run('export', [`+input=${input}`, `+output=${out}`, '+format=sft']);
      expect(r.code).toBe(1);
      expect(r.output).toContain(`cannot write ${out}: the disk is full (free some space, then run the same command again) [ENOSPC]`);
      oneLine(r.output);
      expect(readFileSync(out, 'utf8')).toBe('previous\n');
      expect(readdirSync(mnt)).toEqual(['sft.jsonl']);
    } finally {
      spawnSync('umount', [mnt]);
    }
  }, 30_000);
});

describe('a torn line in a merge input', () => {
  it('is reported with its file and line, its rollout recorded as failed, and the merge exits 1', async () => {
    const dir = dirOf('torn');
    const good = rolloutRows(4).split('\n').filter(Boolean);
    const cut = good[1]!.slice(0, 300);
    const shard0 = join(dir, 'out_0.jsonl');
    const shard1 = join(dir, 'out_1.jsonl');
    // Line 2 of shard 0 is torn mid-row (its tags are lost); shard 1's line 1 kept its tags before the tear.
    writeFileSync(shard0, `${good[0]}\n${cut}\n${good[2]}\n`);
    writeFileSync(shard1, `{"_ng_task_index":9,"_ng_rollout_index":0,"reward":1,"respo\n${good[3]}\n`);
    const out = join(dir, 'merged.jsonl');
    const r = await inProcess(mergeRolloutsCommand, [`+input_jsonl_fpaths=[${shard0},${shard1}]`, `+output_jsonl_fpath=${out}`]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`Line 2 of ${shard0} is torn (not JSON (`);
    expect(r.err).toContain(`Line 1 of ${shard1} is torn (not JSON (`);
    expect(r.err).toContain('task 9, rollout 0; recorded as failed');
    expect(lines(out)).toHaveLength(3);
    const failures = lines(join(dir, 'merged_failures.jsonl')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(failures).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ _ng_task_index: 9, _ng_rollout_index: 0, reason_class: 'torn_line', file: shard1, file_line: 1 }),
        expect.objectContaining({ _ng_task_index: null, reason_class: 'torn_line', file: shard0, file_line: 2 }),
      ]),
    );
    expect(failures).toHaveLength(2);
  });
});

describe('ng-reverify sidecars', () => {
  it("a clean run removes an earlier run's _failures.jsonl", async () => {
    const dir = dirOf('reverify-clean');
    const input = join(dir, 'rollouts.jsonl');
    writeFileSync(input, rolloutRows(3));
    const out = join(dir, 're.jsonl');
    writeFileSync(join(dir, 're_failures.jsonl'), '{"line":1,"reason":"from an earlier run"}\n');
    const r = await inProcess(reverifyCommand, [`+input=${input}`, `+output=${out}`, `+resources_server_url=${verify.url}`]);
    expect(r.code, r.err).toBe(0);
    expect(lines(out)).toHaveLength(3);
    expect(existsSync(join(dir, 're_failures.jsonl'))).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, 're_summary.json'), 'utf8'))).toMatchObject({ rows: 3, failed: 0, failuresPath: null });
    expect(debris(dir)).toEqual([]);
  });
});
