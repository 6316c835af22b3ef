/** The error codes resources_servers/multiverse_math_hard owns, registered into the one table (docs/errors.md is generated from it). */
import { registerErrorCodes } from '@nemo-gym/core/errors';

export const MULTIVERSE_MATH_HARD_ERRORS = registerErrorCodes('resources_servers/multiverse_math_hard', {
  NG_ERR_PYTHON_LIBM: {
    message: '%s',
    meaning:
      'multiverse_math_hard: the `python3` helper that computes with the platform\'s libm could not run, exited, or answered something unexpected.',
    fix: 'Install `python3` or set `python_executable` in the server\'s config; or use `float_backend: correctly_rounded`, which needs no Python.',
  },
});
