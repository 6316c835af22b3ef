// One-shot runs, sessions and the pool on every provider that runs here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox } from '../src/sandbox.js';
import { SandboxBusyError } from '../src/errors.js';
import { execFileSync } from 'node:child_process';
import { alive, CONTAINER, hasContainer, hasPython, providersHere } from './helpers.js';

describe.skipIf(!hasPython).each(providersHere)('provider %s', (provider) => {
  let sb: Sandbox;
  beforeAll(async () => {
    process.env.NG_SANDBOX_TEST_SECRET = 'sk-test-must-not-leak';
    sb = await Sandbox.create({ provider, container: CONTAINER, poolSize: 2, limits: { wallMs: 5000, memoryBytes: 512 * 1024 ** 2 } });
  }, 60_000);
  afterAll(async () => {
    delete process.env.NG_SANDBOX_TEST_SECRET;
    await sb?.close();
  });

  it('runs a script with stdin and files, in an allow-listed environment', async () => {
    const r = await sb.run({
      argv: ['python', 'main.py', 'arg1'],
      files: { 'main.py': 'import sys, os\nprint(sys.argv[1], sys.stdin.read().upper(), open("data/in.txt").read(), os.environ.get("NG_SANDBOX_TEST_SECRET"), os.environ["X"])\n', 'data/in.txt': 'file' },
      stdin: 'hello',
      env: { X: 'given' },
    });
    expect(r).toMatchObject({ exitCode: 0, signal: null, stdout: 'arg1 HELLO file None given\n', stderr: '', timedOut: false, truncated: false, outOfMemory: false, provider });
    expect(r.durations.runMs).toBeGreaterThan(0);
  });

  it('kills an infinite loop at the wall-clock limit', async () => {
    const t0 = Date.now();
    const r = await sb.run({ argv: ['python', '-c', 'import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: pass'], limits: { wallMs: 700 } });
    expect(r.timedOut).toBe(true);
    expect(r.signal ?? r.exitCode).toBeTruthy();
    expect(Date.now() - t0).toBeLessThan(4000);
  });

  it('stops a program at outputBytes and says so', async () => {
    const r = await sb.run({ argv: ['python', '-c', 'import sys\nwhile True: sys.stdout.write("x" * 65536)'], limits: { outputBytes: 100_000 } });
    expect(r.truncated).toBe(true);
    expect(r.stdout.length).toBe(100_000);
    expect(r.timedOut).toBe(false);
  });

  it('refuses processes, sockets and signals to others; reports memory exhaustion', async () => {
    const code = [
      'import os, socket',
      'def t(f):',
      '    try: f(); return "ok"',
      '    except BaseException as e: return type(e).__name__',
      'print(t(os.fork), t(lambda: socket.create_connection(("127.0.0.1", 9), timeout=1)), t(lambda: os.kill(os.getpid() + 1, 0)), t(lambda: open("/etc/shadow").read()))',
      'x = bytearray(2 * 1024**3)',
    ].join('\n');
    const r = await sb.run({ argv: ['python', '-c', code] });
    expect(r.stdout.trim()).toMatch(/^PermissionError OSError PermissionError (PermissionError|FileNotFoundError)$/);
    expect(r.outOfMemory).toBe(true);
    expect(r.exitCode).toBe(1);
  });

  it('a session keeps its interpreter between requests and is killed at a request timeout', async () => {
    const script = 'import json, os, ng_sandbox_confine\nng_sandbox_confine.apply()\nr = os.fdopen(3)\nw = os.fdopen(4, "w")\nw.write(json.dumps({"hello": 1}) + "\\n"); w.flush()\nn = 0\nfor line in r:\n    m = json.loads(line)\n    if m.get("sleep"):\n        while True: pass\n    n += 1\n    w.write(json.dumps({"n": n}) + "\\n"); w.flush()\n';
    const { writeFileSync, mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(`${tmpdir()}/ng-sandbox-test-`);
    writeFileSync(`${dir}/worker.py`, script);
    try {
      const s = await sb.openSession({ argv: ['python', `${dir}/worker.py`], defer: true });
      expect(await s.hello).toEqual({ hello: 1 });
      expect(await s.request({}, 5000)).toEqual({ ok: true, reply: { n: 1 } });
      expect(await s.request({}, 5000)).toEqual({ ok: true, reply: { n: 2 } });
      const pid = s.pid;
      const r = await s.request({ sleep: true }, 500);
      expect(r).toMatchObject({ ok: false, reason: 'timeout' });
      expect(s.alive).toBe(false);
      if (provider !== 'container') expect(alive(pid)).toBe(false);
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!hasPython)('pool', () => {
  it('runs at most poolSize programs at once, queues the rest, and refuses beyond maxQueue', async () => {
    const sb = await Sandbox.create({ provider: 'local', poolSize: 2, maxQueue: 6 });
    try {
      const runs = Array.from({ length: 8 }, () => sb.run({ argv: ['python', '-c', 'import time; time.sleep(0.2)'] }));
      await expect(sb.run({ argv: ['python', '-c', 'pass'] })).rejects.toBeInstanceOf(SandboxBusyError);
      const results = await Promise.all(runs);
      expect(results.every((r) => r.exitCode === 0)).toBe(true);
      const st = sb.stats();
      expect(st.maxRunning).toBe(2);
      expect(st.maxQueued).toBe(6);
      expect(st.maxLive).toBe(2);
      expect(Math.max(...results.map((r) => r.durations.queueMs))).toBeGreaterThan(300);
      expect(st.liveProcessGroups).toBe(0);
    } finally {
      await sb.close();
    }
  });
});

describe.skipIf(!hasContainer)('container provider start-up', () => {
  it('removes containers left by a server that was killed (its owner pid is gone)', async () => {
    const name = `ng-sbx-stale-test-${process.pid}`;
    // A pid above the kernel's maximum (4194304) cannot exist.
    // Created, not started: `ps -a` lists it all the same, and nothing has to be stopped.
    execFileSync('podman', ['create', '--name', name, '--label', 'ng-sandbox-owner=4999999', '--network', 'none', CONTAINER.image, CONTAINER.python], { stdio: 'ignore', timeout: 60_000 });
    const sb = await Sandbox.create({ provider: 'container', container: CONTAINER });
    try {
      const left = execFileSync('podman', ['ps', '-a', '--filter', `name=${name}`, '--format', '{{.Names}}'], { encoding: 'utf8', timeout: 30_000 });
      expect(left.trim()).toBe('');
    } finally {
      await sb.close();
    }
  }, 60_000);
});
