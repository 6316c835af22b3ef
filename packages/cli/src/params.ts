/**
 * Strict parameters: every +key (or ++key, --set key=…) on a command line must be something the
 * command or the config knows — one of the command's own parameters, a global setting, a key some
 * config file or env.yaml defines, a server instance, or a name the config interpolates (${name}).
 * Anything else is most likely a typo (`+num_repeat=4` for `+num_repeats=4`) and stops the command
 * before it does anything.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { closest, GLOBAL_SETTING_NAMES, isDict, loadYamlFile, repoRoot, type ConfigDict, type Override } from '@nemo-gym/core/config';
import { UsageError } from '@nemo-gym/core/errors';
import type { CommandSpec } from './runtime.js';

/**
 * Top-level keys every command accepts: the global settings (core's one declaration, upstream's
 * keys included so its configs and command lines work unchanged) and the help switches.
 */
export const GLOBAL_KEYS: readonly string[] = [...GLOBAL_SETTING_NAMES, 'h', 'help'];

export interface ConfigSources {
  /** The merged config (its config_paths is the expanded list of files read). */
  config: ConfigDict;
  /** Names of the server instances in it. */
  instanceNames: readonly string[];
  initial?: ConfigDict;
  envPath?: string;
  skipEnv?: boolean;
}

function interpolatedNames(value: unknown, out: Set<string>): void {
  if (typeof value === 'string') {
    for (const m of value.matchAll(/\$\{\s*([A-Za-z_][\w-]*)/g)) out.add(m[1]!);
  } else if (Array.isArray(value)) {
    for (const v of value) interpolatedNames(v, out);
  } else if (isDict(value)) {
    for (const v of Object.values(value)) interpolatedNames(v, out);
  }
}

/** Top-level keys the config itself knows: from its files, env.yaml, instances and interpolations. */
function configKeys(src: ConfigSources): Set<string> {
  const root = repoRoot();
  const keys = new Set<string>([...src.instanceNames, ...Object.keys(src.initial ?? {})]);
  const files = Array.isArray(src.config.config_paths) ? src.config.config_paths.map(String) : [];
  const envPath = src.envPath ?? join(root, 'env.yaml');
  if (!src.skipEnv && existsSync(envPath)) files.push(envPath);
  for (const f of files) {
    for (const k of Object.keys(loadYamlFile(isAbsolute(f) ? f : join(root, f)))) keys.add(k);
  }
  interpolatedNames(src.config, keys);
  return keys;
}

/** Throws a usage error naming every unknown +key of the command line, with a suggestion for each. */
export function checkParameters(spec: CommandSpec, overrides: readonly Override[], src: ConfigSources): void {
  const own = (spec.flags ?? []).map((f) => f.name);
  const settable = overrides.filter((o) => o.kind !== 'delete');
  if (settable.length === 0) return;
  const known = new Set<string>([...own, ...GLOBAL_KEYS]);
  let fromConfig: Set<string> | undefined;
  const unknown = settable.filter((o) => {
    const top = o.path[0]!;
    if (known.has(top)) return false;
    fromConfig ??= configKeys(src);
    return !fromConfig.has(top);
  });
  if (unknown.length === 0) return;
  const candidates = [...own, ...GLOBAL_KEYS.filter((k) => k !== 'h' && k !== 'help'), ...(fromConfig ?? [])];
  const lines = unknown.map((o) => {
    const top = o.path[0]!;
    const near = closest(top, candidates);
    return `unknown parameter \`${o.raw}\`${near ? ` (did you mean \`+${near}${o.key.slice(top.length)}\`?)` : ''}`;
  });
  const takes = own.length ? `ng-${spec.name} takes ${own.map((n) => `+${n}`).join(', ')}` : `ng-${spec.name} has no parameters of its own`;
  throw new UsageError(
    `${lines.join('; ')}. ${takes} (see \`ng-${spec.name} --help\`); any other +key must be defined in a config file or env.yaml, ` +
      `or be a global setting such as +policy_base_url or +head_server.port.`,
  );
}
