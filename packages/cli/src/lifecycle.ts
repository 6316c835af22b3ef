/**
 * How a long-running command (ng-run, ng-viewer) learns it must stop: SIGINT (Ctrl-C), SIGTERM or
 * SIGHUP, whoever sends them, or the exit of the package runner that started it.
 */

export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Package runners (pnpm, npm, npx) start a command through a shell and, sent SIGTERM, stop that shell
 * but not the command under it. When the command was started by one (npm_lifecycle_event or
 * npm_execpath in its environment) and the process that started it exits, `onGone` runs, as a signal
 * would. A plain `nohup ng-run &` is left alone: outliving the shell that started it is what it was
 * asked to do. Returns a function that stops watching.
 */
export function onLauncherExit(onGone: (pid: number) => void, env: NodeJS.ProcessEnv = process.env, intervalMs = 250): () => void {
  if (!env.npm_lifecycle_event && !env.npm_execpath) return () => undefined;
  const launcher = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === launcher) return;
    clearInterval(timer);
    onGone(launcher);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Calls `onStop` once, with the reason and the signal received (null when the launcher went away),
 * on the first stop signal or the launcher's exit. Returns a function that stops listening.
 */
export function onStopRequest(command: string, onStop: (why: string, signal: NodeJS.Signals | null) => void): () => void {
  let done = false;
  const handlers = STOP_SIGNALS.map((sig) => [sig, () => fire(`Received ${sig}`, sig)] as const);
  const unwatch = onLauncherExit((pid) => fire(`The process that started ${command} (pid ${pid}) has exited`));
  const off = () => {
    unwatch();
    for (const [sig, h] of handlers) process.off(sig, h);
  };
  function fire(why: string, signal: NodeJS.Signals | null = null): void {
    if (done) return;
    done = true;
    onStop(why, signal);
  }
  for (const [sig, h] of handlers) process.on(sig, h);
  // A program that embeds the command (the Python package's RunHelper) holds its stdin open:
  // when that program dies, even by SIGKILL, the pipe closes and the command stops.
  if (process.env.NEMO_GYM_EXIT_ON_STDIN_CLOSE) {
    const gone = () => fire(`The process that started ${command} has exited (its stdin closed)`);
    process.stdin.on('end', gone);
    process.stdin.on('error', gone);
    process.stdin.resume();
    // Watching must not keep the process alive once the command is done (e.g. after a start-up error).
    (process.stdin as unknown as { unref?: () => void }).unref?.();
  }
  return off;
}
