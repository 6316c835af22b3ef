import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The Python-regex translator lives in mcqa (with its tests); this package keeps an identical copy
// because a server package cannot import another one's sources.
describe('src/pyregex.ts', () => {
  it('is identical to the tested mcqa translator', () => {
    const here = readFileSync(new URL('../src/pyregex.ts', import.meta.url), 'utf8');
    const tested = readFileSync(new URL('../../mcqa/src/pyregex.ts', import.meta.url), 'utf8');
    expect(here).toBe(tested);
  });
});
