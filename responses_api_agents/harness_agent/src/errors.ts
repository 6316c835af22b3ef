import { createError } from '@nemo-gym/core/errors';

/** The harness could not be run, or ran and failed (crashed, hung, wrote nothing). */
export const HarnessError = createError('NG_ERR_HARNESS', 'HarnessError');
