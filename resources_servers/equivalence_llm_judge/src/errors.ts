/** The error codes resources_servers/equivalence_llm_judge owns, registered into the one table (docs/errors.md is generated from it). */
import { registerErrorCodes } from '@nemo-gym/core/errors';

export const EQUIVALENCE_LLM_JUDGE_ERRORS = registerErrorCodes('resources_servers/equivalence_llm_judge', {
  NG_ERR_TEMPLATE: {
    message: '%s',
    meaning:
      'equivalence_llm_judge: the judge prompt template is not a valid Python `str.format` template (a lone brace, an unknown field, a format spec). Raised at startup.',
    fix: 'Correct the template in the server\'s config; double braces (`{{`, `}}`) stand for literal braces.',
  },
});
