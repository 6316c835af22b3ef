import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  resolve: {
    alias: {
      '@nemo-gym/core': src('./packages/core/src/index.ts'),
      '@nemo-gym/math-verify': src('./packages/math-verify/src/index.ts'),
      '@nemo-gym/viewer': src('./packages/viewer/src/index.ts'),
      '@nemo-gym/sandbox': src('./packages/sandbox/src/index.ts'),
    },
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
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
