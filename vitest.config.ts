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

/**
 * Tests that cannot run here (a tool, a service or reference data is absent) say why when their
 * file loads; those lines are gathered and printed once, as one short list at the end of the run.
 * The docs test's blocks that are only for reading (`<page>.md:<line>: not run (why)`) are counted
 * per page in one line of that list.
 */
const SKIP_LINE = /\bskip(?:s|ped|ping)?\b|\bnot run \(/i;
const DOC_BLOCK = /^(\S+\.md):\d+: not run \(/;
const skipReasons = new Map<string, number>();
const docBlocks = new Map<string, number>();
const skipSummary = {
  onTestRunEnd(): void {
    const lines = [...skipReasons].map(([reason, n]) => `  - ${reason}${n > 1 ? ` (×${n})` : ''}`);
    const blocks = [...docBlocks.values()].reduce((a, b) => a + b, 0);
    if (blocks > 0) {
      lines.push(`  - ${blocks} docs blocks that need another machine or service, or are shown for reading (${[...docBlocks].map(([page, n]) => `${page} ${n}`).join(', ')}); NG_TEST_OUTPUT=all lists them`);
    }
    if (lines.length > 0) process.stdout.write(`\nNot run on this machine (the tests concerned pass as skipped):\n${lines.join('\n')}\n`);
  },
};

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
    // What a test writes straight to stdout/stderr is shown only when it fails (quiet-output.ts).
    setupFiles: ['tests/helpers/quiet-output.ts'],
    onConsoleLog(log: string): false | void {
      if (process.env.NG_TEST_OUTPUT === 'all' || !SKIP_LINE.test(log)) return;
      for (const line of log.trim().split('\n')) {
        const page = DOC_BLOCK.exec(line)?.[1];
        if (page) docBlocks.set(page, (docBlocks.get(page) ?? 0) + 1);
        else skipReasons.set(line, (skipReasons.get(line) ?? 0) + 1);
      }
      return false;
    },
    reporters: ['default', skipSummary],
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
