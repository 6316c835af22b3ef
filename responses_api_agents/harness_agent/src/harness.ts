// One harness rollout in @nemo-gym/sandbox: a fresh work folder (repository + private home),
// the repository committed as the baseline, the harness run against the model URL with a
// per-rollout dummy key, then the work folder's diff — every step inside the sandbox, so nothing
// the harness leaves behind (git hooks, config, symlinks) ever runs on the host.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sandbox, SandboxSession } from '@nemo-gym/sandbox';
import { startModelProxy, type ModelProxy } from './bridge.js';
import { HarnessError } from './errors.js';
import type { HarnessTranscript, Preset } from './presets.js';
import { checkRelativePath, resolveSource, type Workspace } from './workspace.js';

export { HarnessError };

const HERE = dirname(fileURLToPath(import.meta.url));
/** The runner script (python/ next to src/ and dist/). */
export const RUNNER = join(HERE, HERE.endsWith('dist/src') ? '../..' : '..', 'python', 'harness_runner.py');

const STANDARD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** How the harness reaches the model. `model_only`: its own network namespace whose one way
 * out is a Unix socket to the model server (bubblewrap, container); `host`: the host's network
 * (the local provider: weaker, see README). */
export type NetworkMode = 'model_only' | 'host';

export interface HarnessRunOptions {
  preset: Preset;
  program: string;
  /** Host folders the harness must read (its binary's package). */
  readablePaths: string[];
  model: string;
  extraArgs: string[];
  /** Variables added to the harness's environment (after the preset's). */
  env: Record<string, string>;
  timeoutS: number;
  setupTimeoutS: number;
  maxOutputBytes: number;
  memoryBytes: number;
  network: NetworkMode;
  /** Where relative `workspace.dir` / `workspace.tarball` paths are read from. */
  repoRoot: string;
}

export interface HarnessRun {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  truncated: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
  /** `git diff --binary` of the repository against the baseline (empty when unchanged). */
  patch: string;
  transcript: HarnessTranscript;
  /** HTTP requests the harness made to the model. */
  modelCalls: number;
}

const GIT = ['git', '-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'safe.directory=*', '-c', 'user.name=ng', '-c', 'user.email=ng@localhost', '-c', 'commit.gpgsign=false'];
const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' };

interface ExecReply {
  returncode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timed_out: boolean;
  truncated: boolean;
  duration_ms: number;
}

async function exec(session: SandboxSession, req: Record<string, unknown>, timeoutS: number, what: string): Promise<ExecReply> {
  const r = await session.request({ op: 'exec', timeout_s: timeoutS, ...req }, (timeoutS + 30) * 1000);
  if (!r.ok) {
    const tail = r.stderrTail.trim();
    throw new HarnessError(`the harness sandbox stopped during ${what} (${r.reason}${r.signal ? `, ${r.signal}` : ''})${tail ? `: ${tail.slice(-500)}` : ''}`);
  }
  const reply = r.reply;
  if (typeof reply.error === 'string') throw new HarnessError(`${what} could not start in the sandbox: ${reply.error}`);
  return reply as unknown as ExecReply;
}

function tail(text: string, n = 2000): string {
  return text.length > n ? `…${text.slice(-n)}` : text;
}

async function setupRepository(session: SandboxSession, workdir: string, workspace: Workspace, opts: HarnessRunOptions): Promise<string> {
  const staged = join(workdir, 'staged');
  await mkdir(staged, { recursive: true });
  for (const [path, text] of Object.entries(workspace.files)) {
    const p = join(staged, checkRelativePath(path, 'workspace.files'));
    await mkdir(dirname(p), { recursive: true });
    await writeFile(p, text);
  }
  const script = [
    'set -e',
    'mkdir -p repo',
    'if [ -n "$NG_DIR" ]; then cp -a "$NG_DIR"/. repo/; fi',
    'if [ -n "$NG_TAR" ]; then tar -xf "$NG_TAR" -C repo; fi',
    'cp -a staged/. repo/ && rm -rf staged',
    'cd repo',
    'if [ ! -d .git ]; then "$@" init -q; fi',
    '"$@" add -A',
    '"$@" commit -q --allow-empty --no-verify -m "ng: baseline"',
    '"$@" rev-parse HEAD',
  ].join('\n');
  const env: Record<string, string> = { ...GIT_ENV, NG_DIR: workspace.dir ? resolveSource(workspace.dir, opts.repoRoot) : '', NG_TAR: workspace.tarball ? resolveSource(workspace.tarball, opts.repoRoot) : '' };
  const r = await exec(session, { argv: ['bash', '-c', script, 'setup', ...GIT], cwd: workdir, env, max_output_bytes: 1 << 20 }, opts.setupTimeoutS, 'the work folder set-up');
  if (r.returncode !== 0) throw new HarnessError(`the work folder could not be prepared (exit ${r.returncode ?? r.signal ?? 'timeout'}): ${tail(r.stderr, 1000)}`);
  return r.stdout.trim().split('\n').pop() ?? '';
}

export interface RolloutRequest {
  workspace: Workspace;
  instruction: string;
  /** The model base URL the harness is given when it shares the host's network (`…/v1`). */
  baseUrl: string;
  apiKey: string;
}

/** Runs one rollout's harness; the work folder is removed whatever happens. */
export async function runHarness(sandbox: Sandbox, opts: HarnessRunOptions, req: RolloutRequest, signal?: AbortSignal): Promise<HarnessRun> {
  signal?.throwIfAborted();
  const session = await sandbox.openSession({
    argv: ['python', RUNNER],
    limits: { processes: 4096, memoryBytes: opts.memoryBytes, openFiles: 4096, fileBytes: 1024 ** 3, outputBytes: opts.maxOutputBytes, network: opts.network === 'host' },
    readablePaths: [...opts.readablePaths, ...(req.workspace.dir ? [resolveSource(req.workspace.dir, opts.repoRoot)] : []), ...(req.workspace.tarball ? [dirname(resolveSource(req.workspace.tarball, opts.repoRoot))] : [])],
    // A harness starts processes, signals them and talks to the model: no seccomp layer. In its
    // own network namespace Landlock's TCP rule would also refuse the loopback bridge; there the
    // file system boundary is bubblewrap's mount namespace.
    seccomp: false,
    landlock: opts.network === 'host',
    startupTimeoutMs: 60_000,
  });
  let proxy: ModelProxy | null = null;
  const onAbort = () => void session.close();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const hello = await session.hello.catch((err: unknown) => {
      throw new HarnessError(`the harness sandbox did not start: ${(err as Error).message}`);
    });
    const workdir = typeof hello.cwd === 'string' ? hello.cwd : session.workdir;
    const repoDir = join(workdir, 'repo');
    const homeDir = join(workdir, 'home');
    const base = await setupRepository(session, workdir, req.workspace, opts);
    signal?.throwIfAborted();

    // Every model call goes through the agent's proxy (the preset's request shim applies there).
    const target = new URL(req.baseUrl);
    const socketPath = opts.network === 'model_only' ? join(workdir, 'model.sock') : null;
    proxy = await startModelProxy({ socketPath, target: new URL(target.origin), shim: opts.preset.shim });
    let origin = proxy.url ?? '';
    if (socketPath) {
      const r = await session.request({ op: 'bridge', port: 0, socket: socketPath }, 30_000);
      if (!r.ok || typeof r.reply.port !== 'number') throw new HarnessError(`the model bridge did not start in the sandbox: ${r.ok ? String(r.reply.error) : r.reason}`);
      origin = `http://127.0.0.1:${r.reply.port}`;
    }
    const baseUrl = `${origin}${target.pathname.replace(/\/+$/, '')}`;

    const launch = opts.preset.launch({ instruction: req.instruction, repoDir, homeDir, baseUrl, apiKey: req.apiKey, model: opts.model, program: opts.program, extraArgs: opts.extraArgs });
    await mkdir(join(homeDir, 'tmp'), { recursive: true });
    for (const [path, text] of Object.entries(launch.files)) {
      const p = join(homeDir, path);
      await mkdir(dirname(p), { recursive: true });
      await writeFile(p, text, { mode: 0o600 });
    }
    const env = { HOME: homeDir, TMPDIR: join(homeDir, 'tmp'), PATH: [...launch.path, STANDARD_PATH].join(':'), ...launch.env, ...opts.env };
    const run = await exec(session, { argv: launch.argv, cwd: repoDir, env, max_output_bytes: opts.maxOutputBytes }, opts.timeoutS, 'the harness run');
    signal?.throwIfAborted();

    const diffScript = '"$@" add -A >/dev/null 2>&1; "$@" diff --cached --binary "$NG_BASE"';
    const diff = await exec(session, { argv: ['bash', '-c', diffScript, 'diff', ...GIT], cwd: repoDir, env: { ...GIT_ENV, NG_BASE: base }, max_output_bytes: opts.maxOutputBytes }, opts.setupTimeoutS, 'reading the diff');
    if (diff.returncode !== 0) throw new HarnessError(`the work folder's diff could not be read (exit ${diff.returncode ?? diff.signal ?? 'timeout'}): ${tail(diff.stderr, 1000)}`);
    if (diff.truncated) throw new HarnessError(`the work folder's diff is larger than max_output_bytes (${opts.maxOutputBytes} bytes)`);

    return {
      exitCode: run.returncode,
      signal: run.signal,
      timedOut: run.timed_out,
      truncated: run.truncated,
      durationMs: run.duration_ms,
      stdout: run.stdout,
      stderr: run.stderr,
      patch: diff.stdout,
      transcript: opts.preset.parse(run.stdout),
      modelCalls: proxy.calls(),
    };
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await proxy?.close();
    await session.close();
  }
}

/**
 * Why a finished run is a failure, or null when it produced something to verify. A harness
 * that crashed, was killed at its limit or left neither an answer nor a change is a recorded
 * failure (never reward 0).
 */
export function runFailure(run: HarnessRun, timeoutS: number, maxOutputBytes: number): string | null {
  if (run.timedOut) return `the harness timed out after ${timeoutS} s and was killed (stderr: ${tail(run.stderr, 500) || 'empty'})`;
  if (run.truncated) return `the harness wrote more than max_output_bytes (${maxOutputBytes} bytes) and was stopped`;
  if (run.exitCode !== 0) {
    const said = run.transcript.errors.length > 0 ? `${run.transcript.errors.slice(-3).join('; ')}; stderr: ` : '';
    return `the harness exited with ${run.signal ? `signal ${run.signal}` : `code ${run.exitCode}`}: ${said}${tail(run.stderr || run.stdout, 1000) || '(no output)'}`;
  }
  if (run.transcript.errors.length > 0 && !run.transcript.finalText && !run.patch) return `the harness reported errors and produced nothing: ${run.transcript.errors.slice(-3).join('; ')}`;
  if (!run.transcript.finalText && !run.patch) return 'the harness produced no answer and changed no file';
  return null;
}
