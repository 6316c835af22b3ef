/** The error codes responses_api_agents/harness_agent owns, registered into the one table (docs/errors.md is generated from it). */
import { createError, registerErrorCodes } from '@nemo-gym/core/errors';

export const HARNESS_AGENT_ERRORS = registerErrorCodes('responses_api_agents/harness_agent', {
  NG_ERR_HARNESS: {
    message: '%s',
    meaning:
      'harness_agent: a harness rollout failed and is recorded as a failure, not scored: the harness CLI timed out (`timeout_s`; its whole process tree was killed), exited with a non-zero code or a signal, wrote more than `max_output_bytes`, or produced no answer and changed no file; or its sandbox, work folder set-up or diff could not run. At start-up: the preset\'s pinned binary is not installed (`pnpm install`), `generic` without `command`, or `capture: true` where the harness does not reach `model_server` through per-rollout routes (`model_base_url` set or `per_rollout_routes: false`).',
    fix: 'The message holds the tail of the harness\'s stderr. Run the CLI by hand with the same flags (responses_api_agents/harness_agent/README.md lists them), raise `timeout_s`, or check the model server\'s log for the harness\'s calls.',
  },
});

/** The harness could not be run, or ran and failed (crashed, hung, wrote nothing). */
export const HarnessError = createError('NG_ERR_HARNESS', 'HarnessError');
