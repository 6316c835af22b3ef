// One-shot runs: fresh work folder, stdin in, capped stdout/stderr out, everything killed at the
// wall-clock limit, the work folder removed.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, resolve, sep } from 'node:path';
import type { Writable, Readable } from 'node:stream';
import { sandboxEnv } from './env.js';
import { SandboxError } from './errors.js';
import { Launched } from './launch.js';
import type { LaunchSpec, ProviderSetup } from './providers.js';
import type { Limits, RunRequest, RunResult } from './types.js';

/** `rel` as a path inside `root`, or an error for absolute paths and `..` escapes. */
export function insideWorkdir(root: string, rel: string): string {
  const n = normalize(rel);
  if (isAbsolute(n) || n === '..' || n.startsWith(`..${sep}`)) {
    throw new SandboxError(`path '${rel}' must be relative to the work folder and stay inside it`);
  }
  return join(root, n);
}

export async function writeFiles(workdir: string, files: Record<string, string | Buffer> | undefined): Promise<void> {
  for (const [name, content] of Object.entries(files ?? {})) {
    const path = insideWorkdir(workdir, name);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content);
  }
}

class Capped {
  private chunks: Buffer[] = [];
  private size = 0;
  over = false;
  constructor(private readonly limit: number) {}
  add(chunk: Buffer): boolean {
    if (this.over) return false;
    const room = this.limit - this.size;
    if (chunk.length > room) {
      if (room > 0) this.chunks.push(chunk.subarray(0, room));
      this.size = this.limit;
      this.over = true;
      return false;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    return true;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** `cwd` is where a relative script path is looked up. */
export function resolveArgv(setup: ProviderSetup, argv: string[], cwd: string): Pick<LaunchSpec, 'mode' | 'target' | 'args'> {
  if (argv.length === 0) throw new SandboxError('run: argv is empty');
  if (argv[0] === 'python' || argv[0] === 'python3') {
    const rest = argv.slice(1);
    // `python script.py ...` runs in the launcher's interpreter (one start-up instead of two).
    if (rest.length > 0 && !rest[0]!.startsWith('-')) return { mode: 'python', target: resolve(cwd, rest[0]!), args: rest.slice(1) };
    const python = setup.name === 'container' ? setup.container!.python : setup.python;
    if (!isAbsolute(python)) throw new SandboxError(`the container interpreter must be an absolute path to run \`${argv.join(' ')}\` (container.python is '${python}')`);
    return { mode: 'exec', target: python, args: rest };
  }
  if (!isAbsolute(argv[0]!)) throw new SandboxError(`run: argv[0] must be an absolute path or 'python', got '${argv[0]}'`);
  return { mode: 'exec', target: argv[0]!, args: argv.slice(1) };
}

export async function runOnce(
  setup: ProviderSetup,
  workdir: string,
  name: string,
  req: RunRequest,
  limits: Limits,
  queueMs: number,
  readablePaths: string[],
): Promise<RunResult> {
  const t0 = performance.now();
  await mkdir(workdir, { recursive: true, mode: 0o700 });
  try {
    await writeFiles(workdir, req.files);
    const cwd = req.cwd ? insideWorkdir(workdir, req.cwd) : workdir;
    await mkdir(cwd, { recursive: true });
    const spec: LaunchSpec = {
      ...resolveArgv(setup, req.argv, cwd),
      workdir,
      cwd,
      limits,
      env: sandboxEnv(workdir, req.env),
      readablePaths: [...readablePaths, ...(req.readablePaths ?? [])],
      extraFds: false,
      name,
    };
    const proc = new Launched(setup, spec, ['pipe', 'pipe', 'pipe']);
    const out = new Capped(limits.outputBytes);
    const err = new Capped(limits.outputBytes);
    let timedOut = false;
    let truncated = false;
    const stdout = proc.child.stdout as Readable;
    const stderr = proc.child.stderr as Readable;
    const onData = (cap: Capped) => (chunk: Buffer) => {
      if (!cap.add(chunk) && !truncated) {
        truncated = true;
        proc.kill();
      }
    };
    stdout.on('data', onData(out));
    stderr.on('data', onData(err));
    const stdin = proc.child.stdin as Writable;
    stdin.on('error', () => {}); // the program may exit without reading its input
    stdin.end(req.stdin ?? '');
    const timer = setTimeout(() => {
      timedOut = true;
      proc.kill();
    }, limits.wallMs);
    const closed = new Promise<void>((resolve) => proc.child.once('close', () => resolve()));
    const { code, signal } = await proc.exited;
    clearTimeout(timer);
    // The streams close once every process holding them is gone (the group was just killed);
    // should something still hold them, stop reading after a second.
    let t: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise<void>((r) => (t = setTimeout(r, 1000)))]);
    clearTimeout(t);
    stdout.destroy();
    stderr.destroy();
    const errText = err.text();
    const outOfMemory =
      /\bMemoryError\b/.test(errText.slice(-2000)) ||
      (setup.name === 'container' && code === 137 && !timedOut && !truncated);
    const runMs = performance.now() - t0;
    return {
      exitCode: code,
      signal,
      stdout: out.text(),
      stderr: errText,
      timedOut,
      outOfMemory,
      truncated,
      durations: { queueMs, runMs, totalMs: queueMs + runMs },
      provider: setup.name,
    };
  } finally {
    await rm(workdir, { recursive: true, force: true, maxRetries: 2 }).catch(() => {});
  }
}
