import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '@nemo-gym/core/config';

/**
 * A compiled module of the repository (`pnpm build` first), e.g. a server's `dist/app.js`. The
 * benchmarks reach servers this way, so no server depends on this package or it on them.
 */
export async function importBuilt<T>(path: string): Promise<T> {
  return (await import(pathToFileURL(join(repoRoot(), path)).href)) as T;
}
