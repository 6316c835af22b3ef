/** The error codes resources_servers/structured_outputs owns, registered into the one table (docs/errors.md is generated from it). */
import { registerErrorCodes } from '@nemo-gym/core/errors';

export const STRUCTURED_OUTPUTS_ERRORS = registerErrorCodes('resources_servers/structured_outputs', {
  NG_ERR_SCHEMA_INVALID: {
    message: '%s',
    meaning:
      'structured_outputs: a row\'s JSON schema is invalid for the validator (its meta-schema check fails, or a `pattern` is not a valid regex).',
    fix: 'Correct the schema in the dataset row.',
  },
});
