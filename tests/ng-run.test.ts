import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { findOpenPort } from '@nemo-gym/core/config';
import { isAlive, requireBuild, ROOT, runCommand, startStack } from './helpers/stack.js';

const WEATHER = 'resources_servers/simple_weather/configs/simple_weather.yaml';
const REPLAY = 'responses_api_models/replay_model/configs/replay_model.yaml';

describe('ng-run', () => {
  it('starts three servers, serves the config, keeps sessions, and stops with no leftover process', async () => {
    const stack = await startStack([`+config_paths=[${WEATHER},${REPLAY}]`]);
    try {
      expect(stack.output()).toMatch(/All 3 server\(s\) ready in [\d.]+ s/);
      expect(stack.output()).toMatch(/simple_weather_simple_agent\s+responses_api_agents\s+simple_agent\s+http:\/\/127\.0\.0\.1:\d+\s+\d+/);

      const client = await ServerClient.fromHeadServer({ host: '127.0.0.1', port: stack.headPort });
      const tool = await client.post('simple_weather', '/get_weather', { city: 'Lima' });
      expect(tool.json()).toEqual({ city: 'Lima', weather_description: 'The weather in Lima is cold.' });
      // Session cookie round trip: sending the cookie back keeps the session id.
      const name = Object.keys(tool.cookies)[0]!;
      expect(name).toBe('SimpleWeatherResourcesServer___simple_weather');
      const again = await client.post('simple_weather', '/get_weather', { city: 'Lima' }, { cookies: tool.cookies });
      expect(again.cookies[name]).toBe(tool.cookies[name]);
      const other = await client.post('simple_weather', '/get_weather', { city: 'Lima' });
      expect(other.cookies[name]).not.toBe(tool.cookies[name]);

      const instances = (await client.get('head_server', '/server_instances')).json<{ name: string; pid: number }[]>();
      expect(instances.map((i) => i.name).sort()).toEqual(['policy_model', 'simple_weather', 'simple_weather_simple_agent']);
      await client.close();

      const code = await stack.stop('SIGTERM');
      expect(code).toBe(0);
      await new Promise((r) => setTimeout(r, 200));
      for (const i of instances) expect(isAlive(i.pid)).toBe(false);
    } finally {
      await stack.stop('SIGKILL');
    }
  });

  it('names a server that dies during start-up and shows its log', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ng-run-'));
    const cfg = join(dir, 'broken.yaml');
    // The replay model cannot read its recordings: it exits at start-up.
    writeFileSync(cfg, 'policy_model:\n  responses_api_models:\n    replay_model:\n      entrypoint: app.ts\n      recordings_jsonl_fpaths: [/nonexistent/recordings.jsonl]\n');
    const res = await runCommand('run', [`+config_paths=[${cfg}]`, '+head_server.port=0']);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/Server `policy_model` \(responses_api_models\/replay_model\) exited during start-up/);
    expect(res.stderr).toMatch(/recordings\.jsonl/);
  });
});

/** How to run pnpm here: the one running these tests, else pnpm on PATH; null when there is none. */
function pnpmCommand(): string[] | null {
  const viaEnv = process.env.npm_execpath;
  if (viaEnv && /pnpm/.test(viaEnv)) return [process.execPath, viaEnv];
  return spawnSync('pnpm', ['--version'], { encoding: 'utf8' }).status === 0 ? ['pnpm'] : null;
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** Whether something accepts connections on 127.0.0.1:`port` (a probe that cannot take the port from a server about to bind it). */
function portListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => (sock.destroy(), resolve(true)));
    sock.once('error', () => resolve(false));
  });
}

const readLog = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8') : '');

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

const pnpm = pnpmCommand();
if (!pnpm) console.log('skipping the `pnpm ng-run` lifecycle test: pnpm is not installed');

describe.skipIf(!pnpm)('ng-run started through pnpm', () => {
  it('SIGTERM to pnpm (as `pnpm ng-run … & kill $!` sends it) leaves no process and frees the head port', async () => {
    requireBuild();
    const headPort = await findOpenPort([]);
    const [cmd, ...pre] = pnpm!;
    const proc = spawn(cmd!, [...pre, 'ng-run', `+config_paths=[${WEATHER},${REPLAY}]`, `+head_server.port=${headPort}`, '+head_server.host=127.0.0.1'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const pids: number[] = [];
    try {
      expect(await until(() => /server\(s\) ready in/.test(out) || proc.exitCode !== null, 60_000), out).toBe(true);
      const runPid = Number(/\(head server\)\s+-\s+-\s+\S+\s+(\d+)/.exec(out)?.[1]);
      expect(runPid, out).toBeGreaterThan(0);
      expect(runPid).not.toBe(proc.pid);
      const client = await ServerClient.fromHeadServer({ host: '127.0.0.1', port: headPort });
      const instances = (await client.get('head_server', '/server_instances')).json<{ pid: number }[]>();
      await client.close();
      pids.push(runPid, ...instances.map((i) => i.pid));
      expect(pids).toHaveLength(4);

      proc.kill('SIGTERM');
      const gone = await until(async () => pids.every((p) => !isAlive(p)) && (await portIsFree(headPort)), 15_000);
      expect(gone, `still running: ${pids.filter(isAlive).join(', ')}\n${out}`).toBe(true);
      expect(out).toMatch(/The process that started ng-run \(pid \d+\) has exited: stopping 3 server\(s\)/);
    } finally {
      proc.kill('SIGKILL');
      for (const p of pids) if (isAlive(p)) process.kill(p, 'SIGKILL');
    }
  }, 90_000);
});

/** Runs a command to its end (as spawnSync would, without blocking this process, so tests can run side by side). */
function runToEnd(cmd: string, args: string[], timeoutMs: number): Promise<{ status: number | null; stdout: string; stderr: string; error?: Error }> {
  return new Promise((resolve) => {
    const proc = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.once('error', (error) => {
      clearTimeout(timer);
      resolve({ status: null, stdout, stderr, error });
    });
    proc.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

describe.skipIf(!pnpm).concurrent('the commands on PATH after install', () => {
  it.each([
    ['pnpm exec', 'ng-run'],
    ['pnpm exec', 'ng_run'],
    ['pnpm exec', 'nemo_gym_collect_rollouts'],
    ['npx --no-install', 'ng_dump_config'],
  ])('%s %s --help', async (runner, name) => {
    requireBuild();
    const [cmd, ...pre] = runner.startsWith('pnpm') ? pnpm! : ['npx'];
    const r = await runToEnd(cmd!, [...pre, ...runner.split(' ').slice(1), name, '--help'], 60_000);
    if (r.error && runner.startsWith('npx')) return console.log(`skipping ${runner}: ${r.error.message}`);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Usage: ng-[a-z-]+ \[options\] \[settings\.\.\.\]/);
  });
});

describe.concurrent.each(['run', 'viewer'])('ng-%s whose parent exits', (command) => {
  /**
   * Starts the command in the background from a shell, waits until the command serves on `port`
   * (it watches its launcher from before it listens), then lets the shell exit. Returns the pid.
   */
  async function orphan(env: NodeJS.ProcessEnv, port: number): Promise<number> {
    requireBuild();
    let args = `+head_server.port=${port} +head_server.host=127.0.0.1`;
    if (command === 'viewer') {
      const rollouts = join(mkdtempSync(join(tmpdir(), 'ng-viewer-')), 'rollouts.jsonl');
      writeFileSync(rollouts, '{"reward": 1.0}\n');
      args = `+jsonl_fpath=${rollouts} +port=${port}`;
    }
    const log = join(mkdtempSync(join(tmpdir(), 'ng-orphan-')), 'out.log');
    // The shell stays until its stdin closes (the background command's stdin is /dev/null).
    const sh = spawn('sh', ['-c', `"${process.execPath}" packages/cli/bin/ng-${command}.js ${args} >"${log}" 2>&1 & echo $!; read _ || true`], {
      cwd: ROOT,
      env,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    sh.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const shellGone = new Promise((r) => sh.once('exit', r));
    expect(await until(() => /^\d+\n/.test(out), 15_000), 'the shell printed no pid').toBe(true);
    const pid = Number(out.trim());
    expect(pid).toBeGreaterThan(0);
    // ng-run watches its launcher before it binds the head port; ng-viewer right after it prints its address.
    const ready = (): boolean | Promise<boolean> => (command === 'viewer' ? /Rollouts viewer for/.test(readLog(log)) : portListening(port));
    const started = await until(async () => !isAlive(pid) || (await ready()), 60_000);
    expect(started && isAlive(pid), `ng-${command} did not start:\n${readLog(log)}`).toBe(true);
    sh.stdin!.end();
    await shellGone;
    return pid;
  }
  const withoutRunner = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('npm_')));

  it('stops when the package runner that started it has exited', async () => {
    const port = await findOpenPort([]);
    const pid = await orphan({ ...withoutRunner(), npm_lifecycle_event: `ng-${command}` }, port);
    try {
      expect(await until(async () => !isAlive(pid) && (await portIsFree(port)), 15_000)).toBe(true);
    } finally {
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('keeps running when started without one (as `nohup ng-run &` is), until SIGHUP stops it', async () => {
    const port = await findOpenPort([]);
    const pid = await orphan(withoutRunner(), port);
    try {
      expect(await until(() => portListening(port), 15_000)).toBe(true);
      // Four times the interval at which a command checks on its launcher.
      await new Promise((r) => setTimeout(r, 1000));
      expect(isAlive(pid)).toBe(true);
      process.kill(pid, 'SIGHUP');
      expect(await until(async () => !isAlive(pid) && (await portIsFree(port)), 15_000)).toBe(true);
    } finally {
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});

describe.concurrent('config errors from the command line', () => {
  const noStack = (s: string) => expect(s).not.toMatch(/\n\s+at .*\(/);

  it('a missing config file', async () => {
    const r = await runCommand('dump-config', ['+config_paths=[configs/does_not_exist.yaml]']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Config file not found: .*configs\/does_not_exist\.yaml \(listed in config_paths by the command line\)/);
    noStack(r.stderr);
  });

  it('a YAML syntax error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ng-cfg-'));
    writeFileSync(join(dir, 'bad.yaml'), 'a:\n  b: [1, 2\n');
    const r = await runCommand('dump-config', [`+config_paths=[${join(dir, 'bad.yaml')}]`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/YAML syntax error in .*bad\.yaml at line \d+, column \d+/);
    noStack(r.stderr);
  });

  it('an unknown server ref', async () => {
    const r = await runCommand('dump-config', [`+config_paths=[${WEATHER}]`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/simple_weather_simple_agent\.responses_api_agents\.simple_agent\.model_server` refers to the responses_api_models server `policy_model`, which is not in the config/);
    expect(r.stderr).toMatch(/simple_weather\.yaml/);
    noStack(r.stderr);
  });

  it('an unresolvable interpolation', async () => {
    const r = await runCommand('dump-config', ['+config_paths=[responses_api_models/openai_model/configs/openai_model.yaml]']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/openai_model\.yaml/);
    expect(r.stderr).toMatch(/\$\{policy_base_url\}/);
    noStack(r.stderr);
  });

  it('dump-config never prints a key', async () => {
    const r = await runCommand('dump-config', ['+policy_api_key=sk-verysecret123', '+policy_base_url=http://127.0.0.1:1/v1', '+policy_model_name=m', '+config_paths=[responses_api_models/openai_model/configs/openai_model.yaml]']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('sk-verysecret123');
    expect(r.stdout).toMatch(/openai_api_key: "?\*\*\*\*"?/);
    expect(r.stdout).toMatch(/openai_base_url: http:\/\/127\.0\.0\.1:1\/v1/);
  });

  it('ng-help lists the commands', async () => {
    const r = await runCommand('help', []);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ng-run/);
    expect(r.stdout).toMatch(/ng-collect-rollouts/);
  });
});
