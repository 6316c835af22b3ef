/** Limits of one run or one session. Every field has a default (see DEFAULT_LIMITS). */
export interface Limits {
  /** Wall-clock time before the whole process tree is killed, ms. */
  wallMs: number;
  /** CPU time (RLIMIT_CPU, rounded up to whole seconds), ms; 0 = none. */
  cpuMs: number;
  /** Address space (RLIMIT_AS) and, for containers, the cgroup memory limit, bytes; 0 = none. */
  memoryBytes: number;
  /** Processes the code may have at once, itself included. 1 = it may not start any. */
  processes: number;
  /** Bytes kept of stdout and of stderr each; more stops the program (`truncated`). */
  outputBytes: number;
  /** Largest file the code may write (RLIMIT_FSIZE), bytes. */
  fileBytes: number;
  /** Open file descriptors (RLIMIT_NOFILE). */
  openFiles: number;
  /** Network access; only `false` is supported by the isolating providers' guarantees. */
  network: boolean;
}

export const DEFAULT_LIMITS: Limits = {
  wallMs: 10_000,
  cpuMs: 0,
  memoryBytes: 2 * 1024 ** 3,
  processes: 1,
  outputBytes: 1024 * 1024,
  fileBytes: 64 * 1024 ** 2,
  openFiles: 256,
  network: false,
};

export type ProviderName = 'local' | 'bwrap' | 'container';

/** One program run: `argv[0]` is a program path visible inside the sandbox, or the word
 * `python`, which means the sandbox's interpreter (then `argv[1]` may be a script path). */
export interface RunRequest {
  argv: string[];
  stdin?: string | Buffer;
  /** Files written into the fresh work folder before the run (relative paths). */
  files?: Record<string, string | Buffer>;
  /** Working folder relative to the work folder (default: the work folder). */
  cwd?: string;
  /** Variables added to the allow-listed environment. */
  env?: Record<string, string>;
  limits?: Partial<Limits>;
  /** Host paths made readable inside the sandbox at the same path. */
  readablePaths?: string[];
}

export interface Durations {
  /** Time spent waiting for a pool slot. */
  queueMs: number;
  /** From spawn to the end of the process tree. */
  runMs: number;
  totalMs: number;
}

export interface RunResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  outOfMemory: boolean;
  /** stdout or stderr went over `outputBytes` (the program was stopped). */
  truncated: boolean;
  durations: Durations;
  provider: ProviderName;
}

/** What a provider puts in force, for logs and docs. */
export interface ProviderInfo {
  name: ProviderName;
  /** Interpreter path as seen inside the sandbox. */
  python: string;
  guarantees: string[];
  /** Layers that could not be put in force here, with the reason. */
  missing: string[];
}
