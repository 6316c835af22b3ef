/** The error codes responses_api_models/replay_model owns, registered into the one table (docs/errors.md is generated from it). */
import { createError, registerErrorCodes } from '@nemo-gym/core/errors';

export const REPLAY_MODEL_ERRORS = registerErrorCodes('responses_api_models/replay_model', {
  NG_ERR_REPLAY_RECORDINGS: {
    message: '%s',
    meaning:
      'replay_model: a file in `recordings_jsonl_fpaths` cannot be read or has a line that is not JSON.',
    fix: 'Check the path (relative paths are from the repository root) and the named line.',
  },
});

/** replay_model's recordings could not be read. */
export const ReplayRecordingsError = createError(REPLAY_MODEL_ERRORS.NG_ERR_REPLAY_RECORDINGS, 'ReplayRecordingsError');
