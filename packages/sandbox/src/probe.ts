// What can run here: the interpreter, network namespaces, bubblewrap, a container engine.
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SandboxError } from './errors.js';
import { bwrapCommand, containerCommand, engineEnv, type ContainerSettings, type LaunchSpec, type ProviderSetup } from './providers.js';
import { DEFAULT_LIMITS, type ProviderInfo, type ProviderName } from './types.js';

export interface Probed {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** Runs a trusted command (probes only) with a timeout and the allow-listed engine environment. */
export function runTrusted(cmd: string, args: string[], timeoutMs = 20_000): Promise<Probed> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs, env: engineEnv(), killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      resolve({ ok: !err, stdout: String(stdout), stderr: String(stderr || (err ? err.message : '')) });
    });
  });
}

/** Absolute path of python/confine.py, from source (src/) or from the build (dist/src/). */
export function confineScriptPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const p = join(dir, 'python', 'confine.py');
    if (existsSync(p)) return p;
    dir = dirname(dir);
  }
  throw new SandboxError(`cannot find python/confine.py above ${fileURLToPath(import.meta.url)}; the @nemo-gym/sandbox package is incomplete`);
}

export const hostFs = {
  exists: (p: string) => existsSync(p),
  symlinkTarget: (p: string): string | null => {
    try {
      return lstatSync(p).isSymbolicLink() ? readlinkSync(p) : null;
    } catch {
      return null;
    }
  },
};

export interface PythonFacts {
  python: string;
  version: string;
  /** Folders the interpreter reads: prefixes and absolute sys.path entries. */
  paths: string[];
}

/** Resolves `python3` (or a configured name) to its real executable, skipping shims. */
export async function probePython(executable: string, configKey = 'python'): Promise<PythonFacts> {
  const code = 'import sys, json, os; print(json.dumps([os.path.realpath(sys.executable), sys.version.split()[0], [sys.prefix, sys.base_prefix, sys.exec_prefix] + [p for p in sys.path if os.path.isabs(p)]]))';
  const r = await runTrusted(executable, ['-c', code]);
  if (!r.ok) {
    throw new SandboxError(
      `cannot run the Python interpreter \`${executable}\` (${r.stderr.trim() || 'no output'}). ` +
        `Install python3 (e.g. \`apt-get install python3\`) or set \`${configKey}\` in the server config.`,
    );
  }
  const [python, version, paths] = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as [string, string, string[]];
  const real = paths.filter((p) => existsSync(p));
  return { python, version, paths: [...new Set([...real, dirname(python)])] };
}

async function findNetWrapper(python: string): Promise<string[] | null> {
  for (const candidate of [['unshare', '-n'], ['unshare', '-r', '-n']]) {
    const r = await runTrusted(candidate[0]!, [...candidate.slice(1), python, '-c', 'pass'], 10_000);
    if (r.ok) return candidate;
  }
  return null;
}

function probeSpec(name: string, workdir: string): LaunchSpec {
  return {
    mode: 'check',
    target: '-',
    args: [],
    workdir,
    cwd: workdir,
    limits: { ...DEFAULT_LIMITS, memoryBytes: 256 * 1024 ** 2 },
    env: { PATH: '/usr/bin:/bin' },
    readablePaths: [],
    extraFds: false,
    name,
  };
}

export interface ProbeOptions {
  python: string;
  provider: 'auto' | ProviderName;
  container?: Partial<ContainerSettings>;
  isolateNetwork?: boolean;
  /** Config key named in the error when the interpreter does not run. */
  pythonConfigKey?: string;
}

export interface ProbeOutcome {
  setup: ProviderSetup;
  info: ProviderInfo;
  /** Why stronger providers were not picked (auto), for the log. */
  skipped: string[];
}

async function tryBwrap(setup: ProviderSetup): Promise<string | null> {
  // The launcher's check mode proves namespaces, binds and the interpreter.
  const dir = mkdtempSync(join(tmpdir(), 'ng-sandbox-probe-'));
  const cmd = bwrapCommand(setup, probeSpec('probe', dir), hostFs);
  const r = await runTrusted(cmd.argv[0]!, cmd.argv.slice(1), 20_000).finally(() => rmSync(dir, { recursive: true, force: true }));
  return r.ok ? null : `bubblewrap cannot start a sandbox here: ${r.stderr.trim().split('\n').at(-1) ?? 'unknown error'}`;
}

async function tryContainer(setup: ProviderSetup): Promise<string | null> {
  const c = setup.container!;
  if (!c.image) return 'no container image configured (container.image)';
  const ver = await runTrusted(c.engine, ['--version'], 10_000);
  if (!ver.ok) return `${c.engine} is not installed (${ver.stderr.trim().split('\n')[0]})`;
  const dir = mkdtempSync(join(tmpdir(), 'ng-sandbox-probe-'));
  const cmd = containerCommand(setup, probeSpec(`ng-sandbox-probe-${process.pid}-${Date.now()}`, dir), process.pid);
  const r = await runTrusted(cmd.argv[0]!, cmd.argv.slice(1), 60_000).finally(() => rmSync(dir, { recursive: true, force: true }));
  return r.ok ? null : `${c.engine} cannot run ${c.image} here: ${r.stderr.trim().split('\n').at(-1) ?? 'unknown error'}`;
}

function guarantees(name: ProviderName, netWrapper: string[] | null, isolate: boolean): { guarantees: string[]; missing: string[] } {
  const common = [
    'environment cleared (allow-list only)',
    'wall-clock limit: the whole process tree is killed',
    'RLIMIT_AS / RLIMIT_CPU / RLIMIT_FSIZE / RLIMIT_NOFILE',
    'seccomp: no new processes (unless allowed), no sockets, no ptrace, signals only to itself',
    'Landlock: reads system and interpreter folders only, writes its work folder only (kernel 5.13+)',
    'stdout/stderr capped',
  ];
  if (name === 'local') {
    return {
      guarantees: [...common, netWrapper ? `own network namespace (${netWrapper.join(' ')})` : 'no network namespace'],
      missing: netWrapper
        ? []
        : [
            isolate
              ? 'network namespace: `unshare -n` and `unshare -r -n` both failed (seccomp still refuses sockets)'
              : 'network namespace disabled by config (seccomp still refuses sockets)',
          ],
    };
  }
  if (name === 'bwrap') {
    return {
      guarantees: [...common, 'bubblewrap: read-only system, private /tmp, own pid/net/ipc/uts namespaces, dies with the server, all capabilities dropped'],
      missing: [],
    };
  }
  return {
    guarantees: [...common, 'container: own root file system (read-only), --network none, cgroup memory and pids limits, all capabilities dropped'],
    missing: [],
  };
}

/** Picks the provider: the one asked for (an error if it cannot run here), or for `auto` the
 * strongest that runs: container (when an image is configured) > bwrap > local. */
export async function probeProvider(options: ProbeOptions): Promise<ProbeOutcome> {
  const py = await probePython(options.python, options.pythonConfigKey);
  const netWrapper = options.isolateNetwork === false ? null : await findNetWrapper(py.python);
  const base: ProviderSetup = {
    name: 'local',
    python: py.python,
    confineScript: confineScriptPath(),
    netWrapper: netWrapper ?? [],
    pythonPaths: py.paths,
  };
  const container: ContainerSettings = {
    engine: options.container?.engine ?? 'podman',
    image: options.container?.image ?? '',
    python: options.container?.python ?? 'python3',
    runtime: options.container?.runtime,
    extraArgs: options.container?.extraArgs ?? [],
  };
  const order: ProviderName[] = options.provider === 'auto' ? ['container', 'bwrap', 'local'] : [options.provider];
  const skipped: string[] = [];
  for (const name of order) {
    const setup: ProviderSetup = { ...base, name, container: name === 'container' ? container : undefined };
    let why: string | null = null;
    if (name === 'bwrap') why = await tryBwrap(setup);
    else if (name === 'container') why = await tryContainer(setup);
    if (why) {
      if (options.provider !== 'auto') throw new SandboxError(`sandbox provider '${name}' cannot run here: ${why}`);
      skipped.push(`${name}: ${why}`);
      continue;
    }
    const g = guarantees(name, netWrapper, options.isolateNetwork !== false);
    return {
      setup,
      info: { name, python: name === 'container' ? container.python : py.python, guarantees: g.guarantees, missing: g.missing },
      skipped,
    };
  }
  throw new SandboxError(`no sandbox provider can run here: ${skipped.join('; ')}`);
}
