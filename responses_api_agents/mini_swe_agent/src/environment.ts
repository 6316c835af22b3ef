// Where an episode's commands run: a shell kept alive in @nemo-gym/sandbox for the whole
// episode (the repository checkout lives in its work folder), one `bash -c` per command.
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createError } from '@nemo-gym/core/errors';
import { MINI_SWE_AGENT_ERRORS } from './errors.js';
import type { Sandbox, SandboxSession } from '@nemo-gym/sandbox';

export interface CommandResult {
  /** null when the command was killed at its time limit. */
  returncode: number | null;
  /** stdout and stderr, merged in arrival order. */
  output: string;
  timedOut: boolean;
  /** The output went over the byte cap and was cut. */
  truncated: boolean;
}

/** The episode's shell. `execute` fails (throws EnvironmentError) only when the shell itself is
 * gone; a command that fails or times out is a normal result. */
export interface SweEnvironment {
  /** Folder of the repository; every command starts there. */
  readonly repoDir: string;
  execute(command: string, timeoutS: number): Promise<CommandResult>;
  close(): Promise<void>;
}

/** The episode's shell did not start or stopped. */
export const EnvironmentError = createError(MINI_SWE_AGENT_ERRORS.NG_ERR_SWE_ENVIRONMENT, 'SweEnvironmentError');

const HERE = dirname(fileURLToPath(import.meta.url));
/** The shell server script (python/ next to src/ and dist/). */
export const SHELL_SERVER = join(HERE, HERE.endsWith('dist/src') ? '../..' : '..', 'python', 'shell_server.py');

/** Variables every command sees (as upstream's SWE-bench environment sets them). */
export const COMMAND_ENV: Record<string, string> = {
  PAGER: 'cat',
  MANPAGER: 'cat',
  LESS: '-R',
  PIP_PROGRESS_BAR: 'off',
  TQDM_DISABLE: '1',
  GIT_TERMINAL_PROMPT: '0',
};

export interface ShellOptions {
  /** Host paths the commands may read (the repository source). */
  readablePaths: string[];
  /** Address-space limit per process, bytes (0 = none). */
  memoryBytes: number;
  /** Bytes of output kept per command. */
  maxOutputBytes: number;
  startupTimeoutS: number;
}

/** The shell in a sandbox session. The seccomp layer is off (a shell needs to start and signal
 * its own processes: `timeout`, job control, test runners); isolation comes from the provider
 * (bwrap: own pid/net/ipc namespaces, read-only system; local: own network namespace) and
 * Landlock (writes only inside the work folder). */
export class SandboxShell implements SweEnvironment {
  private constructor(
    private readonly session: SandboxSession,
    private readonly options: ShellOptions,
    readonly repoDir: string,
  ) {}

  static async start(sandbox: Sandbox, options: ShellOptions): Promise<SandboxShell> {
    const session = await sandbox.openSession({
      argv: ['python', SHELL_SERVER],
      limits: { processes: 4096, memoryBytes: options.memoryBytes, openFiles: 4096, fileBytes: 1024 ** 3, outputBytes: options.maxOutputBytes },
      env: COMMAND_ENV,
      readablePaths: options.readablePaths,
      seccomp: false,
      startupTimeoutMs: options.startupTimeoutS * 1000,
    });
    try {
      const hello = await session.hello;
      const cwd = typeof hello.cwd === 'string' ? hello.cwd : session.workdir;
      return new SandboxShell(session, options, join(cwd, 'testbed'));
    } catch (err) {
      await session.close();
      throw new EnvironmentError(`the episode shell did not start: ${(err as Error).message}`);
    }
  }

  /** Runs `command` in `cwd` (default: the repository folder). */
  async execute(command: string, timeoutS: number, cwd: string = this.repoDir): Promise<CommandResult> {
    // The shell kills the command at timeoutS; the session is only killed if the shell itself
    // stops answering well after that.
    const r = await this.session.request({ command, timeout_s: timeoutS, cwd, max_output_bytes: this.options.maxOutputBytes }, (timeoutS + 30) * 1000);
    if (!r.ok) {
      const tail = r.stderrTail.trim();
      throw new EnvironmentError(`the episode shell stopped (${r.reason}${r.signal ? `, ${r.signal}` : ''})${tail ? `: ${tail.slice(-500)}` : ''}`);
    }
    const reply = r.reply;
    if (typeof reply.error === 'string') throw new EnvironmentError(`the episode shell could not run the command: ${reply.error}`);
    return {
      returncode: typeof reply.returncode === 'number' ? reply.returncode : null,
      output: typeof reply.output === 'string' ? reply.output : '',
      timedOut: reply.timed_out === true,
      truncated: reply.truncated === true,
    };
  }

  /** The work folder (parent of the repository). */
  get workdir(): string {
    return dirname(this.repoDir);
  }

  async close(): Promise<void> {
    await this.session.close();
  }
}
