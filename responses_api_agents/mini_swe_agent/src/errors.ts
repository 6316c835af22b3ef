/** The error codes responses_api_agents/mini_swe_agent owns, registered into the one table (docs/errors.md is generated from it). */
import { registerErrorCodes } from '@nemo-gym/core/errors';

export const MINI_SWE_AGENT_ERRORS = registerErrorCodes('responses_api_agents/mini_swe_agent', {
  NG_ERR_SWE_INSTANCE: {
    message: '%s',
    meaning:
      'mini_swe_agent cannot run a SWE row: a required field is missing, the repository is not where `repo_path_template` points, the checkout at `base_commit` or the gold patch failed, or the model server answered an error. The row ends with reward 0.0 and this message in `metadata.error`.',
    fix: 'Clone the repository where the template points (or fix the template), check the row\'s `base_commit`, `patch` and `repo`, or look at the model server\'s log.',
  },
  NG_ERR_SWE_ENVIRONMENT: {
    message: '%s',
    meaning:
      'mini_swe_agent: the sandboxed shell of an episode did not start or stopped (killed, out of memory, a protocol failure); the row ends with reward 0.0 and this message in `metadata.error`. With `env: docker`/`podman`/`singularity`/`apptainer` also: the instance\'s image is absent and may not be pulled (`pull: never`) or its pull failed, the container or instance did not start, or the engine program is missing (then the server does not start).',
    fix: 'Check the sandbox provider lines in the server log (`bwrap` and `python3` must run here) and `memory_limit_mb`; for containers pull or build the named image, or install the named engine.',
  },
});
