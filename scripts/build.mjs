#!/usr/bin/env node
// Transpiles every workspace package's TypeScript into <package>/dist/, keeping the
// folder structure (<pkg>/src/x.ts -> <pkg>/dist/src/x.js, <pkg>/app.ts -> <pkg>/dist/app.js).
// Code for browsers sits in <pkg>/src/browser/: each file there is bundled with what it imports
// into one script, <pkg>/dist/src/browser/<name>.js, for a server of the package to send.
// Type checking is separate (`pnpm typecheck`); this step only has to be fast.
import { build } from 'esbuild';
import { readdirSync, existsSync, rmSync, statSync } from 'node:fs';
import { join, relative, dirname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const groups = ['packages', 'responses_api_models', 'resources_servers', 'responses_api_agents'];
const skipAnywhere = new Set(['node_modules', 'dist', '.venv']);
// Only at a package's top level: these hold tests and data, not sources (src/data/ is code).
const skipTop = new Set(['tests', 'test', 'data', 'configs', 'templates']);

function collect(dir, out, top = true) {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    const st = statSync(full);
    if (st.isDirectory()) {
      if (!skipAnywhere.has(name) && !(top && skipTop.has(name)) && !name.startsWith('.')) collect(full, out, false);
    } else if (name.endsWith('.ts') && !name.endsWith('.d.ts') && !name.endsWith('.test.ts')) {
      out.push(full);
    }
  }
  return out;
}

const started = Date.now();
let files = 0;
const jobs = [];
for (const group of groups) {
  const groupDir = join(root, group);
  if (!existsSync(groupDir)) continue;
  for (const pkg of readdirSync(groupDir)) {
    const pkgDir = join(groupDir, pkg);
    if (!existsSync(join(pkgDir, 'package.json'))) continue;
    const browserDir = join(pkgDir, 'src', 'browser');
    const all = collect(pkgDir, []);
    const entryPoints = all.filter((f) => !f.startsWith(browserDir + sep));
    const browserEntries = all.filter((f) => dirname(f) === browserDir);
    if (all.length === 0) continue;
    const outdir = join(pkgDir, 'dist');
    rmSync(outdir, { recursive: true, force: true });
    files += all.length;
    if (browserEntries.length > 0) {
      jobs.push(
        build({
          entryPoints: browserEntries,
          outdir: join(outdir, 'src', 'browser'),
          bundle: true,
          platform: 'browser',
          format: 'iife',
          target: 'es2020',
          logLevel: 'warning',
        }).catch((err) => {
          console.error(`browser bundle failed in ${relative(root, pkgDir)}`);
          throw err;
        }),
      );
    }
    jobs.push(
      build({
        entryPoints,
        outdir,
        outbase: pkgDir,
        bundle: false,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        sourcemap: 'inline',
        logLevel: 'warning',
      }).catch((err) => {
        console.error(`build failed in ${relative(root, pkgDir)}`);
        throw err;
      }),
    );
  }
}
await Promise.all(jobs);
console.log(`built ${files} files in ${Date.now() - started} ms`);
