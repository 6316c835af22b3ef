/**
 * One writer per output: a command that writes an output first takes `<output>.lock`, created
 * atomically (O_EXCL: of two processes, exactly one creates it) and holding who took it — pid, host,
 * start time, command. A second writer is refused, naming the holder. A lock left by a process that
 * no longer runs on this host (killed with -9, a crash, a reboot) is taken over with a one-line
 * notice; a lock held on another host is never taken over (its process cannot be seen from here).
 * The lock is removed when the command ends: a normal end, an error, `process.exit`, and — for a
 * command that asks for it — Ctrl-C, SIGTERM and SIGHUP.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { OutputLockedError } from '../errors.js';
import { resolveOutputPath } from './atomic.js';
import { exitOnStopSignal, isProcessAlive, onProcessExit, processStartTicks } from './process.js';
import { fileError } from './problems.js';

/** What a lock file holds. */
export interface LockHolder {
  pid: number;
  host: string;
  /** ISO time the lock was taken. */
  started_at: string;
  /** The command line's command, e.g. `ng-export`. */
  command: string;
  output: string;
  /** The holder's start time in clock ticks since boot (Linux), to tell a reused pid. */
  start_ticks: string | null;
  /** Tells this holder from an earlier one of the same pid. */
  token: string;
}

/** Removes the folders `mkdirSync` made (from `made` down to `deepest`) that are empty, deepest first. */
function removeEmptyFolders(made: string | undefined, deepest: string): void {
  if (!made) return;
  for (let dir = deepest; dir.length >= made.length; dir = dirname(dir)) {
    try {
      rmdirSync(dir);
    } catch {
      return;
    }
    if (dir === made) return;
  }
}

/** The lock file of an output (beside the file the path stands for, so every spelling shares it). */
export function lockPathOf(output: string): string {
  return `${resolveOutputPath(output)}.lock`;
}

/** A lock older than this with no readable holder is a crash's leftover (a holder writes it at once). */
const UNREADABLE_GRACE_MS = 10_000;

function readHolder(path: string): LockHolder | null | 'gone' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    return null;
  }
  try {
    const h = JSON.parse(text) as LockHolder;
    return h && typeof h === 'object' && typeof h.pid === 'number' && typeof h.host === 'string' ? h : null;
  } catch {
    return null;
  }
}

/** Why a lock's holder no longer writes, or null when it may still. */
function staleBecause(holder: LockHolder | null, lockPath: string): string | null {
  if (holder === null) {
    try {
      return Date.now() - statSync(lockPath).mtimeMs > UNREADABLE_GRACE_MS ? 'it names no process' : null;
    } catch {
      return null;
    }
  }
  if (holder.host !== hostname()) return null;
  if (holder.pid === process.pid) return null;
  if (!isProcessAlive(holder.pid)) return `the ${holder.command || 'process'} that held it (pid ${holder.pid}, since ${holder.started_at}) is no longer running`;
  const ticks = processStartTicks(holder.pid);
  if (holder.start_ticks && ticks && ticks !== holder.start_ticks) {
    return `the ${holder.command || 'process'} that held it (pid ${holder.pid}, since ${holder.started_at}) is no longer running (its pid now belongs to another process)`;
  }
  return null;
}

function lockedError(output: string, lockPath: string, holder: LockHolder | null): InstanceType<typeof OutputLockedError> {
  if (!holder) {
    return new OutputLockedError(`${output} is being written by another process (its lock ${lockPath} is being created). Wait for it to finish, or run again in a moment.`);
  }
  const where = holder.host === hostname() ? `pid ${holder.pid} on this host (${holder.host})` : `pid ${holder.pid} on host ${holder.host}`;
  return new OutputLockedError(
    `${output} is being written by another process: ${holder.command} (${where}, since ${holder.started_at}). ` +
      `Wait for it to finish or stop it, or choose another output.` +
      (holder.host === hostname() ? '' : ` If that process is gone (its host crashed), delete ${lockPath} and run again.`),
  );
}

export interface LockOptions {
  /** Where the take-over notice goes (default: stderr). */
  log?: (msg: string) => void;
  /**
   * Release the lock and exit on SIGINT, SIGTERM or SIGHUP (when nothing else handles them),
   * printing this message first. Off by default: a command with its own stop handling releases
   * the lock when it ends.
   */
  onStopSignal?: (signal: NodeJS.Signals) => string;
}

/** A held output lock. */
export class OutputLock {
  private offExit: (() => void) | null;
  private readonly offSignals: () => void;

  constructor(
    readonly path: string,
    readonly holder: LockHolder,
    options: LockOptions,
    private readonly unmake: () => void = () => undefined,
  ) {
    this.offExit = onProcessExit(() => this.removeIfOurs());
    this.offSignals = options.onStopSignal ? exitOnStopSignal(options.onStopSignal) : () => undefined;
  }

  private removeIfOurs(): void {
    const now = readHolder(this.path);
    if (now !== null && now !== 'gone' && now.token === this.holder.token) rmSync(this.path, { force: true });
    this.unmake();
  }

  get released(): boolean {
    return this.offExit === null;
  }

  /** Removes the lock file (if it is still ours); safe to call more than once. */
  release(): void {
    if (this.offExit === null) return;
    this.offSignals();
    this.offExit();
    this.offExit = null;
    this.removeIfOurs();
  }
}

/**
 * Takes the lock of `output` for `command`, or throws OutputLockedError naming the live holder.
 * A stale lock (its process gone) is taken over with a notice.
 */
export function acquireOutputLock(output: string, command: string, options: LockOptions = {}): OutputLock {
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  const lockPath = lockPathOf(output);
  const me: LockHolder = {
    pid: process.pid,
    host: hostname(),
    started_at: new Date().toISOString(),
    command,
    output: resolveOutputPath(output),
    start_ticks: processStartTicks(process.pid),
    token: randomBytes(8).toString('hex'),
  };
  // Folders made for the lock are removed with it when nothing else was put in them (a run refused
  // or failed before writing leaves no empty output folder behind).
  let made: string | undefined;
  try {
    made = mkdirSync(dirname(lockPath), { recursive: true });
  } catch (err) {
    throw fileError('create the folder of', output, err);
  }
  const unmake = () => removeEmptyFolders(made, dirname(lockPath));
  try {
    for (let tries = 0; tries < 8; tries++) {
      let fd: number;
      try {
        fd = openSync(lockPath, 'wx');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw fileError('create the lock file', lockPath, err, 'The lock keeps two commands from writing one output at once.');
        const holder = readHolder(lockPath);
        if (holder === 'gone') continue;
        const why = staleBecause(holder, lockPath);
        if (why === null) throw lockedError(output, lockPath, holder);
        // Moved aside under a name of our own, then checked: if another process took the lock over
        // in the meantime, what was moved is its fresh lock, and it is put back.
        const aside = `${lockPath}.stale-${process.pid}`;
        try {
          renameSync(lockPath, aside);
        } catch {
          continue;
        }
        const moved = readHolder(aside);
        const sameOne = holder === null ? moved === null : moved !== null && moved !== 'gone' && moved.token === holder.token;
        if (!sameOne) {
          try {
            linkSync(aside, lockPath);
          } catch {
            // Someone holds the lock again now; the loop below refuses or retries.
          }
          rmSync(aside, { force: true });
          continue;
        }
        rmSync(aside, { force: true });
        log(`Taking over the lock ${lockPath}: ${why}.`);
        continue;
      }
      try {
        writeSync(fd, `${JSON.stringify(me)}\n`);
        fsyncSync(fd);
      } catch (err) {
        closeSync(fd);
        rmSync(lockPath, { force: true });
        throw fileError('write the lock file', lockPath, err);
      }
      closeSync(fd);
      return new OutputLock(lockPath, me, options, unmake);
    }
    throw lockedError(output, lockPath, (() => {
      const h = readHolder(lockPath);
      return h === 'gone' ? null : h;
    })());
  } catch (err) {
    unmake();
    throw err;
  }
}

/** Runs `fn` holding the lock of `output`; the lock is released however `fn` ends. */
export async function withOutputLock<T>(output: string, command: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const lock = acquireOutputLock(output, command, options);
  try {
    return await fn();
  } finally {
    lock.release();
  }
}

/**
 * The lock a command takes on the output it writes atomically: released when it ends, and on
 * Ctrl-C, SIGTERM or SIGHUP it exits saying the output was left as it was. Null without a command.
 */
export function commandLock(output: string, command: string | undefined): OutputLock | null {
  if (!command) return null;
  return acquireOutputLock(output, command, {
    onStopSignal: (signal) => `${command}: stopped by ${signal}; ${output} keeps what it held before (nothing was half-written).`,
  });
}
