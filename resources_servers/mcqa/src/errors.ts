/** The error codes resources_servers/mcqa owns, registered into the one table (docs/errors.md is generated from it). */
import { registerErrorCodes } from '@nemo-gym/core/errors';

export const MCQA_ERRORS = registerErrorCodes('resources_servers/mcqa', {
  NG_ERR_OUTPUT_REGEX: {
    message: '%s',
    meaning:
      'mcqa: a row\'s `template_metadata.output_regex` is not a string or cannot be used as a Python regular expression.',
    fix: 'Correct the regex in the dataset row.',
  },
});
