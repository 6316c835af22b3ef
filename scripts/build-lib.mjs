// The build of the workspace, as a library: which packages there are, which of them are stale,
// and the esbuild step that compiles a package into <package>/dist/. scripts/build.mjs builds all
// of them; the ng-* commands (packages/cli/bin) build the stale ones before they run, so a server
// edited without `pnpm build` never runs from an old dist/.
//
// A package is stale when its dist/ has no build record, when the list of its sources differs
// from the recorded one (a file added or removed), or when a source is newer than the build.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

const GROUPS = ['packages', 'responses_api_models', 'resources_servers', 'responses_api_agents'];
const SKIP_ANYWHERE = new Set(['node_modules', 'dist', '.venv']);
// Only at a package's top level: these hold tests and data, not sources (src/data/ is code).
const SKIP_TOP = new Set(['tests', 'test', 'data', 'configs', 'templates']);
/** The build record in each dist/: when the build started and which sources it compiled. */
export const BUILD_RECORD = '.build.json';

function collect(dir, out, top = true) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const name = entry.name;
    const full = join(dir, name);
    if (entry.isDirectory()) {
      if (!SKIP_ANYWHERE.has(name) && !(top && SKIP_TOP.has(name)) && !name.startsWith('.')) collect(full, out, false);
    } else if (name.endsWith('.ts') && !name.endsWith('.d.ts') && !name.endsWith('.test.ts')) {
      out.push(full);
    }
  }
  return out;
}

/** Every workspace package with TypeScript sources: `{ dir, sources }`. */
export function workspacePackages(root) {
  const out = [];
  for (const group of GROUPS) {
    const groupDir = join(root, group);
    if (!existsSync(groupDir)) continue;
    for (const pkg of readdirSync(groupDir)) {
      const dir = join(groupDir, pkg);
      if (!existsSync(join(dir, 'package.json'))) continue;
      const sources = collect(dir, []);
      if (sources.length > 0) out.push({ dir, sources });
    }
  }
  return out;
}

/** Why `pkg` must be built again, or null when its dist/ is current. */
export function staleReason(pkg) {
  let record;
  try {
    record = JSON.parse(readFileSync(join(pkg.dir, 'dist', BUILD_RECORD), 'utf8'));
  } catch {
    return 'not built';
  }
  const names = pkg.sources.map((f) => relative(pkg.dir, f)).sort();
  const built = Array.isArray(record.sources) ? record.sources : [];
  if (names.length !== built.length || names.some((n, i) => n !== built[i])) return 'sources added or removed';
  for (const f of pkg.sources) {
    if (statSync(f).mtimeMs > record.started_ms) return `${relative(pkg.dir, f)} changed`;
  }
  return null;
}

/** The packages whose dist/ is older than their sources, each with the reason. */
export function stalePackages(root) {
  const out = [];
  for (const pkg of workspacePackages(root)) {
    const reason = staleReason(pkg);
    if (reason) out.push({ ...pkg, reason });
  }
  return out;
}

/** Compiles the given packages (from workspacePackages) into their dist/ folders. */
export async function buildPackages(root, pkgs) {
  await Promise.all(pkgs.map((pkg) => buildPackage(root, pkg)));
  return pkgs.reduce((n, p) => n + p.sources.length, 0);
}

async function buildPackage(root, { dir, sources }) {
  // Loaded only to build: a command that finds nothing stale does not pay for it.
  const { build } = await import('esbuild');
  // Recorded before compiling: a source saved during the build makes the package stale again.
  const started = Date.now();
  const browserDir = join(dir, 'src', 'browser');
  const entryPoints = sources.filter((f) => !f.startsWith(browserDir + sep));
  const browserEntries = sources.filter((f) => dirname(f) === browserDir);
  // Compiled beside dist/ and swapped in when complete, so a process running from dist/ (or a
  // second command rebuilding the same package) never sees a half-written folder.
  const outdir = join(dir, `.dist-${process.pid}`);
  rmSync(outdir, { recursive: true, force: true });
  const jobs = [];
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
        console.error(`browser bundle failed in ${relative(root, dir)}`);
        throw err;
      }),
    );
  }
  jobs.push(
    build({
      entryPoints,
      outdir,
      outbase: dir,
      bundle: false,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      sourcemap: 'inline',
      logLevel: 'warning',
    }).catch((err) => {
      console.error(`build failed in ${relative(root, dir)}`);
      throw err;
    }),
  );
  try {
    await Promise.all(jobs);
    const record = { started_ms: started, sources: sources.map((f) => relative(dir, f)).sort() };
    writeFileSync(join(outdir, BUILD_RECORD), `${JSON.stringify(record)}\n`);
    swapIn(outdir, join(dir, 'dist'));
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

function swapIn(fresh, dist) {
  const old = `${fresh}-old`;
  rmSync(old, { recursive: true, force: true });
  try {
    renameSync(dist, old);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  try {
    renameSync(fresh, dist);
  } catch (err) {
    // Another build of the same package swapped its (equally fresh) output in first.
    if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
  }
  rmSync(old, { recursive: true, force: true });
}
