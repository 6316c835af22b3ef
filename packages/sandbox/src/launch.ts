// Starting one sandboxed process tree and ending it for sure.
import { spawn, execFile, type ChildProcess, type StdioOptions } from 'node:child_process';
import { bwrapCommand, containerCommand, engineEnv, localCommand, type HostCommand, type LaunchSpec, type ProviderSetup } from './providers.js';
import { hostFs } from './probe.js';

export function hostCommand(setup: ProviderSetup, spec: LaunchSpec): HostCommand {
  if (setup.name === 'bwrap') return bwrapCommand(setup, spec, hostFs);
  if (setup.name === 'container') return containerCommand(setup, spec, process.pid);
  return localCommand(setup, spec, process.pid);
}

/** Process groups started by this process and not yet seen to end: killed if the server exits. */
const liveGroups = new Map<number, string | null>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const pid of liveGroups.keys()) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
}

/** Number of process groups this server started that are still running. */
export function liveProcessGroups(): number {
  return liveGroups.size;
}

export class Launched {
  readonly child: ChildProcess;
  private killed = false;
  /** Set once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    private readonly setup: ProviderSetup,
    readonly spec: LaunchSpec,
    stdio: StdioOptions,
  ) {
    const cmd = hostCommand(setup, spec);
    installExitHook();
    // detached: a process group of its own, so one kill reaches every process of the tree.
    this.child = spawn(cmd.argv[0]!, cmd.argv.slice(1), { cwd: cmd.cwd, env: cmd.env, stdio, detached: true });
    const pid = this.child.pid;
    if (pid !== undefined) liveGroups.set(pid, setup.name === 'container' ? spec.name : null);
    this.exited = new Promise((resolve) => {
      this.child.once('error', () => resolve({ code: null, signal: null }));
      this.child.once('exit', (code, signal) => {
        // Whatever the program left behind in its group goes too.
        this.killGroup();
        if (pid !== undefined) liveGroups.delete(pid);
        resolve({ code, signal });
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private killGroup(): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  /** SIGKILL to the whole tree (and the container, which does not die with its CLI). */
  kill(): void {
    if (this.setup.name === 'container' && !this.killed) {
      const c = this.setup.container!;
      const args = [...(c.runtime ? ['--runtime', c.runtime] : []), 'rm', '-f', '-t', '0', this.spec.name];
      execFile(c.engine, args, { timeout: 30_000, env: engineEnv(), killSignal: 'SIGKILL' }, () => {});
    }
    this.killed = true;
    this.killGroup();
  }
}
