// How each provider turns "run this inside the sandbox" into a host command line. Pure functions
// of their inputs (unit-tested without running anything); probing what works lives in probe.ts.
import { dirname } from 'node:path';
import type { Limits, ProviderName } from './types.js';

export interface LaunchSpec {
  /** `exec`: confine, then replace the launcher with `target`; `python`: run the script
   * `target` in the launcher's own interpreter. */
  mode: 'exec' | 'python' | 'check';
  target: string;
  args: string[];
  /** Host folder used as the work folder (same path inside the sandbox). */
  workdir: string;
  /** Working folder of the program (inside workdir). */
  cwd: string;
  limits: Limits;
  env: Record<string, string>;
  /** The script applies the confinement itself (ng_sandbox_confine.apply()). */
  defer?: boolean;
  readablePaths: string[];
  /** Extra descriptors 3 and 4 are passed (sessions). */
  extraFds: boolean;
  /** Unique name (containers are named after it). */
  name: string;
  /** Landlock / seccomp switches (both default on). */
  landlock?: boolean;
  seccomp?: boolean;
}

export interface HostCommand {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

export interface ContainerSettings {
  engine: string;
  image: string;
  /** Interpreter inside the image. */
  python: string;
  /** OCI runtime passed as `--runtime` (e.g. runc where crun cannot run). */
  runtime?: string;
  extraArgs: string[];
}

export interface ProviderSetup {
  name: ProviderName;
  /** Host interpreter (local, bwrap). */
  python: string;
  confineScript: string;
  /** local: command prefix giving the process its own network namespace (e.g. unshare -n). */
  netWrapper: string[];
  /** bwrap: host folders of the interpreter to bind read-only (prefixes and sys.path). */
  pythonPaths: string[];
  container?: ContainerSettings;
}

function confineSettings(setup: ProviderSetup, spec: LaunchSpec, parentPid: number | null): string {
  const l = spec.limits;
  return JSON.stringify({
    workdir: spec.cwd,
    memory_bytes: l.memoryBytes || null,
    cpu_s: l.cpuMs > 0 ? Math.ceil(l.cpuMs / 1000) : null,
    file_bytes: l.fileBytes,
    open_files: l.openFiles,
    processes: l.processes,
    network: l.network,
    // Landlock: the launcher's and the script's folders stay readable after the layers apply.
    readable_paths: [...neededPaths(setup, spec), spec.workdir],
    parent_pid: parentPid,
    defer: Boolean(spec.defer),
    landlock: spec.landlock ?? true,
    seccomp: spec.seccomp ?? true,
  });
}

function innerArgv(python: string, setup: ProviderSetup, spec: LaunchSpec, parentPid: number | null): string[] {
  return [python, '-B', setup.confineScript, confineSettings(setup, spec, parentPid), spec.mode, spec.target, ...spec.args];
}

/** Folders a launch needs to read besides the system: the launcher, the script, extras. */
function neededPaths(setup: ProviderSetup, spec: LaunchSpec): string[] {
  const paths = [dirname(setup.confineScript), ...spec.readablePaths];
  // A script inside the work folder is reachable already.
  if (spec.mode === 'python' && !spec.target.startsWith(`${spec.workdir}/`)) paths.push(dirname(spec.target));
  return [...new Set(paths)];
}

export function localCommand(setup: ProviderSetup, spec: LaunchSpec, parentPid: number): HostCommand {
  const argv = [...(spec.limits.network ? [] : setup.netWrapper), ...innerArgv(setup.python, setup, spec, parentPid)];
  return { argv, cwd: spec.cwd, env: spec.env };
}

/** System folders bound read-only into a bubblewrap sandbox; symlinked ones (usrmerge) are
 * recreated as symlinks. */
export const BWRAP_SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib64', '/lib32'];
export const BWRAP_ETC = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/localtime', '/etc/passwd', '/etc/group', '/etc/nsswitch.conf', '/etc/mime.types', '/etc/alternatives'];

export function bwrapCommand(
  setup: ProviderSetup,
  spec: LaunchSpec,
  fsInfo: { exists: (p: string) => boolean; symlinkTarget: (p: string) => string | null },
): HostCommand {
  const a: string[] = ['bwrap', '--die-with-parent', '--new-session', '--unshare-user-try', '--unshare-ipc', '--unshare-pid', '--unshare-uts', '--unshare-cgroup-try'];
  if (!spec.limits.network) a.push('--unshare-net');
  a.push('--hostname', 'sandbox', '--cap-drop', 'ALL');
  for (const p of BWRAP_SYSTEM) {
    if (!fsInfo.exists(p)) continue;
    const target = fsInfo.symlinkTarget(p);
    if (target !== null) a.push('--symlink', target, p);
    else a.push('--ro-bind', p, p);
  }
  for (const p of BWRAP_ETC) if (fsInfo.exists(p)) a.push('--ro-bind', p, p);
  a.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  const covered = (p: string) => BWRAP_SYSTEM.some((s) => p === s || p.startsWith(`${s}/`));
  for (const p of [...new Set([...setup.pythonPaths, ...neededPaths(setup, spec)])]) {
    if (covered(p) || !fsInfo.exists(p)) continue;
    a.push('--ro-bind', p, p);
  }
  // The work folder comes last so that it wins over a read-only parent bound above.
  a.push('--bind', spec.workdir, spec.workdir, '--chdir', spec.cwd);
  // The pid namespace's init is bubblewrap, not this server: no parent-pid check inside.
  a.push('--', ...innerArgv(setup.python, setup, spec, null));
  return { argv: a, cwd: spec.workdir, env: spec.env };
}

export function containerCommand(setup: ProviderSetup, spec: LaunchSpec, ownerPid: number): HostCommand {
  const c = setup.container!;
  const l = spec.limits;
  const a: string[] = [c.engine];
  if (c.runtime) a.push('--runtime', c.runtime);
  a.push('run', '--rm', '-i', '--name', spec.name, '--label', `ng-sandbox-owner=${ownerPid}`);
  a.push('--network', l.network ? 'slirp4netns' : 'none', '--read-only', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges');
  if (l.memoryBytes > 0) a.push('--memory', `${l.memoryBytes}b`, '--memory-swap', `${l.memoryBytes}b`);
  // The launcher itself counts, and the runtime needs a little headroom to start it.
  a.push('--pids-limit', String(Math.max(l.processes, 1) + 8));
  a.push('--tmpfs', '/tmp:rw,size=64m');
  a.push('-v', `${spec.workdir}:${spec.workdir}:rw`);
  for (const p of neededPaths(setup, spec)) a.push('-v', `${p}:${p}:ro`);
  a.push('-w', spec.cwd);
  for (const [k, v] of Object.entries(spec.env)) a.push('--env', `${k}=${v}`);
  if (spec.extraFds) a.push('--preserve-fds', '2');
  a.push(...c.extraArgs, c.image, ...innerArgv(c.python, setup, spec, null));
  // The engine CLI runs with PATH, HOME and XDG_RUNTIME_DIR only (never the server's secrets).
  return { argv: a, cwd: spec.workdir, env: engineEnv() };
}

export function engineEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
  for (const k of ['HOME', 'XDG_RUNTIME_DIR', 'CONTAINER_HOST', 'DOCKER_HOST']) {
    const v = process.env[k];
    if (v) env[k] = v;
  }
  return env;
}
