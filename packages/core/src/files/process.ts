/**
 * The process side of file safety: whether a process still runs (stale temporary and lock files of
 * dead processes are removed), and clean-up that runs however this process ends — a normal exit,
 * an error, `process.exit`, or a stop signal when nothing else handles it.
 */
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';

/** Whether a process with this id runs on this machine (a process of another user counts). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When a process started, in clock ticks since boot (field 22 of /proc/<pid>/stat), or null where
 * there is no /proc. Told apart from the start time recorded with a pid, it shows a pid reused by
 * another process.
 */
export function processStartTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

const exitActions = new Map<number, () => void>();
let nextAction = 0;
let exitHooked = false;

function runExitActions(): void {
  for (const action of [...exitActions.values()].reverse()) {
    try {
      action();
    } catch {
      // Clean-up at exit is best effort: one failure does not stop the others.
    }
  }
  exitActions.clear();
}

/**
 * Runs `action` (synchronous) when the process exits, unless the returned function was called
 * first. Actions run newest first.
 */
export function onProcessExit(action: () => void): () => void {
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', runExitActions);
  }
  const id = nextAction++;
  exitActions.set(id, action);
  return () => {
    exitActions.delete(id);
  };
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * For a command that does not handle stop signals itself: on SIGINT, SIGTERM or SIGHUP, print
 * `message()` and exit with 128 + the signal number, so the exit clean-up (temporary files, lock
 * files) runs. Signals that already have a handler are left to it. Returns a function that
 * removes the handlers.
 */
export function exitOnStopSignal(message: (signal: NodeJS.Signals) => string): () => void {
  const installed: [NodeJS.Signals, () => void][] = [];
  for (const signal of STOP_SIGNALS) {
    if (process.listenerCount(signal) > 0) continue;
    const handler = () => {
      process.stderr.write(`${message(signal)}\n`);
      process.exit(128 + (constants.signals[signal] ?? 2));
    };
    process.on(signal, handler);
    installed.push([signal, handler]);
  }
  return () => {
    for (const [signal, handler] of installed) process.off(signal, handler);
  };
}
