import { defineConfig } from 'vitest/config';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packagesDir = fileURLToPath(new URL('./packages/', import.meta.url));

/**
 * Tests run on the sources: each subpath a workspace library exports (its package.json `exports`,
 * the one list of them) is aliased to the TypeScript file named by its `types` condition.
 * Exact matches: a bare package name must not also catch its subpaths.
 */
function sourceAliases(): { find: RegExp; replacement: string }[] {
  const aliases: { find: RegExp; replacement: string }[] = [];
  for (const dir of readdirSync(packagesDir)) {
    const manifestPath = join(packagesDir, dir, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { name: string; exports?: Record<string, { types?: string }> };
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (target.types === undefined) continue;
      const specifier = manifest.name + subpath.slice(1);
      aliases.push({ find: new RegExp(`^${specifier.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`), replacement: join(packagesDir, dir, target.types) });
    }
  }
  return aliases;
}

export default defineConfig({
  resolve: {
    alias: sourceAliases(),
  },
  test: {
    include: [
      'packages/*/test/**/*.test.ts',
      'responses_api_models/*/tests/**/*.test.ts',
      'resources_servers/*/tests/**/*.test.ts',
      'responses_api_agents/*/tests/**/*.test.ts',
      'tests/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', '**/dist/**'],
    // A guard against hangs, not a speed check: generous enough for a machine under load.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // Each of the two worker processes runs file after file, loading the shared modules once
    // (with a fresh process per file, loading them was about a third of the suite's time).
    // A test file that changes process-wide state (env, cwd, spies) restores it in its own hooks.
    isolate: false,
  },
});
