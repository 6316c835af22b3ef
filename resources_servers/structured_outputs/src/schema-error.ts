import { NgError } from '@nemo-gym/core/errors';
import { STRUCTURED_OUTPUTS_ERRORS } from './errors.js';

/**
 * What the Python validator would raise while checking a schema or validating an answer (an
 * unresolvable reference, a regex that does not compile, a malformed keyword value, nesting past
 * the recursion limit): upstream scores it 0.0; the message names the cause.
 */
export class SchemaEvalError extends NgError {
  override readonly name = 'SchemaEvalError';
  constructor(message: string) {
    super(STRUCTURED_OUTPUTS_ERRORS.NG_ERR_SCHEMA_INVALID, message);
  }
}
