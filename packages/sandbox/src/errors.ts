import { NgError } from '@nemo-gym/core/errors';

/** The sandbox cannot be set up or a provider cannot run here. */
export class SandboxError extends NgError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('NG_ERR_SANDBOX', message, options);
  }
}

/** The pool's queue is full: the caller should slow down or retry later. */
export class SandboxBusyError extends NgError {
  constructor(message: string) {
    super('NG_ERR_SANDBOX_BUSY', message);
  }
}
