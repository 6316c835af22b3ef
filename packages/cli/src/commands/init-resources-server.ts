/**
 * ng-init-resources-server +entrypoint=resources_servers/<name>
 *
 * Writes a new resources server folder (relative to the current directory) from the templates in
 * packages/cli/templates/resources_server: package.json, app.ts, tests/app.test.ts, a config with a
 * domain, 5 example rows, data/.gitignore and a README. An existing folder is refused (upstream exits 0).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from '@nemo-gym/core/errors';
import { TemplatesMissingError } from '../errors.js';
import type { CommandSpec } from '../runtime.js';

/** packages/cli/templates, found from both src/commands (sources) and dist/src/commands (build). */
export function templatesDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..']) {
    const dir = join(here, up, 'templates');
    if (existsSync(join(dir, 'resources_server'))) return dir;
  }
  throw new TemplatesMissingError(here);
}

/** "my_env" -> "MyEnv" (split on "_", capitalize each part), as upstream names the classes. */
export function pascalCase(name: string): string {
  return name
    .split('_')
    .map((p) => (p ? p[0]!.toUpperCase() + p.slice(1).toLowerCase() : ''))
    .join('');
}

export interface ParsedEntrypoint {
  /** The folder as given (normalized, forward slashes). */
  dir: string;
  /** parts[0], e.g. resources_servers */
  kind: string;
  /** parts[1] as given */
  folder: string;
}

/** Checks `entrypoint` is a relative path with exactly 2 parts, e.g. `resources_servers/my_env`. */
export function parseEntrypoint(value: unknown, command: string): ParsedEntrypoint {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new UsageError(`${command} needs +entrypoint=<kind>/<name>, e.g. +entrypoint=resources_servers/my_env`);
  }
  if (isAbsolute(value)) {
    throw new UsageError(`entrypoint must be relative to the repository root (like resources_servers/my_env), got the absolute path ${value}`);
  }
  const norm = normalize(value).split(sep).join('/').replace(/\/+$/, '');
  const parts = norm.split('/');
  if (parts.length !== 2 || parts.some((p) => p === '' || p === '.' || p === '..')) {
    throw new UsageError(`entrypoint must have exactly 2 parts, <kind>/<name> (e.g. resources_servers/my_env), got ${JSON.stringify(value)}`);
  }
  return { dir: norm, kind: parts[0]!, folder: parts[1]! };
}

function render(template: string, vars: Record<string, string>): string {
  let out = template;
  for (const [k, v] of Object.entries(vars)) out = out.split(k).join(v);
  return out;
}

/** Folder (below the server's data/) where the suggested ng-prepare-data run collates the example rows. */
export const PREPARED_DIR = 'data/prepared';

/** The ng-prepare-data command that writes a server's data/example_metrics.json (works on a fresh clone, no env.yaml). */
export function examplePrepareCommand(dir: string, name: string): string {
  return (
    `pnpm ng-prepare-data "+config_paths=[responses_api_models/openai_model/configs/openai_model.yaml,${dir}/configs/${name}.yaml]" ` +
    `+output_dirpath=${dir}/${PREPARED_DIR} +mode=example_validation`
  );
}

/**
 * What to run after the scaffold, in order, from the repository root; each line works on a fresh
 * clone (a test runs them). Lines starting with two spaces and "pnpm " are the commands.
 */
export function nextSteps(dir: string, name: string): string {
  return (
    `Next steps, in order, from the repository root:\n` +
    `  pnpm install\n` +
    `      links the new workspace package.\n` +
    `  pnpm build\n` +
    `      compiles it (ng-run starts ${dir}/dist/app.js).\n` +
    `  pnpm ng-test +entrypoint=${dir}\n` +
    `      runs its tests.\n` +
    `  ${examplePrepareCommand(dir, name)}\n` +
    `      checks the 5 example rows and writes ${dir}/data/example_metrics.json.\n` +
    `  pnpm ng-test +entrypoint=${dir} +should_validate_data=true\n` +
    `      runs its tests and the data checks.\n` +
    `Then set \`domain\` in configs/${name}.yaml, write your tools and verify in app.ts, and collect\n` +
    `example rollouts with a model (see "Commands" in ${dir}/README.md).\n`
  );
}

export async function initResourcesServerMain(config: Record<string, unknown>): Promise<number> {
  const ep = parseEntrypoint(config.entrypoint, 'ng-init-resources-server');
  const cwd = process.cwd();
  const target = join(cwd, ep.dir);
  if (existsSync(target)) {
    // Upstream prints a line and exits 0, which a script takes for a fresh folder.
    throw new UsageError(`${ep.dir} already exists; nothing was written. Choose another name, or move the folder away first.`);
  }
  if (ep.kind !== 'resources_servers') {
    throw new UsageError(`ng-init-resources-server creates resources servers only: entrypoint must start with resources_servers/, got ${JSON.stringify(ep.dir)}`);
  }
  const name = ep.folder.toLowerCase();
  if (!/^[a-z][a-z0-9_]*$/.test(name)) {
    throw new UsageError(
      `the server name ${JSON.stringify(ep.folder)} must start with a letter and hold only letters, digits and underscores (it becomes the package name @nemo-gym/${name} and config keys like ${name}_resources_server)`,
    );
  }
  const vars = { __NAME__: name, __TITLE__: pascalCase(name) };
  const src = join(templatesDir(), 'resources_server');
  const files: [string, string][] = [
    ['package.json.tmpl', 'package.json'],
    ['app.ts.tmpl', 'app.ts'],
    ['tests/app.test.ts.tmpl', 'tests/app.test.ts'],
    ['configs/config.yaml.tmpl', `configs/${name}.yaml`],
    ['data/example.jsonl.tmpl', 'data/example.jsonl'],
    ['data/gitignore.tmpl', 'data/.gitignore'],
    ['README.md.tmpl', 'README.md'],
  ];
  const written: string[] = [];
  for (const [from, to] of files) {
    const text = render(readFileSync(join(src, from), 'utf8'), vars);
    const out = join(target, to);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, text);
    written.push(`${ep.dir}/${to}`);
  }
  process.stdout.write(`Created ${ep.dir}:\n${written.map((w) => `- ${w}`).join('\n')}\n\n${nextSteps(ep.dir, name)}`);
  return 0;
}

export const initResourcesServerCommand: CommandSpec = {
  name: 'init-resources-server',
  summary: 'Create a new resources server folder from the template',
  flags: [
    {
      name: 'entrypoint',
      type: 'str',
      required: true,
      description: 'Folder to create, relative to the repository root, with 2 parts: resources_servers/<name>.',
    },
  ],
  main: (config) => initResourcesServerMain(config),
};
