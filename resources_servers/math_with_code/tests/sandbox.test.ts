// Hostile or runaway model code: each case must end with a clear tool output, and the server
// must keep serving (a normal call afterwards works).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, hasPython, Session, type App } from './helpers.js';
import { SessionPool } from '../src/sessions.js';
import { processAlive, type Sandbox } from '@nemo-gym/sandbox';
import { createSandbox, removeStaleScratch, type SandboxOptions } from '../src/sandbox.js';

const alive = processAlive;

describe.skipIf(!hasPython)('sandbox', () => {
  let app: App;
  beforeAll(async () => {
    process.env.MATH_WITH_CODE_TEST_SECRET = 'do-not-leak';
    app = await buildApp({ max_execution_time: 1, kill_grace_s: 0.5, memory_limit_mb: 768, output_limit_chars: 1000 });
  });
  afterAll(async () => {
    delete process.env.MATH_WITH_CODE_TEST_SECRET;
    await app?.close();
  });

  const stillWorks = async (s: Session) => {
    expect(await s.run('print(6 * 7)')).toEqual({ success: true, stdout: '42\n', stderr: '', error_message: null, result: null });
  };

  it('infinite loop that ignores SIGALRM: the process group is killed, the next call gets a fresh interpreter', async () => {
    const s = new Session(app);
    await s.run('before = 1');
    const pool = app.ngContext.state.pool;
    const sid = pool.sessionIds().at(-1)!;
    const pid = pool.pidOf(sid);
    expect(alive(pid)).toBe(true);
    const out = await s.run('import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass');
    expect(out.success).toBe(false);
    expect(out.error_message).toMatch(/^code timed-out \(no result after 1 s; the interpreter was stopped/);
    expect(alive(pid)).toBe(false);
    await stillWorks(s);
    expect((await s.run('before')).error_message).toBe("name 'before' is not defined");
    expect(pool.pidOf(sid)).not.toBe(pid);
  });

  it('fork bomb: creating processes is refused, the session keeps its state', async () => {
    const s = new Session(app);
    await s.run('kept = "yes"');
    const bomb = await s.run('import os\nwhile True:\n    os.fork()');
    expect(bomb.success).toBe(false);
    expect(bomb.error_message).toBe('[Errno 1] Operation not permitted (this sandbox does not allow starting processes or signalling other processes)');
    const sub = await s.run('import subprocess\nsubprocess.run(["true"])');
    expect(sub.error_message).toContain('Operation not permitted');
    expect((await s.run('kept')).result).toBe('yes');
    await stillWorks(s);
  });

  it('huge output: stdout and result are cut at output_limit_chars with a note', async () => {
    const s = new Session(app);
    const out = await s.run('for i in range(20000):\n    print("line", i)');
    expect(out.success).toBe(true);
    expect(out.stdout.startsWith('line 0\nline 1\n')).toBe(true);
    const kept = out.stdout.slice(0, 1000);
    const total = 7 * 10 + 8 * 90 + 9 * 900 + 10 * 9000 + 11 * 10000; // 'line i\n' for i < 20000
    const dropped = total - 1000;
    expect(out.stdout).toBe(`${kept}\n[output truncated: ${dropped} more characters not shown]`);
    const big = await s.run('"y" * 5000');
    expect(big.result).toBe(`${'y'.repeat(1000)}\n[output truncated: 4000 more characters not shown]`);
    await stillWorks(s);
  });

  it('memory hog: stopped by the memory limit with a clear message, the session survives', async () => {
    const s = new Session(app);
    await s.run('kept = 3');
    // One allocation far above the limit fails at once (a loop of small ones ends the same way,
    // but touching every page takes long enough to race the 1 s time limit on a slow machine).
    const hog = await s.run('hog = [0] * (10**10)');
    expect(hog).toEqual({
      success: false,
      stdout: '',
      stderr: '',
      error_message: 'MemoryError: the code used more memory than allowed (768 MiB per interpreter)',
      result: null,
    });
    expect((await s.run('kept')).result).toBe('3');
    await stillWorks(s);
  });

  it('network attempt: connections fail with "Network is unreachable"', async () => {
    const s = new Session(app);
    const out = await s.run('import socket\nsocket.create_connection(("127.0.0.1", 9), timeout=2)');
    expect(out.success).toBe(false);
    expect(out.error_message).toBe('[Errno 101] Network is unreachable');
    const unix = await s.run('import socket\nsocket.socket(socket.AF_UNIX).connect("/var/run/docker.sock")');
    expect(unix.error_message).toBe('[Errno 101] Network is unreachable');
    await stillWorks(s);
  });

  it('the interpreter exiting on purpose is reported and replaced; SystemExit is just an error', async () => {
    const s = new Session(app);
    expect((await s.run('import sys\nsys.exit(2)')).error_message).toBe('2');
    const out = await s.run('import os\nos._exit(3)');
    expect(out.error_message).toBe('the Python interpreter stopped unexpectedly (exited); variables defined earlier are lost');
    await stillWorks(s);
  });

  it('garbage written on the reply channel stops that interpreter only', async () => {
    const s = new Session(app);
    const out = await s.run('import os\nos.write(4, b"not json\\n")\nwhile True:\n    pass');
    expect(out.error_message).toBe(
      'the interpreter wrote something other than a reply on its reply channel and was stopped; variables defined earlier are lost',
    );
    await stillWorks(s);
  });

  it('reads only system and interpreter folders: not the repository, not other processes', async (ctx) => {
    const { landlock } = app.ngContext.state.sandboxStatus;
    if (!landlock.startsWith('active')) {
      console.log(`math_with_code: Landlock is not available here (${landlock}); file isolation test skipped`);
      ctx.skip();
    }
    const s = new Session(app);
    const repoFile = new URL('../package.json', import.meta.url).pathname;
    const repo = await s.run(`import io\nio.open(${JSON.stringify(repoFile)}).read()`);
    expect(repo.error_message).toBe(`[Errno 13] Permission denied: '${repoFile}'`);
    const environ = await s.run(`import io\nio.open("/proc/${process.pid}/environ").read()`);
    expect(environ.error_message).toBe(`[Errno 13] Permission denied: '/proc/${process.pid}/environ'`);
    expect((await s.run('import io, os\nio.open("notes.txt", "w").write("kept")\nio.open("notes.txt").read()')).result).toBe('kept');
    expect((await s.run('import fractions\nfractions.Fraction(6, 4)')).result).toBe('3/2');
    await stillWorks(s);
  });

  it('model code sees none of the server\'s environment', async () => {
    const s = new Session(app);
    const out = await s.run('import os\nsorted_keys = list(os.environ)\nprint(os.environ.get("MATH_WITH_CODE_TEST_SECRET"))');
    expect(out.stdout).toBe('None\n');
  });

  it('cannot signal the server process', async () => {
    const s = new Session(app);
    const out = await s.run(`import os\nos.kill(${process.pid}, 0)`);
    expect(out.success).toBe(false);
    expect(out.error_message).toContain('Operation not permitted');
  });
});

describe('scratch folders of killed servers', () => {
  it('removes folders whose server pid is gone and keeps those of live servers', async () => {
    const { mkdtempSync, mkdirSync, existsSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const root = mkdtempSync(`${tmpdir()}/mwc-scratch-test-`);
    try {
      // A pid above the kernel's maximum (4194304) cannot exist.
      const dead = `${root}/ng-math-with-code-4999999-abc`;
      const live = `${root}/ng-math-with-code-${process.pid}-def`;
      const other = `${root}/something-else`;
      for (const d of [dead, live, other]) mkdirSync(d);
      expect(await removeStaleScratch(root)).toBe(1);
      expect([existsSync(dead), existsSync(live), existsSync(other)]).toEqual([false, true, true]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!hasPython)('session pool', () => {
  let sandbox: SandboxOptions;
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await createSandbox({ python: 'python3', provider: 'local', isolateNetwork: true });
    sandbox = {
      sandbox: sb,
      timeoutS: 5,
      killGraceS: 1,
      memoryLimitMb: 1024,
      sessionCpuLimitS: 60,
      fileSizeLimitMb: 1,
      openFilesLimit: 64,
      outputLimitChars: 1000,
      startupTimeoutS: 30,
      preloadModules: [],
      allowSubprocesses: false,
      allowNetwork: false,
    };
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('closes idle interpreters and evicts the least recently used one at max_sessions', async () => {
    const pool = new SessionPool({ sandbox, idleTimeoutS: 60, maxSessions: 2 });
    try {
      await pool.exec('a', 'x = 1');
      await pool.exec('b', 'x = 2');
      await pool.exec('a', 'x');
      const pidB = pool.pidOf('b');
      await pool.exec('c', 'x = 3'); // b is the least recently used
      expect([pool.has('a'), pool.has('b'), pool.has('c')]).toEqual([true, false, true]);
      expect(pool.reapIdle(Date.now())).toBe(0);
      const pidA = pool.pidOf('a');
      expect(pool.reapIdle(Date.now() + 61_000)).toBe(2);
      expect(pool.size).toBe(0);
      await pool.closeAll(); // waits for the background closes
      expect([alive(pidA), alive(pidB)]).toEqual([false, false]);
    } finally {
      await pool.closeAll();
    }
  });

  it('hands out a warm spare interpreter and starts a new spare', async () => {
    const pool = new SessionPool({ sandbox, idleTimeoutS: 0, maxSessions: 4, prespawn: 1 });
    try {
      expect(pool.spareCount).toBe(1);
      expect((await pool.exec('s1', 'x = 1\nx')).result).toBe('1');
      expect(pool.spareCount).toBe(1);
      expect((await pool.exec('s2', 'x')).error_message).toBe("name 'x' is not defined"); // spares share nothing
    } finally {
      await pool.closeAll();
    }
    expect(pool.spareCount).toBe(0);
    expect((await pool.exec('s3', '1')).error_message).toBe('the server is shutting down');
  });

  it('stops a session that uses up its CPU time limit and explains why', async () => {
    const pool = new SessionPool({ sandbox: { ...sandbox, sessionCpuLimitS: 1, timeoutS: 30 }, idleTimeoutS: 0, maxSessions: 4 });
    try {
      const out = await pool.exec('s', 'while True:\n    pass');
      expect(out.error_message).toBe(
        'the session used up its CPU time limit (1 s); the interpreter was restarted and variables defined earlier are lost',
      );
      expect((await pool.exec('s', '6 * 7')).result).toBe('42');
    } finally {
      await pool.closeAll();
    }
  });

  it('writes files only below RLIMIT_FSIZE, in a private scratch folder removed at close', async () => {
    const pool = new SessionPool({ sandbox, idleTimeoutS: 0, maxSessions: 4 });
    try {
      const where = await pool.exec('s', 'import io, os\nd = os.getcwd()\nio.open("small.txt", "w").write("ok")\nd');
      expect(where.success).toBe(true);
      const big = await pool.exec('s', 'import io\nio.open("big.bin", "wb").write(b"0" * (2 * 1024 * 1024))');
      expect(big.success).toBe(false);
      expect(big.error_message).toContain('File too large');
      const { existsSync } = await import('node:fs');
      expect(existsSync(`${where.result}/small.txt`)).toBe(true);
      await pool.end('s');
      expect(existsSync(where.result!)).toBe(false);
    } finally {
      await pool.closeAll();
    }
  });
});
