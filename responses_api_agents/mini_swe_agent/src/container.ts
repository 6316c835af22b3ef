// env docker / podman: the episode in ONE long-lived container of the instance's own image (the
// repository at /testbed, as SWE-Gym's and SWE-bench's images have it), with a writable layer.
// The container runs a shell that waits on its stdin, which this server holds open: when the
// server dies the container's main process sees end-of-file and the container (run with --rm)
// goes. Each command is one `exec` (`bash -lc`, as upstream) under `timeout`; the evaluation runs
// in the same container; the container is removed when the episode ends or is cancelled.
import { randomBytes } from 'node:crypto';
import { ImageError } from './images.js';
import { EnvironmentError, type CommandResult, type SweEnvironment } from './environment.js';
import { engineEnv, runEnvCommand, runHost, startHost } from './host.js';
import { sleep } from '@nemo-gym/core/client';

export interface ContainerEnvSettings {
  /** `docker` or `podman` (or a path to one). */
  engine: string;
  /** OCI runtime passed as `--runtime` (podman: runc where crun cannot run). */
  runtime: string | null;
  /** `missing`: pull an image that is not on this machine (bounded by pullTimeoutS); `never`. */
  pull: 'missing' | 'never';
  pullTimeoutS: number;
  startTimeoutS: number;
  /** Folder of the repository inside the image (every command starts there). */
  workdir: string;
  /** `none` (default) or an engine network name. */
  network: string;
  /** Extra `run` arguments (upstream's `run_args`), e.g. `--ulimit nofile=1024:1024`. */
  runArgs: string[];
  /** cgroup memory limit of the container, bytes (0 = none). */
  memoryBytes: number;
  pidsLimit: number;
  maxOutputBytes: number;
  /** Label value naming the owning server (stale containers of a dead owner are removed at start). */
  ownerPid: number;
}

/** The container's main process: waits until its stdin ends, with no program besides sh. */
export const KEEPALIVE = ['/bin/sh', '-c', 'while read -r _; do :; done'];

const runtimeArgs = (s: Pick<ContainerEnvSettings, 'runtime'>) => (s.runtime ? ['--runtime', s.runtime] : []);

/** `run` of the episode's container (attached, stdin open, removed when it stops). */
export function containerRunArgv(s: ContainerEnvSettings, name: string, image: string, instanceId: string): string[] {
  const a = [s.engine, ...runtimeArgs(s), 'run', '--rm', '-i', '--pull', 'never', '--name', name];
  a.push('--label', `ng-sandbox-owner=${s.ownerPid}`, '--label', `ng-swe-instance=${instanceId}`);
  a.push('--network', s.network, '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges');
  if (s.memoryBytes > 0) a.push('--memory', `${s.memoryBytes}b`, '--memory-swap', `${s.memoryBytes}b`);
  a.push('--pids-limit', String(s.pidsLimit), '-w', s.workdir, ...s.runArgs, image, ...KEEPALIVE);
  return a;
}

/** One command: `exec` in the folder, the variables set, under `timeout` (TERM at the limit, KILL
 * 5 s later; timeout signals the command's whole process group). */
export function containerExecArgv(s: ContainerEnvSettings, name: string, command: string, timeoutS: number, env: Record<string, string>, cwd = s.workdir): string[] {
  const a = [s.engine, ...runtimeArgs(s), 'exec', '-w', cwd];
  for (const [k, v] of Object.entries(env)) a.push('-e', `${k}=${v}`);
  a.push(name, 'timeout', '-k', '5', `${Math.max(1, Math.ceil(timeoutS))}`, 'bash', '-lc', command);
  return a;
}

export function containerRmArgv(s: Pick<ContainerEnvSettings, 'engine' | 'runtime'>, name: string): string[] {
  return [s.engine, ...runtimeArgs(s), 'rm', '-f', '-t', '0', name];
}

/** Makes sure `image` is on this machine: present -> nothing; absent -> an error (pull never) or
 * one pull bounded by pullTimeoutS. */
export async function ensureImage(s: ContainerEnvSettings, image: string, signal?: AbortSignal): Promise<void> {
  const exists = await runHost([s.engine, ...runtimeArgs(s), 'image', 'inspect', '--format', '{{.Id}}', image], { timeoutMs: 60_000, signal });
  if (exists.spawnError) throw new ImageError(`cannot run the container engine '${s.engine}': ${exists.spawnError}; install it (apt-get install podman) or set container.engine`);
  if (exists.code === 0) return;
  if (s.pull === 'never') {
    throw new ImageError(`the image ${image} is not on this machine and container.pull is 'never'; pull or build it (${s.engine} pull ${image}) or set container.pull: missing`);
  }
  const pulled = await runHost([s.engine, ...runtimeArgs(s), 'pull', image], { timeoutMs: s.pullTimeoutS * 1000, signal, maxOutputBytes: 64 * 1024 });
  if (pulled.code !== 0) {
    const why = pulled.timedOut ? `did not finish within container.pull_timeout (${s.pullTimeoutS} s)` : `failed: ${pulled.output.trim().slice(-800)}`;
    throw new ImageError(`the image ${image} is not on this machine and pulling it ${why}; pull or build it by hand (${s.engine} pull ${image})`);
  }
}


let counter = 0;

export class ContainerEnvironment implements SweEnvironment {
  private closing: Promise<void> | null = null;
  private readonly running = new Set<AbortController>();

  private constructor(
    private readonly s: ContainerEnvSettings,
    readonly name: string,
    private readonly main: ReturnType<typeof startHost>,
    private readonly env: Record<string, string>,
  ) {}

  get repoDir(): string {
    return this.s.workdir;
  }

  /** Starts the instance's container and waits until it runs commands. */
  static async start(s: ContainerEnvSettings, image: string, instanceId: string, env: Record<string, string>, signal?: AbortSignal): Promise<ContainerEnvironment> {
    await ensureImage(s, image, signal);
    counter += 1;
    const safeId = instanceId.toLowerCase().replace(/[^a-z0-9_.-]/g, '-').slice(0, 60);
    const name = `ng-swe-${process.pid}-${counter}-${randomBytes(3).toString('hex')}-${safeId}`;
    const main = startHost(containerRunArgv(s, name, image, instanceId));
    const envObj = new ContainerEnvironment(s, name, main, env);
    const deadline = Date.now() + s.startTimeoutS * 1000;
    let ended = false;
    void main.exited.then(() => {
      ended = true;
    });
    try {
      for (;;) {
        signal?.throwIfAborted();
        if (ended) throw new EnvironmentError(`the container of ${instanceId} (image ${image}) stopped while starting: ${main.output().trim().slice(-800) || 'no output'}`);
        const probe = await runHost([s.engine, ...runtimeArgs(s), 'exec', name, 'true'], { timeoutMs: 30_000, signal });
        if (probe.code === 0) return envObj;
        if (Date.now() > deadline) throw new EnvironmentError(`the container of ${instanceId} (image ${image}) did not start within container.start_timeout (${s.startTimeoutS} s): ${main.output().trim().slice(-800)}`);
        await sleep(150);
      }
    } catch (err) {
      await envObj.close();
      throw err;
    }
  }

  async execute(command: string, timeoutS: number, cwd?: string): Promise<CommandResult> {
    if (this.closing) throw new EnvironmentError(`the container ${this.name} has been removed`);
    const r = await runEnvCommand(this.running, containerExecArgv(this.s, this.name, command, timeoutS, this.env, cwd), timeoutS, this.s.maxOutputBytes);
    if (r.spawnError) throw new EnvironmentError(`cannot run '${this.s.engine} exec': ${r.spawnError}`);
    if (this.closing || r.aborted) throw new EnvironmentError(`the container ${this.name} was removed while a command ran`);
    if (!r.struck && (r.code === 125 || r.code === 126 || r.code === 127) && /Error: |no such container|is not running/i.test(r.output) && (await this.gone())) {
      throw new EnvironmentError(`the container ${this.name} stopped: ${r.output.trim().slice(-500)} ${this.main.output().trim().slice(-500)}`);
    }
    return { returncode: r.struck ? null : r.code, output: r.output, timedOut: r.struck, truncated: r.truncated };
  }

  /** The container's main process has ended. */
  private async gone(): Promise<boolean> {
    return (await Promise.race([this.main.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 200))])) as boolean;
  }

  /** Removes the container (idempotent): running commands are stopped, `rm -f`, the attached
   * CLI killed. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const ac of this.running) ac.abort();
      await runHost(containerRmArgv(this.s, this.name), { timeoutMs: 60_000, env: engineEnv() });
      this.main.child.stdin?.end();
      await Promise.race([this.main.exited, sleep(10_000)]);
      this.main.kill();
    })();
    return this.closing;
  }
}
