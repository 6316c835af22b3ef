import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  resolve: {
    // Exact matches: a bare package name must not also catch its subpaths.
    alias: [
      { find: /^@nemo-gym\/core$/, replacement: src('./packages/core/src/index.ts') },
      { find: /^@nemo-gym\/core\/capture$/, replacement: src('./packages/core/src/capture/index.ts') },
      { find: /^@nemo-gym\/core\/client$/, replacement: src('./packages/core/src/client/index.ts') },
      { find: /^@nemo-gym\/core\/config$/, replacement: src('./packages/core/src/config/index.ts') },
      { find: /^@nemo-gym\/core\/data$/, replacement: src('./packages/core/src/data/index.ts') },
      { find: /^@nemo-gym\/core\/errors$/, replacement: src('./packages/core/src/errors.ts') },
      { find: /^@nemo-gym\/core\/files$/, replacement: src('./packages/core/src/files/index.ts') },
      { find: /^@nemo-gym\/core\/internal$/, replacement: src('./packages/core/src/internal/index.ts') },
      { find: /^@nemo-gym\/core\/openai$/, replacement: src('./packages/core/src/openai/index.ts') },
      { find: /^@nemo-gym\/core\/py$/, replacement: src('./packages/core/src/py/index.ts') },
      { find: /^@nemo-gym\/core\/rollouts$/, replacement: src('./packages/core/src/rollouts/index.ts') },
      { find: /^@nemo-gym\/core\/server$/, replacement: src('./packages/core/src/server/index.ts') },
      { find: /^@nemo-gym\/core\/testing$/, replacement: src('./packages/core/src/testing/index.ts') },
      { find: /^@nemo-gym\/core\/workers$/, replacement: src('./packages/core/src/workers/index.ts') },
      { find: /^@nemo-gym\/math-verify$/, replacement: src('./packages/math-verify/src/index.ts') },
      { find: /^@nemo-gym\/viewer$/, replacement: src('./packages/viewer/src/index.ts') },
      { find: /^@nemo-gym\/sandbox$/, replacement: src('./packages/sandbox/src/index.ts') },
      { find: /^@nemo-gym\/bridge$/, replacement: src('./packages/bridge/src/index.ts') },
      { find: /^@nemo-gym\/trainer-vllm$/, replacement: src('./packages/trainer-vllm/src/index.ts') },
    ],
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
