#!/usr/bin/env node
// Writes docs/errors.md from the one error table: core's codes and those every package or server
// registers in its own src/errors.ts. Run after `pnpm build` (it reads the built modules);
// `--check` only says whether the page is current (exit 1 if not).
import { readFileSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { errorOwnerModules, renderErrorsDoc } = await import(pathToFileURL(join(root, 'packages/core/dist/src/errors-doc.js')).href);
for (const rel of errorOwnerModules(root, 'js')) await import(pathToFileURL(join(root, rel)).href);
const page = renderErrorsDoc();
const target = join(root, 'docs/errors.md');
if (process.argv.includes('--check')) {
  const current = readFileSync(target, 'utf8') === page;
  console.log(current ? 'docs/errors.md is current' : 'docs/errors.md is out of date: run `pnpm build && node scripts/errors-doc.mjs`');
  process.exit(current ? 0 : 1);
}
writeFileSync(target, page);
console.log(`wrote ${target}`);
