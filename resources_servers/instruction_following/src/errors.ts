/** The error codes resources_servers/instruction_following owns, registered into the one table (docs/errors.md is generated from it). */
import { registerErrorCodes } from '@nemo-gym/core/errors';

export const INSTRUCTION_FOLLOWING_ERRORS = registerErrorCodes('resources_servers/instruction_following', {
  NG_ERR_PUNKT_DATA_NOT_FOUND: {
    message: '%s',
    meaning:
      'instruction_following: NLTK\'s English Punkt parameters (`punkt_tab`) were not found in any of the folders the message lists.',
    fix: 'Install NLTK\'s `punkt_tab` data into one of those folders, or set `NLTK_DATA` or the server\'s `nltk_data_dir` to a folder that holds it.',
  },
  NG_ERR_LANGDETECT: {
    message: '%s',
    meaning:
      'instruction_following: language detection could not run (no language profiles found, or a text without features, which the Python library also rejects).',
    fix: 'For missing profiles, point the profile folder at one with the library\'s profiles or reinstall the server\'s dependencies (`pnpm install`); a text without features is answered as upstream answers it.',
  },
});
