// Running a container engine's command line on this machine: output merged and capped, a hard
// deadline after which the whole process group is killed, and an optional abort signal.
import { spawn, type ChildProcess } from 'node:child_process';

export interface HostResult {
  /** Exit code; null when killed. */
  code: number | null;
  output: string;
  /** Killed at the deadline. */
  timedOut: boolean;
  /** Killed because the signal aborted. */
  aborted: boolean;
  truncated: boolean;
  /** Could not be started at all (e.g. ENOENT). */
  spawnError?: string;
}

export interface HostOptions {
  timeoutMs: number;
  maxOutputBytes?: number;
  env?: Record<string, string>;
  signal?: AbortSignal;
}

/** Environment of the engine CLIs: PATH, HOME and the engines' own variables (never the server's
 * secrets). */
export function engineEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
  for (const k of ['HOME', 'XDG_RUNTIME_DIR', 'CONTAINER_HOST', 'DOCKER_HOST', 'APPTAINER_CACHEDIR', 'APPTAINER_TMPDIR', 'SINGULARITY_CACHEDIR', 'SINGULARITY_TMPDIR']) {
    const v = process.env[k];
    if (v) env[k] = v;
  }
  return env;
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/** Runs `argv` in its own process group and resolves (never rejects) when it has ended. */
export function runHost(argv: string[], opts: HostOptions): Promise<HostResult> {
  const cap = opts.maxOutputBytes ?? 8 * 1024 * 1024;
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(argv[0]!, argv.slice(1), { env: opts.env ?? engineEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    } catch (err) {
      resolve({ code: null, output: '', timedOut: false, aborted: false, truncated: false, spawnError: (err as Error).message });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let timedOut = false;
    let aborted = false;
    const take = (b: Buffer) => {
      if (size >= cap) {
        truncated = true;
        return;
      }
      const part = size + b.length > cap ? b.subarray(0, cap - size) : b;
      if (part.length < b.length) truncated = true;
      chunks.push(part);
      size += part.length;
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, opts.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup(child);
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();
    let spawnError: string | undefined;
    child.once('error', (err) => {
      spawnError = err.message;
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      // Anything the CLI left in its group goes too.
      killGroup(child);
      resolve({ code, output: Buffer.concat(chunks).toString('utf8'), timedOut, aborted, truncated, ...(spawnError ? { spawnError } : {}) });
    });
  });
}

/** Starts `argv` in its own process group and keeps it running (stdin a pipe held open by this
 * process: the program sees end-of-file when this server dies). Output is collected (capped) for
 * error messages. */
export function startHost(argv: string[], env: Record<string, string> = engineEnv()): { child: ChildProcess; output: () => string; exited: Promise<number | null>; kill: () => void } {
  const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let out = '';
  const take = (b: Buffer) => {
    if (out.length < 64 * 1024) out += b.toString('utf8');
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  child.stdin!.on('error', () => {});
  const exited = new Promise<number | null>((resolve) => {
    child.once('error', (err) => {
      out += `\n${err.message}`;
      resolve(null);
    });
    child.once('close', (code) => resolve(code));
  });
  return { child, output: () => out, exited, kill: () => killGroup(child) };
}

/** Whether an `exec ... timeout N bash -lc` ended at its limit: `timeout` exits 124 (or 137
 * after its KILL) when the limit struck; the host-side deadline is the last resort. */
function struckTimeout(r: HostResult, timeoutS: number, startedAt: number): boolean {
  const elapsedS = (Date.now() - startedAt) / 1000;
  return r.timedOut || ((r.code === 124 || r.code === 137) && elapsedS >= timeoutS * 0.98);
}

/**
 * One command of an episode environment (`<engine> exec ... timeout N bash -lc ...`): its controller
 * is in `running` while it runs, so closing the environment stops it. The host-side deadline, 30 s
 * past the command's own `timeout`, only matters when `timeout` inside could not act (a frozen
 * container). `struck`: the command ended at its time limit.
 */
export async function runEnvCommand(running: Set<AbortController>, argv: string[], timeoutS: number, maxOutputBytes: number): Promise<HostResult & { struck: boolean }> {
  const ac = new AbortController();
  running.add(ac);
  const t0 = Date.now();
  try {
    const r = await runHost(argv, { timeoutMs: (timeoutS + 30) * 1000, signal: ac.signal, maxOutputBytes });
    return { ...r, struck: struckTimeout(r, timeoutS, t0) };
  } finally {
    running.delete(ac);
  }
}
