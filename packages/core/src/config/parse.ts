/**
 * Builds the global config dict the way upstream's GlobalConfigDictParser does:
 * config files (recursively through `config_paths`), then env.yaml at the repo root,
 * then command-line overrides; server instances recognised, refs checked, hosts and
 * ports filled in, and the head server defaulted to DEFAULT_HOST:DEFAULT_HEAD_PORT.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument, parse as parseYaml } from 'yaml';
import { ConfigError } from '../errors.js';
import { InterpolationError, resolveValue } from './interpolate.js';
import { asServerRef, checkInstance, isAlmostServer, RESERVED_KEYS, type InstanceIssue, type ServerInstance } from './instances.js';
import { isDict, MISSING, mergeAll, sourceOf, type ConfigDict, type Provenance } from './merge.js';
import { applyDeletes, applyOverrides, parseArgs, type ParsedArgs } from './overrides.js';
import { DEFAULT_HEAD_PORT, DEFAULT_HOST, settingValue } from './settings.js';

export { DEFAULT_HEAD_PORT, DEFAULT_HOST } from './settings.js';

let cachedRoot: string | undefined;

/** The repository root: `NEMO_GYM_ROOT`, else the folder holding pnpm-workspace.yaml above this module. */
export function repoRoot(): string {
  if (process.env.NEMO_GYM_ROOT) return resolve(process.env.NEMO_GYM_ROOT);
  if (cachedRoot) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return (cachedRoot = dir);
    const up = dirname(dir);
    if (up === dir) return (cachedRoot = process.cwd());
    dir = up;
  }
}

/** A path under the `shared` folder that sits beside the repository (reference data for tests). */
export function sharedPath(...parts: string[]): string {
  return join(repoRoot(), '..', 'shared', ...parts);
}

function rel(p: string): string {
  const r = relative(repoRoot(), p);
  return r.startsWith('..') ? p : r;
}

/** Reads one YAML config file, with errors that name the file, line and column. */
export function loadYamlFile(path: string, listedBy?: string): ConfigDict {
  if (!existsSync(path)) {
    throw new ConfigError(
      `Config file not found: ${path}${listedBy ? ` (listed in config_paths by ${listedBy})` : ''}. ` +
        `Relative config paths are resolved against the repo root (${repoRoot()}); check the spelling or give an absolute path.`,
    );
  }
  const text = readFileSync(path, 'utf8');
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const where = e.linePos?.[0] ? `line ${e.linePos[0].line}, column ${e.linePos[0].col}` : 'unknown position';
    const firstLine = e.message.split('\n')[0];
    throw new ConfigError(`YAML syntax error in ${rel(path)} at ${where}: ${firstLine}. Fix the file (indentation, quoting, a missing colon) and run again.`);
  }
  const value: unknown = doc.toJS({ maxAliasCount: 1000 });
  if (value === null || value === undefined) return {};
  if (!isDict(value)) {
    throw new ConfigError(`Config file ${rel(path)} must hold a mapping at the top level (key: value pairs), but holds ${Array.isArray(value) ? 'a list' : typeof value}.`);
  }
  return value;
}

function readConfigPaths(value: unknown, where: string): string[] {
  if (value === undefined || value === null || value === '') return [];
  if (typeof value === 'string') {
    throw new ConfigError(
      `config_paths in ${where} must be a list of paths, but is the string "${value}". ` +
        `Write it as a list: "+config_paths=[${value}]" on the command line, or \`config_paths: [${value}]\` in YAML.`,
    );
  }
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw new ConfigError(`config_paths in ${where} must be a list of path strings, but is ${JSON.stringify(value)}.`);
  }
  return value as string[];
}

/** Upstream's find_open_port: ask the OS for a free port, skipping disallowed ones. */
export async function findOpenPort(disallowed: readonly number[], maxAttempts = 50): Promise<number> {
  for (let i = 0; i < maxAttempts; i++) {
    const port = await new Promise<number>((res, rej) => {
      const srv = createServer();
      srv.unref();
      srv.once('error', rej);
      srv.listen(0, '127.0.0.1', () => {
        const addr = srv.address();
        const p = typeof addr === 'object' && addr ? addr.port : 0;
        srv.close(() => res(p));
      });
    });
    if (!disallowed.includes(port)) return port;
  }
  throw new ConfigError(`Unable to find an open port that doesn't conflict with disallowed ports [${disallowed.join(', ')}] after ${maxAttempts} attempts`);
}

export interface ParseOptions {
  /** Command-line arguments (overrides and flags). */
  argv?: readonly string[];
  /** Already-parsed arguments (instead of argv). */
  args?: ParsedArgs;
  /** Upstream's initial_global_config_dict: merged under the CLI but over files and env.yaml. */
  initial?: ConfigDict;
  /** Skip env.yaml (upstream's skip_load_from_dotenv). */
  skipEnv?: boolean;
  /** Another env.yaml path. */
  envPath?: string;
  /** Where warnings go (almost-servers). */
  warn?: (text: string) => void;
  /** Port finder (tests replace it). */
  findPort?: (disallowed: readonly number[]) => Promise<number>;
  /**
   * Refuse a reference to a server that is not in the config (default true). Commands that only
   * read parts of the config (e.g. its datasets) turn it off, so an environment's config alone works.
   */
  checkServerRefs?: boolean;
}

export interface ParsedConfig {
  config: ConfigDict;
  provenance: Provenance;
  instances: ServerInstance[];
  almostServers: { name: string; issues: InstanceIssue[] }[];
}

/** Levenshtein distance: insertions, deletions and substitutions that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0]!;
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j]!;
      dp[j] = Math.min(dp[j]! + 1, dp[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length]!;
}

/** The candidate nearest to `name` by edit distance, if it is near enough to suggest ("did you mean"). */
export function closest(name: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(name, c);
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best !== undefined && bestD <= Math.max(3, Math.floor(name.length / 3)) ? best : undefined;
}

function whereIs(prov: Provenance, path: string): string {
  const src = sourceOf(prov, path);
  return src ? `in ${src}` : 'in the merged config';
}

/** Formats upstream's almost-server warning block. */
export function formatAlmostServers(list: { name: string; issues: InstanceIssue[] }[]): string {
  const lines = ['', '═'.repeat(60), 'Configuration Warnings: Almost-Servers Detected', '═'.repeat(60)];
  for (const { name, issues } of list) {
    lines.push('', `  Almost-Server Detected: '${name}'`, '  This server configuration failed validation:', '');
    for (const i of issues) lines.push(`    - ${i.path}: ${i.message}`);
    lines.push('', '  This server will NOT be started.');
  }
  lines.push('═'.repeat(60), '');
  return lines.join('\n');
}

/**
 * Server folders upstream's README (at the ported commit) names by their old names, with what
 * they are here: a config path under an old folder that does not exist is read from the new one.
 * python_math_exec's one config is math_with_code.yaml here (its instances are `math_with_code`
 * and `math_with_code_simple_agent`).
 */
const RENAMED_CONFIGS: readonly (readonly [string, string])[] = [
  ['resources_servers/library_judge_math/', 'resources_servers/math_with_judge/'],
  ['resources_servers/python_math_exec/configs/python_math_exec.yaml', 'resources_servers/math_with_code/configs/math_with_code.yaml'],
  ['resources_servers/python_math_exec/', 'resources_servers/math_with_code/'],
];

/** A config path under a renamed server folder, as it is here (or the path unchanged). */
export function renamedConfigPath(path: string, root = repoRoot()): string {
  const abs = isAbsolute(path) ? path : join(root, path);
  if (existsSync(abs)) return path;
  const r = relative(root, abs).split(sep).join('/');
  const hit = RENAMED_CONFIGS.find(([from]) => r.startsWith(from));
  if (!hit) return path;
  const renamed = hit[1] + r.slice(hit[0].length);
  return existsSync(join(root, renamed)) ? renamed : path;
}

export async function parseGlobalConfig(options: ParseOptions = {}): Promise<ParsedConfig> {
  const root = repoRoot();
  const args = options.args ?? parseArgs(options.argv ?? []);
  const prov: Provenance = new Map();

  // 1-2. CLI overrides over the initial dict. --config files extend config_paths.
  let cli = applyOverrides({}, args.overrides, 'skip');
  if (args.configFiles.length > 0) {
    const existing = readConfigPaths(cli.config_paths, 'the command line');
    cli = { ...cli, config_paths: [...existing, ...args.configFiles] };
  }
  const g0 = mergeAll([{ dict: options.initial ?? {}, source: 'the initial config' }, { dict: cli, source: 'the command line' }]);

  // 3. env.yaml at the repo root.
  const envPath = options.envPath ?? join(root, 'env.yaml');
  const env = options.skipEnv || !existsSync(envPath) ? {} : loadYamlFile(envPath);

  // 4. config_paths, expanded breadth-first with string de-duplication.
  const start = mergeAll([{ dict: env }, { dict: g0 }]);
  const listed = readConfigPaths(resolveTop(start, 'config_paths'), 'config_paths' in g0 ? 'the command line' : 'env.yaml');
  const paths = [...listed];
  const listedBy = new Map<string, string>(paths.map((p) => [p, 'config_paths' in g0 ? 'the command line' : 'env.yaml']));
  const extra: { dict: ConfigDict; source: string }[] = [];
  for (let i = 0; i < paths.length; i++) {
    let p = paths[i]!;
    const renamed = renamedConfigPath(p, root);
    if (renamed !== p) {
      (options.warn ?? ((t: string) => process.stderr.write(`${t}\n`)))(`Note: ${p} is ${renamed} here (upstream's server folder was renamed).`);
      listedBy.set(renamed, listedBy.get(p)!);
      paths[i] = p = renamed;
    }
    const abs = isAbsolute(p) ? p : join(root, p);
    const dict = loadYamlFile(abs, listedBy.get(p));
    extra.push({ dict, source: rel(abs) });
    for (const child of readConfigPaths(dict.config_paths, rel(abs))) {
      if (!paths.includes(child)) {
        paths.push(child);
        listedBy.set(child, rel(abs));
      }
    }
  }

  // 5. Merge files, env.yaml, then initial+CLI; write the expanded list back.
  let g = mergeAll([...extra, { dict: env, source: 'env.yaml' }, { dict: g0, source: 'the command line' }], prov);
  if (paths.length > 0) g.config_paths = paths;
  g = applyDeletes(g, args.overrides);

  // 6-7. Recognise instances; collect almost-servers.
  const instances: ServerInstance[] = [];
  const almostServers: { name: string; issues: InstanceIssue[] }[] = [];
  for (const [name, value] of Object.entries(g)) {
    if (RESERVED_KEYS.has(name) || !isDict(value)) continue;
    const check = checkInstance(name, value);
    if (check.kind === 'server') instances.push(check.instance);
    else if (check.kind === 'invalid' && isAlmostServer(value)) almostServers.push({ name, issues: check.issues });
  }
  if (almostServers.length > 0) {
    const text = formatAlmostServers(almostServers);
    (options.warn ?? ((t: string) => process.stderr.write(`${t}\n`)))(text);
    const flag = settingValue(g, 'error_on_almost_servers');
    if (flag) {
      const first = almostServers[0]!;
      throw new ConfigError(
        `Found ${almostServers.length} almost-server(s) with validation errors: ` +
          almostServers.map((a) => `\`${a.name}\` (${whereIs(prov, a.name)}: ${a.issues.map((i) => `${i.path}: ${i.message}`).join('; ')})`).join(', ') +
          `. Fix the issues above or set error_on_almost_servers=false to bypass this error` +
          (first ? '' : '') +
          '.',
      );
    }
  }

  // 8-9. Host default and the head port to keep free.
  const defaultHost = typeof g.default_host === 'string' && g.default_host ? g.default_host : DEFAULT_HOST;
  if ('head_server' in g && g.head_server === null) {
    throw new ConfigError(`head_server is null ${whereIs(prov, 'head_server')}. Remove the key, or give it as {host: ${DEFAULT_HOST}, port: ${DEFAULT_HEAD_PORT}}.`);
  }
  const head = isDict(g.head_server) ? g.head_server : {};
  const disallowed: number[] = [];
  const headPort = 'port' in head ? head.port : DEFAULT_HEAD_PORT;
  if (typeof headPort === 'number') disallowed.push(headPort);

  // 10. Refs, interpolations of direct values, host and port, in key order.
  const known = instances.map((i) => ({ type: i.serverType, name: i.name }));
  const findPort = options.findPort ?? findOpenPort;
  // Values that must be provided and are not (an unset ${key}, a `???`): all of them are named at once.
  const unresolved: string[] = [];
  for (const inst of instances) {
    const basePath = `${inst.name}.${inst.serverType}.${inst.impl}`;
    for (const [key, raw] of Object.entries(inst.inner)) {
      const keyPath = `${basePath}.${key}`;
      let value: unknown;
      try {
        value = resolveValue(g, raw, keyPath);
      } catch (err) {
        if (err instanceof InterpolationError) {
          unresolved.push(`Config error ${whereIs(prov, keyPath)}: ${err.message}`);
          continue;
        }
        throw err;
      }
      if (value === MISSING) {
        unresolved.push(`Config error ${whereIs(prov, keyPath)}: \`${keyPath}\` is \`???\`, a value that must be provided. Set it in env.yaml or on the command line (\`+${keyPath}=…\`).`);
        continue;
      }
      const ref = asServerRef(value);
      if (ref && options.checkServerRefs !== false && !known.some((k) => k.type === ref.type && k.name === ref.name)) {
        const sameName = known.find((k) => k.name === ref.name);
        const hint = sameName
          ? ` An instance named \`${ref.name}\` exists, but it is a ${sameName.type} server, not ${ref.type}.`
          : (() => {
              const c = closest(ref.name, known.filter((k) => k.type === ref.type).map((k) => k.name));
              return c ? ` Did you mean \`${c}\`?` : '';
            })();
        throw new ConfigError(
          `Config error ${whereIs(prov, keyPath)}: \`${keyPath}\` refers to the ${ref.type} server \`${ref.name}\`, which is not in the config.${hint} ` +
            `Available ${ref.type}: ${known.filter((k) => k.type === ref.type).map((k) => k.name).join(', ') || '(none)'}. Add its config file to config_paths or fix the name.`,
        );
      }
    }
    if (!inst.inner.host) inst.inner.host = defaultHost;
    if (!inst.inner.port) {
      const port = await findPort(disallowed);
      inst.inner.port = port;
      disallowed.push(port);
    } else {
      disallowed.push(Number(inst.inner.port));
    }
  }

  if (unresolved.length === 1) throw new ConfigError(unresolved[0]!);
  if (unresolved.length > 1) {
    const names = [...new Set(unresolved.map((u) => /Could not resolve `\$\{([^}]+)\}`/.exec(u)?.[1] ?? /`([^`]+)` is `\?\?\?`/.exec(u)?.[1]).filter(Boolean))];
    throw new ConfigError(
      `${unresolved.length} config values are missing${names.length ? ` (${names.map((n) => `\`${n}\``).join(', ')})` : ''}; set them in env.yaml at the repo root or on the command line:\n${unresolved.map((u) => `  - ${u}`).join('\n')}`,
    );
  }

  // 11-12.
  // A partial head_server (e.g. only +head_server.port=…) gets the missing half defaulted.
  g.head_server = isDict(g.head_server) && Object.keys(g.head_server).length > 0 ? { host: defaultHost, port: DEFAULT_HEAD_PORT, ...g.head_server } : { host: defaultHost, port: DEFAULT_HEAD_PORT };
  g.disallowed_ports = disallowed;
  return { config: g, provenance: prov, instances, almostServers };
}

function resolveTop(dict: ConfigDict, key: string): unknown {
  try {
    return resolveValue(dict, dict[key], key);
  } catch (err) {
    if (err instanceof InterpolationError) throw new ConfigError(`Config error: ${err.message}`);
    throw err;
  }
}

let cached: ConfigDict | undefined;

/**
 * The global config of this process: what ng-run handed over in NEMO_GYM_CONFIG_DICT
 * (used verbatim), else parsed from the command line.
 */
export async function getGlobalConfig(options: ParseOptions = {}): Promise<ConfigDict> {
  if (cached) return cached;
  const fromEnv = process.env.NEMO_GYM_CONFIG_DICT;
  if (fromEnv) {
    const value: unknown = parseYaml(fromEnv);
    cached = isDict(value) ? value : {};
    return cached;
  }
  cached = (await parseGlobalConfig(options)).config;
  return cached;
}

export function resetGlobalConfigCache(): void {
  cached = undefined;
}
