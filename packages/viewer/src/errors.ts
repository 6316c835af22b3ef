/** The error codes packages/viewer owns, registered into the one table (docs/errors.md is generated from it). */
import { registerErrorCodes } from '@nemo-gym/core/errors';

export const VIEWER_ERRORS = registerErrorCodes('packages/viewer', {
  NG_ERR_VIEWER: {
    message: '%s',
    meaning:
      'The rollout viewer cannot start: the rollouts file does not exist, the port is in use, or the file was closed.',
    fix: 'Pass an existing `+jsonl_fpath=<rollouts.jsonl>` and a free `+port=` (0 picks any).',
  },
  NG_ERR_VIEWER_REQUEST: {
    message: '%s',
    meaning:
      'A request to the viewer\'s API was refused (a bad query parameter, a row that does not exist, a foreign Host header); answered with 400/404/405/421 and `{"detail": …}`.',
    fix: 'Follow the detail; open the viewer at the URL it printed.',
  },
});
