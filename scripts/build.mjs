#!/usr/bin/env node
// Transpiles every workspace package's TypeScript into <package>/dist/, keeping the
// folder structure (<pkg>/src/x.ts -> <pkg>/dist/src/x.js, <pkg>/app.ts -> <pkg>/dist/app.js).
// Code for browsers sits in <pkg>/src/browser/: each file there is bundled with what it imports
// into one script, <pkg>/dist/src/browser/<name>.js, for a server of the package to send.
// Type checking is separate (`pnpm typecheck`); this step only has to be fast.
// The steps are in build-lib.mjs, which the ng-* commands use to rebuild stale packages.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPackages, workspacePackages } from './build-lib.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const started = Date.now();
const files = await buildPackages(root, workspacePackages(root));
console.log(`built ${files} files in ${Date.now() - started} ms`);
