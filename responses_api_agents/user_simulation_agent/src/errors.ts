/** The error codes responses_api_agents/user_simulation_agent owns, registered into the one table (docs/errors.md is generated from it). */
import { createError, registerErrorCodes } from '@nemo-gym/core/errors';

export const USER_SIMULATION_ERRORS = registerErrorCodes('responses_api_agents/user_simulation_agent', {
  NG_ERR_USER_MODEL_FAILED: {
    message: '%s',
    status: 502,
    meaning:
      'user_simulation_agent: the model server playing the user (`user_model_server`) could not be reached, answered an error, or answered without any text. The rollout is recorded as a failure (class `model_unreachable`), never scored.',
    fix: 'Check that the user model server runs (ng-status) and its log; `user_responses_create_params` must be parameters that model accepts. A user model that answers only tool calls or reasoning needs a prompt or parameters that make it write text.',
  },
  NG_ERR_USER_MODEL_TIMEOUT: {
    message: '%s',
    status: 504,
    meaning: 'user_simulation_agent: the user model server gave no answer within `user_timeout_s`. The rollout is recorded as a failure (class `timeout`), never scored.',
    fix: 'Raise `user_timeout_s` if the user model is just slow (long conversations, a busy server), or look at that server\'s log.',
  },
  NG_ERR_USER_INSTRUCTIONS: {
    message: '%s',
    status: 422,
    meaning: 'user_simulation_agent: the row gives the simulated user no instructions (no `user_instructions` string, no `user_scenario` and no `user_system_prompt`), or `/v1/responses` was called without `metadata.user_instructions`.',
    fix: 'Add `user_instructions` (text), `user_scenario` (an object, given to the user model as JSON) or a whole `user_system_prompt` to each row, as tau2 rows carry.',
  },
});

export const UserModelFailedError = createError('NG_ERR_USER_MODEL_FAILED', 'UserModelFailedError');
export const UserModelTimeoutError = createError('NG_ERR_USER_MODEL_TIMEOUT', 'UserModelTimeoutError');
export const UserInstructionsError = createError('NG_ERR_USER_INSTRUCTIONS', 'UserInstructionsError');
