/**
 * ng-test +entrypoint=<kind>/<name> [+should_validate_data=true]
 *   Runs that folder's vitest tests (`vitest run <folder>` from the current directory, the
 *   repository root) and optionally checks the folder's data files.
 * ng-test-all [+fail_on_total_and_test_mismatch=true]
 *   Runs every server folder that has a README.md, validates its data, and prints a summary.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { NgError, UsageError } from '@nemo-gym/core/errors';
import { CLI_ERRORS, TestRunError } from '../errors.js';
import type { CommandSpec } from '../runtime.js';
import { examplePrepareCommand, parseEntrypoint } from './init-resources-server.js';
import { parse as parseYaml } from 'yaml';
import { checkRowAgainst, noToolsWarning, readLines, rowChecksOf } from '@nemo-gym/core/data';
import { describeServerFolder } from '../row-checks.js';

/** Exit code for "no tests were collected" (pytest's code, which ng-test-all keys on). */
export const NO_TESTS_EXIT_CODE = 5;

/** A failed data check, with the message that says how to fix it. */
export class DataValidationError extends NgError {
  constructor(message: string) {
    super(CLI_ERRORS.NG_ERR_DATA_VALIDATION, message);
  }
}

function toBool(value: unknown, flag: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'True' || value === 1 || value === '1') return true;
  if (value === 'false' || value === 'False' || value === 0 || value === '0') return false;
  throw new UsageError(`+${flag} must be true or false, got ${JSON.stringify(value)}`);
}

function hasTestFiles(dir: string): boolean {
  const walk = (d: string): boolean => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return false;
    }
    for (const n of names) {
      if (n === 'node_modules' || n === 'dist' || n.startsWith('.')) continue;
      const full = join(d, n);
      if (statSync(full).isDirectory()) {
        if (walk(full)) return true;
      } else if (/\.(test|spec)\.[cm]?[jt]s$/.test(n)) return true;
    }
    return false;
  };
  return walk(dir);
}

/** The vitest CLI script as installed for the workspace in `cwd`. */
function vitestBin(cwd: string): string {
  const req = createRequire(join(cwd, 'package.json'));
  let pkgJson: string;
  try {
    pkgJson = req.resolve('vitest/package.json');
  } catch {
    throw new TestRunError(`vitest is not installed for ${cwd}; run \`pnpm install\` at the repository root first`);
  }
  const pkg = JSON.parse(readFileSync(pkgJson, 'utf8')) as { bin?: string | Record<string, string> };
  const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.vitest ?? 'vitest.mjs';
  return join(dirname(pkgJson), bin);
}

/** Dependencies of the folder's package.json that Node cannot find from the folder. */
function unlinkedDependencies(dir: string): string[] {
  const pkgPath = join(dir, 'package.json');
  if (!existsSync(pkgPath)) return [];
  let deps: Record<string, string> = {};
  try {
    deps = (JSON.parse(readFileSync(pkgPath, 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {};
  } catch {
    return [];
  }
  return Object.keys(deps).filter((dep) => {
    for (let d = dir; ; d = dirname(d)) {
      if (existsSync(join(d, 'node_modules', dep))) return false;
      if (dirname(d) === d) return true;
    }
  });
}

function run(command: string, args: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    // A test runner's own variables (when ng-test itself runs under vitest) must not leak into the child.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'TINYPOOL_WORKER_ID'));
    // Its output is passed on through this process's streams (colours kept on a terminal), so
    // whoever holds those streams — a test of ng-test — sees it too.
    if (process.stdout.isTTY && env.FORCE_COLOR === undefined) env.FORCE_COLOR = '1';
    const child = spawn(command, args, { cwd, stdio: ['inherit', 'pipe', 'pipe'], env });
    child.stdout.on('data', (d: Buffer) => process.stdout.write(d));
    child.stderr.on('data', (d: Buffer) => process.stderr.write(d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/** The workspace packages under `cwd` (the server kinds and packages/), by package name. */
function workspacePackages(cwd: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const group of [...KINDS, 'packages']) {
    const groupDir = join(cwd, group);
    if (!existsSync(groupDir)) continue;
    for (const n of readdirSync(groupDir)) {
      try {
        const name = (JSON.parse(readFileSync(join(groupDir, n, 'package.json'), 'utf8')) as { name?: unknown }).name;
        if (typeof name === 'string') out.set(name, join(groupDir, n));
      } catch {
        // not a package
      }
    }
  }
  return out;
}

/**
 * Links a new folder's missing dependencies the way pnpm links a workspace package: a workspace
 * package to its folder, anything else to the copy the root or another workspace package already
 * has installed. Nothing is installed and the lock file is not touched (`pnpm install` would
 * rewrite it for the new package). Returns the dependencies it could not find.
 */
function linkDependencies(dir: string, cwd: string, missing: string[]): string[] {
  const packages = workspacePackages(cwd);
  const holders = [cwd, ...packages.values()];
  const left: string[] = [];
  for (const dep of missing) {
    const own = packages.get(dep);
    const installed = own ? undefined : holders.map((h) => join(h, 'node_modules', dep)).find((p) => existsSync(p));
    const target = own ?? (installed && realpathSync(installed));
    if (!target) {
      left.push(dep);
      continue;
    }
    const link = join(dir, 'node_modules', dep);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(relative(dirname(link), target), link, 'dir');
  }
  return left;
}

/**
 * Runs the folder's tests; returns vitest's exit code, or NO_TESTS_EXIT_CODE when the folder has no
 * test files. A freshly created server's dependencies are linked first (linkDependencies), as
 * upstream sets up a server's environment before testing.
 */
export async function runFolderTests(dir: string, cwd = process.cwd()): Promise<number> {
  const abs = join(cwd, dir);
  if (!hasTestFiles(abs)) return NO_TESTS_EXIT_CODE;
  const missing = unlinkedDependencies(abs);
  if (missing.length) {
    const left = linkDependencies(abs, cwd, missing);
    process.stdout.write(`${dir}: linked its dependencies (${missing.filter((d) => !left.includes(d)).join(', ') || 'none'}) from the workspace\n`);
    if (left.length) throw new TestRunError(`${dir} depends on ${left.join(', ')}, which no workspace package has installed; add it with \`pnpm add\` in ${dir}, or run \`pnpm install\` at ${cwd}, then retry`);
  }
  // The trailing slash keeps vitest's path filter from also matching e.g. <dir>_v2.
  return run(process.execPath, [vitestBin(cwd), 'run', `${dir}/`], cwd);
}

function countLines(path: string): number {
  // Python counts lines as `sum(1 for _ in f)`: a last line without "\n" still counts.
  const text = readFileSync(path, 'utf8');
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new DataValidationError(message);
}

/** Upstream's data checks for a resources server folder (no-op for other kinds). */
export function validateData(dir: string, cwd = process.cwd()): void {
  const ep = parseEntrypoint(dir, 'ng-test');
  if (ep.kind !== 'resources_servers') return;
  const name = ep.folder;
  const abs = (p: string) => join(cwd, p);

  const examplePath = `${ep.dir}/data/example.jsonl`;
  check(
    existsSync(abs(examplePath)),
    `A jsonl file containing 5 examples is required for the ${ep.dir} resources server. The file must be found at ${examplePath}. Usually this example data is just the first 5 examples of your train dataset.`,
  );
  const count = countLines(abs(examplePath));
  check(count === 5, `Expected 5 examples at ${examplePath} but got ${count}.`);

  const metricsPath = `${ep.dir}/data/example_metrics.json`;
  check(
    existsSync(abs(metricsPath)),
    `You must run the example data validation for the example data found at ${examplePath}.
Your command should look something like the following (add the config files your server needs):
\`\`\`bash
${examplePrepareCommand(ep.dir, name)}
\`\`\`
and your config must include an agent server config with an example dataset like:
\`\`\`yaml
multineedle_simple_agent:
  responses_api_agents:
    simple_agent:
      ...
      datasets:
      - name: example
        type: example
        jsonl_fpath: resources_servers/multineedle/data/example.jsonl
\`\`\`

See \`resources_servers/multineedle/configs/multineedle.yaml\` for a full config example.
`,
  );
  let metrics: Record<string, unknown>;
  try {
    metrics = JSON.parse(readFileSync(abs(metricsPath), 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new DataValidationError(`${metricsPath} is not valid JSON (${(err as Error).message}); regenerate it with ng-prepare-data +mode=example_validation.`);
  }
  check(metrics['Number of examples'] === 5, `Expected 5 examples in the metrics at ${metricsPath}, but got ${JSON.stringify(metrics['Number of examples'])}`);

  const dataDir = abs(`${ep.dir}/data`);
  const conflicts = existsSync(dataDir)
    ? readdirSync(dataDir)
        .filter((n) => n.includes('conflict'))
        .sort()
        .map((n) => `${ep.dir}/data/${n}`)
    : [];
  check(conflicts.length === 0, `Found ${conflicts.length} conflicting paths: ${conflicts.map((c) => `\n- ${c}`).join('')}`);

  const rolloutsPath = `${ep.dir}/data/example_rollouts.jsonl`;
  if (!existsSync(abs(rolloutsPath))) {
    // A new server has no rollouts until a model ran it: the example data is valid, the rollouts are still to come.
    process.stdout.write(
      `The example data for ${ep.dir} has been validated. Example rollouts are not collected yet: run the example data through your agent and keep the rollouts at \`${rolloutsPath}\`.

Your commands should look something like:
\`\`\`bash
# Server spinup
${name}_config_paths="responses_api_models/openai_model/configs/openai_model.yaml,\\
${ep.dir}/configs/${name}.yaml"
pnpm ng-run "+config_paths=[\${${name}_config_paths}]"

# Collect the rollouts
pnpm ng-collect-rollouts +agent_name=${name}_simple_agent \\
    +input_jsonl_fpath=${examplePath} \\
    +output_jsonl_fpath=${rolloutsPath} \\
    +limit=null

# View your rollouts
pnpm ng-viewer +jsonl_fpath=${rolloutsPath}
\`\`\`
`,
    );
    return;
  }
  const rollouts = countLines(abs(rolloutsPath));
  check(rollouts === 5, `Expected 5 example rollouts in ${rolloutsPath}, but got ${rollouts}`);

  process.stdout.write(`The data for ${ep.dir} has been successfully validated!\n`);
}

/** True when an agent block in the folder's configs offers the server's tools itself (`offer_server_tools: true`). */
function configsOfferTools(configsDir: string): boolean {
  if (!existsSync(configsDir)) return false;
  const offers = (v: unknown): boolean =>
    v !== null && typeof v === 'object' && (Object.entries(v).some(([k, x]) => (k === 'offer_server_tools' && x === true) || offers(x)));
  return readdirSync(configsDir).some((n) => {
    if (!/\.ya?ml$/.test(n)) return false;
    try {
      return offers(parseYaml(readFileSync(join(configsDir, n), 'utf8')));
    } catch {
      return false;
    }
  });
}

/**
 * The example rows against the server's own verify request and tools (row-checks.ts): a misspelt
 * or missing task field fails, a row that offers none of the server's tools is warned about.
 */
export async function checkExampleRows(dir: string, cwd = process.cwd()): Promise<void> {
  const ep = parseEntrypoint(dir, 'ng-test');
  const examplePath = `${ep.dir}/data/example.jsonl`;
  if (ep.kind !== 'resources_servers' || !existsSync(join(cwd, examplePath))) return;
  const description = await describeServerFolder(join(cwd, ep.dir));
  if (!description) return;
  const checks = rowChecksOf(`resources server ${ep.folder}`, description.verifyRequestSchema, description.tools.map((t) => t.name), configsOfferTools(join(cwd, ep.dir, 'configs')));
  const problems: string[] = [];
  let toolless = 0;
  for await (const { lineNo, text } of readLines(join(cwd, examplePath))) {
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch {
      continue; // the row checks of ng-prepare-data report it
    }
    if (row === null || typeof row !== 'object' || Array.isArray(row)) continue;
    const fit = checkRowAgainst(Object.keys(row), (row as { responses_create_params?: unknown }).responses_create_params, checks);
    for (const p of fit.problems) problems.push(`line ${lineNo}: \`${p.field}\` ${p.message}`);
    if (fit.noTools) toolless++;
  }
  check(problems.length === 0, `The rows of ${examplePath} do not fit the verify request of ${ep.dir}:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  if (toolless > 0) process.stdout.write(`${noToolsWarning(checks, toolless, examplePath)}\n`);
}

export async function testMain(config: Record<string, unknown>): Promise<number> {
  const ep = parseEntrypoint(config.entrypoint, 'ng-test');
  const shouldValidate = toBool(config.should_validate_data, 'should_validate_data');
  const cwd = process.cwd();
  if (!existsSync(join(cwd, ep.dir))) {
    throw new UsageError(`${ep.dir} does not exist under ${cwd}; run ng-test from the repository root with +entrypoint=<kind>/<name> of an existing folder`);
  }
  const code = await runFolderTests(ep.dir, cwd);
  if (code === NO_TESTS_EXIT_CODE) process.stdout.write(`No test files found in ${ep.dir} (expected tests/*.test.ts).\n`);
  if (code !== 0) {
    process.stdout.write(`You can run detailed tests via \`npx vitest run ${ep.dir}\`.\n`);
    return code;
  }
  if (shouldValidate) {
    try {
      await checkExampleRows(ep.dir, cwd);
      validateData(ep.dir, cwd);
    } catch (err) {
      if (err instanceof DataValidationError) {
        process.stderr.write(`Data validation failed for ${ep.dir}:\n${err.message}\n`);
        return 1;
      }
      throw err;
    }
  }
  return 0;
}

const KINDS = ['resources_servers', 'responses_api_agents', 'responses_api_models'];

function pathList(paths: string[]): string {
  return paths.map((p) => `\n- ${p}`).join('');
}

function pct(count: number, total: number): string {
  return `${count} / ${total} (${total ? ((100 * count) / total).toFixed(2) : 'nan'}%)`;
}

export async function testAllMain(config: Record<string, unknown>): Promise<number> {
  const failOnMismatch = toBool(config.fail_on_total_and_test_mismatch, 'fail_on_total_and_test_mismatch');
  const cwd = process.cwd();
  const candidates: string[] = [];
  for (const kind of KINDS) {
    const dir = join(cwd, kind);
    if (!existsSync(dir)) continue;
    for (const n of readdirSync(dir).sort()) {
      if (n.includes('pycache') || n === 'node_modules' || n.startsWith('.')) continue;
      candidates.push(`${kind}/${n}`);
    }
  }
  process.stdout.write(`Found ${candidates.length} total modules:${pathList(candidates)}\n\n`);
  const dirs = candidates.filter((p) => existsSync(join(cwd, p, 'README.md')));
  process.stdout.write(`Found ${dirs.length} modules to test:${pathList(dirs)}\n\n`);

  const passed: string[] = [];
  const failed: string[] = [];
  const missing: string[] = [];
  const invalid: string[] = [];
  for (const [i, dir] of dirs.entries()) {
    process.stderr.write(`Running tests: ${i + 1}/${dirs.length} ${dir}\n`);
    const code = await runFolderTests(dir, cwd);
    if (code === 0) passed.push(dir);
    else if (code === 1) failed.push(dir);
    else if (code === NO_TESTS_EXIT_CODE) missing.push(dir);
    else {
      throw new TestRunError(
        `Hit unrecognized exit code ${code} while running tests for ${dir}.\nYou can rerun just these tests using \`ng-test +entrypoint=${dir}\` or run detailed tests via \`npx vitest run ${dir}\`.`,
      );
    }
    try {
      await checkExampleRows(dir, cwd);
      validateData(dir, cwd);
    } catch (err) {
      if (err instanceof DataValidationError) invalid.push(dir);
      else throw err;
    }
  }

  process.stdout.write(`Found ${candidates.length} total modules:${pathList(candidates)}

Found ${dirs.length} modules to test:${pathList(dirs)}

Tests passed ${pct(passed.length, dirs.length)}:${pathList(passed)}

Tests failed ${pct(failed.length, dirs.length)}:${pathList(failed)}

Tests missing ${pct(missing.length, dirs.length)}:${pathList(missing)}

Data validation failed ${pct(invalid.length, dirs.length)}:${pathList(invalid)}

`);
  if (failed.length || missing.length) {
    process.stdout.write(`You can rerun just the server with failed or missing tests like:
\`\`\`bash
ng-test +entrypoint=${[...failed, ...missing][0]}
\`\`\`

`);
  }
  if (invalid.length) {
    process.stdout.write(`You can rerun just the server with failed data validation like:
\`\`\`bash
ng-test +entrypoint=${invalid[0]} +should_validate_data=true
\`\`\`

`);
  }
  if (failOnMismatch && candidates.length !== dirs.length) {
    const extra = candidates.filter((c) => !dirs.includes(c));
    process.stderr.write(
      `Mismatch on the number of total modules found (${candidates.length}) and the number of actual modules tested (${dirs.length})!\n\nExtra candidate paths:${pathList(extra)}\n`,
    );
    return 1;
  }
  return failed.length || missing.length || invalid.length ? 1 : 0;
}

export const testCommand: CommandSpec = {
  name: 'test',
  summary: "Run one server folder's tests (and optionally check its data)",
  flags: [
    { name: 'entrypoint', type: 'str', required: true, description: 'Folder to test, relative with 2 parts, e.g. resources_servers/simple_weather.' },
    { name: 'should_validate_data', type: 'bool', description: 'Whether to validate the example data (examples, metrics, rollouts) of this server. Default false.' },
  ],
  main: (config) => testMain(config),
};

export const testAllCommand: CommandSpec = {
  name: 'test-all',
  summary: 'Run the tests of every server folder with a README and validate their data',
  flags: [
    {
      name: 'fail_on_total_and_test_mismatch',
      type: 'bool',
      description: 'Fail when some server folders have no README.md (so they are not tested). Default false.',
    },
  ],
  main: (config) => testAllMain(config),
};
