// env singularity / apptainer: the episode in one Apptainer (or SingularityCE) instance of the
// instance's `.sif` image (found from `cache_dir_template` as upstream does, or pulled from the
// instance's docker image), started with a writable tmpfs overlay so that the episode's edits and
// the evaluation share one file system; one `exec instance://…` per command; `instance stop`
// at the end. Instances are named after this server's pid: those of a dead server are stopped
// when the next one starts.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import { EnvironmentError, type CommandResult, type SweEnvironment } from './environment.js';
import { engineEnv, runEnvCommand, runHost } from './host.js';
import { findSif, ImageError } from './images.js';

export interface ApptainerSettings {
  /** `apptainer` or `singularity` (or a path to one). */
  executable: string;
  /** Upstream's `cache_dir_template`: the `.sif` path with `{instance_id}`. */
  cacheDirTemplate: string;
  pull: 'missing' | 'never';
  pullTimeoutS: number;
  startTimeoutS: number;
  workdir: string;
  /** Extra `instance start` arguments (upstream's `start_args`, e.g. `--nv`). */
  startArgs: string[];
  /** Host paths bound into the instance: `src[:dst[:ro]]`. */
  binds: string[];
  maxOutputBytes: number;
  ownerPid: number;
}

const PREFIX = 'ngswe';

/** `<exe> pull --name <sif> docker://<image>` (upstream's pull). */
export function apptainerPullArgv(s: Pick<ApptainerSettings, 'executable'>, sif: string, image: string): string[] {
  return [s.executable, 'pull', '--name', sif, `docker://${image}`];
}

/** `instance start` with upstream's isolation flags: a writable tmpfs overlay, `--containall`, no
 * home, /tmp or configured bind paths from the host. */
export function apptainerStartArgv(s: ApptainerSettings, sif: string, name: string): string[] {
  const a = [s.executable, 'instance', 'start', '--writable-tmpfs', '--containall', '--no-mount', 'home,tmp,bind-paths'];
  for (const b of s.binds) a.push('--bind', b);
  a.push(...s.startArgs, sif, name);
  return a;
}

export function apptainerExecArgv(s: ApptainerSettings, name: string, command: string, timeoutS: number, env: Record<string, string>, cwd = s.workdir): string[] {
  const a = [s.executable, 'exec', '--pwd', cwd];
  for (const [k, v] of Object.entries(env)) a.push('--env', `${k}=${v}`);
  a.push(`instance://${name}`, 'timeout', '-k', '5', `${Math.max(1, Math.ceil(timeoutS))}`, 'bash', '-lc', command);
  return a;
}

export function apptainerStopArgv(s: Pick<ApptainerSettings, 'executable'>, name: string): string[] {
  return [s.executable, 'instance', 'stop', '--force', name];
}

/** Names of this port's instances (`ngswe_<pid>_…`) in `instance list` output whose server is gone. */
export function staleInstances(listOutput: string, alive: (pid: number) => boolean): string[] {
  const out: string[] = [];
  for (const line of listOutput.split('\n')) {
    const name = line.trim().split(/\s+/)[0] ?? '';
    const m = new RegExp(`^${PREFIX}_(\\d+)_`).exec(name);
    if (m && !alive(Number(m[1]))) out.push(name);
  }
  return out;
}

/** Whether the executable runs here; the error says what to do when it does not. */
export async function checkApptainer(executable: string): Promise<void> {
  const r = await runHost([executable, '--version'], { timeoutMs: 30_000 });
  if (r.code !== 0) {
    throw new ImageError(
      `env ${executable.includes('singularity') ? 'singularity' : 'apptainer'} needs the '${executable}' program, which ${r.spawnError ? 'is not installed' : `does not run (${r.output.trim().slice(-300)})`} on this machine: install Apptainer (https://apptainer.org; Debian 12 has no package for it) or SingularityCE, or set singularity.executable to its path`,
    );
  }
}

/** Stops instances left by servers that were killed. */
export async function removeStaleInstances(executable: string): Promise<number> {
  const r = await runHost([executable, 'instance', 'list'], { timeoutMs: 30_000 });
  if (r.code !== 0) return 0;
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code !== 'ESRCH';
    }
  };
  const stale = staleInstances(r.output, alive);
  for (const name of stale) await runHost(apptainerStopArgv({ executable }, name), { timeoutMs: 60_000 });
  return stale.length;
}

let counter = 0;

export class ApptainerEnvironment implements SweEnvironment {
  private closing: Promise<void> | null = null;
  private readonly running = new Set<AbortController>();

  private constructor(
    private readonly s: ApptainerSettings,
    readonly name: string,
    private readonly env: Record<string, string>,
  ) {}

  get repoDir(): string {
    return this.s.workdir;
  }

  /** The `.sif` of the instance: found from cache_dir_template, else pulled (pull: missing). */
  static async sif(s: ApptainerSettings, instanceId: string, image: string, signal?: AbortSignal): Promise<string> {
    const { found, wanted } = findSif(s.cacheDirTemplate, instanceId);
    if (found) return found;
    if (s.pull === 'never') throw new ImageError(`no .sif image for ${instanceId} at ${wanted} (cache_dir_template: ${s.cacheDirTemplate}) and singularity.pull is 'never'; build or pull it there (${apptainerPullArgv(s, wanted, image).join(' ')})`);
    mkdirSync(dirname(wanted), { recursive: true });
    const r = await runHost(apptainerPullArgv(s, wanted, image), { timeoutMs: s.pullTimeoutS * 1000, signal, maxOutputBytes: 64 * 1024 });
    if (r.code !== 0 || !existsSync(wanted)) {
      throw new ImageError(`no .sif image for ${instanceId} at ${wanted}, and pulling docker://${image} ${r.timedOut ? `did not finish within ${s.pullTimeoutS} s` : `failed: ${(r.spawnError ?? r.output).trim().slice(-800)}`}`);
    }
    return wanted;
  }

  static async start(s: ApptainerSettings, image: string, instanceId: string, env: Record<string, string>, signal?: AbortSignal): Promise<ApptainerEnvironment> {
    const sif = await ApptainerEnvironment.sif(s, instanceId, image, signal);
    counter += 1;
    const name = `${PREFIX}_${s.ownerPid}_${counter}_${randomBytes(3).toString('hex')}`;
    const envObj = new ApptainerEnvironment(s, name, env);
    const r = await runHost(apptainerStartArgv(s, sif, name), { timeoutMs: s.startTimeoutS * 1000, signal, maxOutputBytes: 64 * 1024 });
    if (r.code !== 0) {
      await envObj.close();
      throw new EnvironmentError(`the ${s.executable} instance of ${instanceId} (${sif}) did not start${r.timedOut ? ` within ${s.startTimeoutS} s` : ''}: ${(r.spawnError ?? r.output).trim().slice(-800)}`);
    }
    return envObj;
  }

  async execute(command: string, timeoutS: number, cwd?: string): Promise<CommandResult> {
    if (this.closing) throw new EnvironmentError(`the ${this.s.executable} instance ${this.name} has been stopped`);
    const r = await runEnvCommand(this.running, apptainerExecArgv(this.s, this.name, command, timeoutS, this.env, cwd), timeoutS, this.s.maxOutputBytes);
    if (r.spawnError) throw new EnvironmentError(`cannot run '${this.s.executable} exec': ${r.spawnError}`);
    if (this.closing || r.aborted) throw new EnvironmentError(`the ${this.s.executable} instance ${this.name} was stopped while a command ran`);
    return { returncode: r.struck ? null : r.code, output: r.output, timedOut: r.struck, truncated: r.truncated };
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const ac of this.running) ac.abort();
      await runHost(apptainerStopArgv(this.s, this.name), { timeoutMs: 60_000, env: engineEnv() });
    })();
    return this.closing;
  }
}
