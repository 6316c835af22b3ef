/** The sandbox's errors and the codes it owns, registered into the one table (docs/errors.md is generated from it). */
import { NgError, registerErrorCodes } from '@nemo-gym/core/errors';

export const SANDBOX_ERRORS = registerErrorCodes('packages/sandbox', {
  NG_ERR_SANDBOX: {
    message: '%s',
    meaning:
      'Model-written code could not be run: the sandbox cannot be set up, its provider (local, bubblewrap, container) cannot run on this machine, or the interpreter is missing, exited during start-up or did not start in time.',
    fix: 'Install `python3` (e.g. `apt-get install python3`) or set `python_executable` in the server\'s config, or choose a provider that works here; the message holds the interpreter\'s or provider\'s own error output.',
  },
  NG_ERR_SANDBOX_BUSY: {
    message: '%s',
    meaning:
      'The sandbox pool\'s queue is full: more code runs were asked for than it has slots and waiting room.',
    fix: 'Lower the collection\'s concurrency or raise the pool\'s size/queue in the server\'s config; the run may be tried again later.',
  },
});

/** The sandbox cannot be set up or a provider cannot run here. */
export class SandboxError extends NgError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(SANDBOX_ERRORS.NG_ERR_SANDBOX, message, options);
  }
}

/** The pool's queue is full: the caller should slow down or retry later. */
export class SandboxBusyError extends NgError {
  constructor(message: string) {
    super(SANDBOX_ERRORS.NG_ERR_SANDBOX_BUSY, message);
  }
}
