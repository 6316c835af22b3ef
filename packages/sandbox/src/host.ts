// Facts about the host: does a command run, is a process alive. Used by tests to skip what
// this machine cannot run, and to check that nothing is left behind.
import { execFileSync } from 'node:child_process';

/** True when `cmd args` exits 0 within `timeoutMs`. */
export function commandRuns(cmd: string, args: string[], timeoutMs = 20_000): boolean {
  try {
    execFileSync(cmd, args, { stdio: 'ignore', timeout: timeoutMs });
    return true;
  } catch {
    return false;
  }
}

/** True when a process with this id exists and may be signalled by us. */
export function processAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
