import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sharedPath } from '@nemo-gym/core/config';

/** NLTK data folder used by the tests (../shared/nltk_data), or null with the reason printed. */
export function testNltkData(): string | null {
  const dir = sharedPath('nltk_data');
  if (!existsSync(join(dir, 'tokenizers', 'punkt_tab', 'english', 'ortho_context.tab'))) {
    console.log(`skipping: NLTK punkt_tab data not found under ${dir}`);
    return null;
  }
  return dir;
}

export const UPSTREAM_ROLLOUTS = sharedPath('upstream-data', 'instruction_following', 'example_rollouts.jsonl');
export const UPSTREAM_EXAMPLES = sharedPath('upstream-data', 'instruction_following', 'example.jsonl');
