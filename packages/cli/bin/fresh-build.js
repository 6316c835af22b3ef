// Before an ng-* command loads its compiled code, every workspace package whose sources are newer
// than its dist/ is compiled again (scripts/build-lib.mjs), so ng-run, the servers it starts and
// ng-test run the code as it is in the sources. Nothing happens outside a checkout (no scripts/).
import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

function checkoutRoot() {
  if (process.env.NEMO_GYM_ROOT) return resolve(process.env.NEMO_GYM_ROOT);
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; ) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** Rebuilds the stale packages of the checkout, saying so on stderr; exits 1 when one does not compile. */
export async function freshBuild(command) {
  const root = checkoutRoot();
  const lib = root && join(root, 'scripts', 'build-lib.mjs');
  if (!lib || !existsSync(lib)) return;
  const { stalePackages, buildPackages } = await import(pathToFileURL(lib).href);
  const stale = stalePackages(root);
  if (stale.length === 0) return;
  const started = Date.now();
  const names = stale.map((p) => `${relative(root, p.dir)} (${p.reason})`);
  try {
    await buildPackages(root, stale);
  } catch {
    process.stderr.write(`ng-${command}: ${names.join(', ')} ${stale.length === 1 ? 'is' : 'are'} newer than the build and could not be compiled (errors above). Fix the sources, then run \`pnpm build\`.\n`);
    process.exit(1);
  }
  process.stderr.write(`ng-${command}: rebuilt ${names.join(', ')} in ${Date.now() - started} ms\n`);
}
