// One sandboxed `python3` interpreter per session.
//
// The interpreter is python/sandbox_worker.py, started in its own process group (detached),
// optionally behind `unshare -n` (a network namespace with no interfaces). The worker limits
// itself (RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE, no core files), drops capabilities
// and installs a seccomp filter (no new processes, no non-UNIX sockets, no signals to other
// processes) before it runs any model code. The server enforces the wall-clock limit from the
// outside: when a call overruns `timeout + grace`, the whole process group gets SIGKILL.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readable, Writable } from 'node:stream';

const PACKAGE_NAME = '@nemo-gym/math_with_code';
/** Scratch folders are `<tmpdir>/ng-math-with-code-<server pid>-XXXXXX`. */
const SCRATCH_PREFIX = 'ng-math-with-code-';

/** Removes scratch folders left by servers that were killed before they could clean up (their
 * pid no longer exists). Returns how many were removed. */
export async function removeStaleScratch(dir = tmpdir()): Promise<number> {
  let removed = 0;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const m = new RegExp(`^${SCRATCH_PREFIX}(\\d+)-`).exec(name);
    if (!m) continue;
    try {
      process.kill(Number(m[1]), 0);
      continue; // its server is alive
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') continue;
    }
    await rm(join(dir, name), { recursive: true, force: true }).then(
      () => (removed += 1),
      () => {},
    );
  }
  return removed;
}

/** Absolute path of python/sandbox_worker.py, found from this module whether it runs from source
 * (src/sandbox.ts) or from the build (dist/src/sandbox.js). */
export function workerScriptPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === PACKAGE_NAME) {
          return join(dir, 'python', 'sandbox_worker.py');
        }
      } catch {
        // keep walking up
      }
    }
    dir = dirname(dir);
  }
  throw new Error(`cannot find the ${PACKAGE_NAME} package folder (looked for python/sandbox_worker.py above ${fileURLToPath(import.meta.url)})`);
}

export interface SandboxLimits {
  /** In-process SIGALRM limit per call, seconds (upstream `max_execution_time`). */
  timeoutS: number;
  /** Extra wall-clock seconds before the process group is killed from outside. */
  killGraceS: number;
  /** RLIMIT_AS of the interpreter, MiB. */
  memoryLimitMb: number;
  /** RLIMIT_CPU of the interpreter (whole session), seconds. */
  sessionCpuLimitS: number;
  /** RLIMIT_FSIZE, MiB. */
  fileSizeLimitMb: number;
  /** RLIMIT_NOFILE. */
  openFilesLimit: number;
  /** Characters kept of stdout, of stderr and of `result` each. */
  outputLimitChars: number;
  /** Seconds allowed for the interpreter to start (imports included). */
  startupTimeoutS: number;
}

export interface SandboxOptions extends SandboxLimits {
  /** Resolved interpreter path (see probeSandbox). */
  python: string;
  /** Command prefix that isolates the network, e.g. ['unshare', '-n'], or [] when unavailable. */
  wrapper: string[];
  preloadModules: string[];
  allowSubprocesses: boolean;
  allowNetwork: boolean;
  /** Extra folders or files the code may read (Landlock); system and interpreter folders always are. */
  readablePaths?: string[];
}

export interface ExecOutcome {
  success: boolean;
  stdout: string;
  stderr: string;
  error_message: string | null;
  result: string | null;
}

export interface WorkerHello {
  missing_modules: string[];
  seccomp: string;
  landlock: string;
  capabilities: string;
  python: string;
}

function truncated(text: string, dropped: number): string {
  return dropped > 0 ? `${text}\n[output truncated: ${dropped} more characters not shown]` : text;
}

/** Environment of the interpreter: nothing from the server's own environment but PATH, so API
 * keys and other secrets never reach model-written code. */
function sandboxEnv(workdir: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: workdir,
    TMPDIR: workdir,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    PYTHONIOENCODING: 'utf-8',
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONNOUSERSITE: '1',
    OMP_NUM_THREADS: '1',
    OPENBLAS_NUM_THREADS: '1',
    MKL_NUM_THREADS: '1',
    NUMEXPR_NUM_THREADS: '1',
    MPLBACKEND: 'Agg',
  };
}

interface Pending {
  resolve: (outcome: ExecOutcome) => void;
  timer: NodeJS.Timeout;
}

/** A single long-lived interpreter. Calls are served one at a time in arrival order. */
export class PythonInterpreter {
  private child: ChildProcess | null = null;
  private workdir: string | null = null;
  private ready: Promise<WorkerHello> | null = null;
  private pending: Pending | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private buffer = '';
  private stderrTail = '';
  private exitNote: string | null = null;
  private closed = false;
  private nextId = 1;
  /** Set when the interpreter had to be stopped or died; the next call starts a fresh one. */
  dead = false;
  busy = 0;
  lastUsed = Date.now();

  constructor(
    private readonly options: SandboxOptions,
    private readonly onNote: (msg: string) => void = () => {},
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the process if needed and waits for its hello line. */
  start(): Promise<WorkerHello> {
    if (this.ready && !this.dead) return this.ready;
    void this.dispose();
    this.dead = false;
    this.exitNote = null;
    this.buffer = '';
    this.stderrTail = '';
    const o = this.options;
    this.workdir = mkdtempSync(join(tmpdir(), `${SCRATCH_PREFIX}${process.pid}-`));
    const settings = {
      memory_limit_mb: o.memoryLimitMb,
      cpu_limit_s: o.sessionCpuLimitS,
      file_size_limit_mb: o.fileSizeLimitMb,
      open_files_limit: o.openFilesLimit,
      timeout_s: o.timeoutS,
      output_limit: o.outputLimitChars,
      workdir: this.workdir,
      preload: o.preloadModules,
      allow_subprocesses: o.allowSubprocesses,
      allow_network: o.allowNetwork,
      readable_paths: o.readablePaths ?? [],
      parent_pid: process.pid,
    };
    const argv = [...o.wrapper, o.python, '-u', '-B', workerScriptPath(), JSON.stringify(settings)];
    const child = spawn(argv[0]!, argv.slice(1), {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
      detached: true,
      env: sandboxEnv(this.workdir),
      cwd: this.workdir,
    });
    this.child = child;
    const replies = child.stdio[4] as Readable;
    const stderr = child.stdio[2] as Readable;
    const commands = child.stdio[3] as Writable;
    commands.on('error', () => {}); // EPIPE after a crash is reported through 'exit'
    replies.setEncoding('utf8');
    stderr.setEncoding('utf8');
    const current = () => this.child === child;
    stderr.on('data', (chunk: string) => {
      if (!current()) return;
      this.stderrTail = (this.stderrTail + chunk).slice(-4000);
    });

    this.ready = new Promise<WorkerHello>((resolve, reject) => {
      let started = false;
      const startTimer = setTimeout(() => {
        if (started) return;
        this.kill('the interpreter did not start in time');
        reject(new Error(`python3 did not start within ${o.startupTimeoutS} s`));
      }, o.startupTimeoutS * 1000);
      const onLine = (line: string) => {
        if (this.dead) return; // stopped: whatever it still sent does not count
        let msg: Record<string, unknown>;
        try {
          msg = JSON.parse(line) as Record<string, unknown>;
        } catch {
          this.kill('the interpreter wrote something other than a reply on its reply channel and was stopped; variables defined earlier are lost');
          return;
        }
        if (!started) {
          started = true;
          clearTimeout(startTimer);
          resolve(msg as unknown as WorkerHello);
          return;
        }
        this.settle(msg);
      };
      const maxLine = o.outputLimitChars * 3 * 6 + 1024 * 1024;
      replies.on('data', (chunk: string) => {
        if (!current()) return;
        this.buffer += chunk;
        let nl: number;
        while ((nl = this.buffer.indexOf('\n')) !== -1) {
          const line = this.buffer.slice(0, nl);
          this.buffer = this.buffer.slice(nl + 1);
          onLine(line);
        }
        if (this.buffer.length > maxLine) this.kill('the interpreter sent an oversized reply and was stopped; variables defined earlier are lost');
      });
      child.on('error', (err) => {
        clearTimeout(startTimer);
        if (!started) reject(new Error(`cannot start ${argv[0]}: ${err.message}`));
        if (current()) this.dead = true;
      });
      child.on('exit', (code, signal) => {
        clearTimeout(startTimer);
        const isCurrent = current();
        if (!started) {
          const how = signal ? `signal ${signal}` : `exit code ${code}`;
          const tail = isCurrent && this.stderrTail ? `: ${this.stderrTail.trim()}` : '';
          reject(new Error(`python3 exited during startup (${how})${tail}`));
        }
        if (!isCurrent) return;
        this.dead = true;
        this.failPending(this.exitMessage(signal));
      });
    });
    // Keep an unobserved startup failure from becoming an unhandled rejection.
    this.ready.catch(() => {});
    return this.ready;
  }

  private exitMessage(signal: NodeJS.Signals | null): string {
    if (this.exitNote) return this.exitNote;
    if (signal === 'SIGXCPU') {
      return `the session used up its CPU time limit (${this.options.sessionCpuLimitS} s); the interpreter was restarted and variables defined earlier are lost`;
    }
    return `the Python interpreter stopped unexpectedly (${signal ? `signal ${signal}` : 'exited'}); variables defined earlier are lost`;
  }

  private settle(msg: Record<string, unknown>): void {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    clearTimeout(p.timer);
    if (msg.ok === true) {
      const res = msg.res;
      p.resolve({
        success: true,
        stdout: truncated(String(msg.out ?? ''), Number(msg.out_dropped ?? 0)),
        stderr: truncated(String(msg.err ?? ''), Number(msg.err_dropped ?? 0)),
        error_message: null,
        result: typeof res === 'string' ? truncated(res, Number(msg.res_dropped ?? 0)) : null,
      });
    } else {
      p.resolve({ success: false, stdout: '', stderr: '', error_message: String(msg.error ?? ''), result: null });
    }
  }

  private failPending(message: string): void {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    clearTimeout(p.timer);
    p.resolve({ success: false, stdout: '', stderr: '', error_message: message, result: null });
  }

  /** SIGKILL to the whole process group; the exit handler then fails any pending call. */
  private kill(note: string): void {
    if (!this.exitNote) this.exitNote = note;
    this.dead = true;
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      try {
        this.child?.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  /** Runs `code`; never rejects: every failure becomes an unsuccessful outcome. */
  exec(code: string): Promise<ExecOutcome> {
    this.busy += 1;
    const run = async (): Promise<ExecOutcome> => {
      try {
        if (this.closed) {
          return { success: false, stdout: '', stderr: '', error_message: 'the session was closed', result: null };
        }
        if (this.dead || !this.ready) {
          try {
            await this.start();
          } catch (err) {
            const message = this.closed ? 'the session was closed' : `cannot start the Python interpreter: ${(err as Error).message}`;
            return { success: false, stdout: '', stderr: '', error_message: message, result: null };
          }
        } else {
          try {
            await this.ready;
          } catch (err) {
            const message = this.closed ? 'the session was closed' : `cannot start the Python interpreter: ${(err as Error).message}`;
            return { success: false, stdout: '', stderr: '', error_message: message, result: null };
          }
        }
        if (this.dead) return { success: false, stdout: '', stderr: '', error_message: this.exitMessage(null), result: null };
        return await new Promise<ExecOutcome>((resolve) => {
          const limitMs = (this.options.timeoutS + this.options.killGraceS) * 1000;
          const note = `code timed-out (no result after ${this.options.timeoutS} s; the interpreter was stopped and restarts on the next call, so variables defined earlier are lost)`;
          const timer = setTimeout(() => {
            this.kill(note);
            // The exit event settles the call; should it never come, settle it anyway.
            setTimeout(() => {
              if (this.pending === pending) this.failPending(note);
            }, 5000).unref();
          }, limitMs);
          const pending: Pending = { resolve, timer };
          this.pending = pending;
          const line = JSON.stringify({ cmd: 'exec', id: this.nextId++, code }) + '\n';
          (this.child!.stdio[3] as Writable).write(line);
        });
      } finally {
        this.busy -= 1;
        this.lastUsed = Date.now();
      }
    };
    const result = this.queue.then(run, run);
    this.queue = result;
    return result;
  }

  /** Kills the current process (if any) and removes its scratch folder in the background. */
  private dispose(): Promise<void> {
    if (this.child && !this.dead) this.kill('the session was closed');
    this.child = null;
    if (!this.workdir) return Promise.resolve();
    const dir = this.workdir;
    this.workdir = null;
    return rm(dir, { recursive: true, force: true, maxRetries: 2 }).catch((err: Error) => {
      this.onNote(`could not remove ${dir}: ${err.message}`);
    });
  }

  /** Kills the interpreter and removes its scratch folder. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const child = this.child;
    const exited =
      child && child.exitCode === null && child.signalCode === null
        ? new Promise<void>((resolve) => child.once('exit', () => resolve()))
        : Promise.resolve();
    this.failPending('the session was closed');
    const removed = this.dispose();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 2000).unref())]);
    await removed;
  }
}

// ---------------------------------------------------------------------------------------------
// Probing what the OS allows

function run(cmd: string, args: string[], timeoutMs = 10_000): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // Trusted commands only (interpreter lookup, namespace probes): the server's own environment is fine.
    execFile(cmd, args, { timeout: timeoutMs }, (err, stdout, stderr) => {
      resolve({ ok: !err, stdout: String(stdout), stderr: String(stderr || (err ? err.message : '')) });
    });
  });
}

export interface ProbeResult {
  python: string;
  wrapper: string[];
  notes: string[];
}

/** Resolves the interpreter to an absolute path (also skipping shims such as pyenv's) and finds a
 * way to give it a network namespace of its own: `unshare -n` (root), else `unshare -r -n`
 * (unprivileged user namespace), else none (the seccomp filter still refuses sockets). */
export async function probeSandbox(pythonExecutable: string, isolateNetwork: boolean): Promise<ProbeResult> {
  const notes: string[] = [];
  const py = await run(pythonExecutable, ['-c', 'import sys; print(sys.executable)']);
  const python = py.stdout.trim();
  if (!py.ok || !python) {
    throw new Error(
      `cannot run the Python interpreter \`${pythonExecutable}\` (${py.stderr.trim() || 'no output'}). ` +
        'Install python3 (e.g. `apt-get install python3`) or set `python_executable` in the server config.',
    );
  }
  let wrapper: string[] = [];
  if (isolateNetwork) {
    for (const candidate of [['unshare', '-n'], ['unshare', '-r', '-n']]) {
      const r = await run(candidate[0]!, [...candidate.slice(1), python, '-c', 'pass']);
      if (r.ok) {
        wrapper = candidate;
        break;
      }
    }
    if (wrapper.length === 0) {
      notes.push(
        'network namespaces are not available here (`unshare -n` and `unshare -r -n` both failed); ' +
          'model code runs without its own network namespace, the seccomp filter still refuses non-UNIX sockets',
      );
    }
  } else {
    notes.push('network isolation is disabled by config (isolate_network: false)');
  }
  return { python, wrapper, notes };
}
