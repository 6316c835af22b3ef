/**
 * Command-line overrides in upstream's (Hydra's) syntax:
 *   +key=value     add a key (the usual form: there is no base config)
 *   ++key=value    add or override
 *   ~key           delete
 *   key=value      rejected, as Hydra rejects it for a key that does not exist yet
 * Values are typed: null, true/false, ints, floats, [a,b] lists, {k: v} dicts, quoted strings;
 * `${...}` interpolations stay strings. Conventional flags are accepted as well:
 *   --config a.yaml (repeatable; appends to config_paths), --set key=value (same as ++key=value).
 */
import { ConfigError } from '../errors.js';

export type Override =
  | { kind: 'add' | 'force'; key: string; path: string[]; value: unknown; raw: string }
  | { kind: 'delete'; key: string; path: string[]; raw: string };

export interface ParsedArgs {
  overrides: Override[];
  /** Paths given with --config, in order. */
  configFiles: string[];
  help: boolean;
}

function splitKey(key: string, raw: string): string[] {
  const parts = key.split('.');
  if (key.length === 0 || parts.some((p) => p.length === 0)) {
    throw new ConfigError(`Command-line override \`${raw}\`: the key \`${key}\` is not a valid dotted key (expected e.g. \`+policy_model.responses_api_models.openai_model.openai_model=gpt-4o\`).`);
  }
  return parts;
}

export function parseOverride(raw: string): Override {
  if (raw.startsWith('~')) {
    const body = raw.slice(1);
    const eq = body.indexOf('=');
    const key = eq >= 0 ? body.slice(0, eq) : body;
    return { kind: 'delete', key, path: splitKey(key, raw), raw };
  }
  let kind: 'add' | 'force' = 'add';
  let body = raw;
  if (raw.startsWith('++')) {
    kind = 'force';
    body = raw.slice(2);
  } else if (raw.startsWith('+')) {
    body = raw.slice(1);
  } else {
    const eq = raw.indexOf('=');
    const key = eq > 0 ? raw.slice(0, eq) : raw;
    throw new ConfigError(
      `Command-line override \`${raw}\`: could not override \`${key}\`, which no config defines yet. ` +
        `New keys are written with a leading plus: \`+${raw}\` (or \`++${raw}\` to add or override, or \`--set ${raw}\`).`,
    );
  }
  const eq = body.indexOf('=');
  if (eq <= 0) {
    throw new ConfigError(`Command-line override \`${raw}\`: expected \`+key=value\`, found no \`=\` after the key.`);
  }
  const key = body.slice(0, eq);
  const path = splitKey(key, raw);
  let value: unknown;
  try {
    value = parseOverrideValue(body.slice(eq + 1));
  } catch (err) {
    throw new ConfigError(`Command-line override \`${raw}\`: ${(err as Error).message}. Quote the whole argument in the shell, e.g. "+config_paths=[a.yaml,b.yaml]".`);
  }
  return { kind, key, path, value, raw };
}

const INT_RE = /^[+-]?(?:0|[1-9][0-9_]*)$/;
const FLOAT_RE = /^[+-]?(?:(?:[0-9][0-9_]*)?\.[0-9_]+(?:[eE][+-]?[0-9]+)?|[0-9][0-9_]*\.(?:[eE][+-]?[0-9]+)?|[0-9][0-9_]*[eE][+-]?[0-9]+|inf|nan)$/i;

function typePrimitive(text: string): unknown {
  const t = text.trim();
  const lower = t.toLowerCase();
  if (lower === 'null') return null;
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  if (INT_RE.test(t)) return Number(t.replace(/_/g, ''));
  if (FLOAT_RE.test(t)) {
    if (lower.endsWith('inf')) return lower.startsWith('-') ? -Infinity : Infinity;
    if (lower.endsWith('nan')) return NaN;
    return Number(t.replace(/_/g, ''));
  }
  return t;
}

/** Parses the value part of an override with Hydra's grammar (the subset people use). */
export function parseOverrideValue(text: string): unknown {
  let pos = 0;
  const peek = () => text[pos];
  const skipWs = () => {
    while (pos < text.length && /\s/.test(text[pos]!)) pos++;
  };
  const fail = (what: string): never => {
    throw new ConfigError(`${what} at character ${pos + 1} of the value \`${text}\``);
  };

  const parseQuoted = (): string => {
    const quote = text[pos]!;
    pos++;
    let out = '';
    while (pos < text.length && text[pos] !== quote) {
      if (text[pos] === '\\' && (text[pos + 1] === quote || text[pos + 1] === '\\')) {
        out += text[pos + 1];
        pos += 2;
      } else {
        out += text[pos++];
      }
    }
    if (pos >= text.length) fail(`unterminated ${quote} string`);
    pos++;
    return out;
  };

  // An unquoted element inside a list/dict runs to the next separator at depth 0; `${...}` may contain them.
  const parseBare = (stops: string): unknown => {
    const start = pos;
    let depth = 0;
    while (pos < text.length) {
      const ch = text[pos]!;
      if (ch === '$' && text[pos + 1] === '{') {
        depth++;
        pos += 2;
        continue;
      }
      if (ch === '}' && depth > 0) {
        depth--;
        pos++;
        continue;
      }
      if (depth === 0 && stops.includes(ch)) break;
      pos++;
    }
    return typePrimitive(text.slice(start, pos));
  };

  const parseElement = (stops: string): unknown => {
    skipWs();
    const ch = peek();
    if (ch === '[') return parseList();
    if (ch === '{' ) return parseDict();
    if (ch === "'" || ch === '"') {
      const s = parseQuoted();
      skipWs();
      return s;
    }
    return parseBare(stops);
  };

  const parseList = (): unknown[] => {
    pos++;
    const out: unknown[] = [];
    skipWs();
    if (peek() === ']') {
      pos++;
      return out;
    }
    for (;;) {
      out.push(parseElement(',]'));
      skipWs();
      if (peek() === ',') {
        pos++;
        continue;
      }
      if (peek() === ']') {
        pos++;
        return out;
      }
      fail('expected `,` or `]` in a list');
    }
  };

  const parseDict = (): Record<string, unknown> => {
    pos++;
    const out: Record<string, unknown> = {};
    skipWs();
    if (peek() === '}') {
      pos++;
      return out;
    }
    for (;;) {
      skipWs();
      let key: string;
      if (peek() === "'" || peek() === '"') key = parseQuoted();
      else {
        const start = pos;
        while (pos < text.length && !':,}'.includes(text[pos]!)) pos++;
        key = text.slice(start, pos).trim();
      }
      skipWs();
      if (peek() !== ':') fail('expected `:` after a dict key');
      pos++;
      out[key] = parseElement(',}');
      skipWs();
      if (peek() === ',') {
        pos++;
        continue;
      }
      if (peek() === '}') {
        pos++;
        return out;
      }
      fail('expected `,` or `}` in a dict');
    }
  };

  const trimmed = text.trim();
  if (trimmed.startsWith('[') || (trimmed.startsWith('{') && !trimmed.startsWith('${'))) {
    skipWs();
    const v = trimmed.startsWith('[') ? parseList() : parseDict();
    skipWs();
    if (pos < text.length) fail('unexpected text after the closing bracket');
    return v;
  }
  if ((trimmed.startsWith("'") && trimmed.endsWith("'") && trimmed.length >= 2) || (trimmed.startsWith('"') && trimmed.endsWith('"') && trimmed.length >= 2)) {
    pos = text.indexOf(trimmed[0]!);
    return parseQuoted();
  }
  if (trimmed === '') return '';
  return typePrimitive(trimmed);
}

/** Splits a command line into overrides and conventional flags. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const overrides: Override[] = [];
  const configFiles: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const takeValue = (flag: string): string => {
      const eq = arg.indexOf('=');
      if (eq > 0 && arg.startsWith('--')) return arg.slice(eq + 1);
      const next = argv[i + 1];
      if (next === undefined) throw new ConfigError(`Flag ${flag} needs a value, e.g. \`${flag} ${flag === '--config' ? 'configs/x.yaml' : 'key=value'}\`.`);
      i++;
      return next;
    };
    if (arg === '-h' || arg === '--help') {
      help = true;
    } else if (arg === '--config' || arg === '-c' || arg.startsWith('--config=')) {
      configFiles.push(takeValue('--config'));
    } else if (arg === '--set' || arg.startsWith('--set=')) {
      const kv = takeValue('--set');
      overrides.push(parseOverride(`++${kv}`));
    } else if (arg.startsWith('--')) {
      throw new ConfigError(`Unknown flag \`${arg}\`. Settings are given as \`+key=value\` (or \`--set key=value\`); config files as \`"+config_paths=[a.yaml]"\` or \`--config a.yaml\`.`);
    } else {
      overrides.push(parseOverride(arg));
    }
  }
  return { overrides, configFiles, help };
}

/**
 * Applies overrides to a plain object (returns a new object). With `deletes: 'skip'` the `~key`
 * overrides are left out (they apply to the fully merged config, see `applyDeletes`).
 */
export function applyOverrides(
  base: Record<string, unknown>,
  overrides: readonly Override[],
  deletes: 'apply' | 'skip' = 'apply',
): Record<string, unknown> {
  const root = structuredClone(base);
  for (const o of overrides) {
    if (o.kind === 'delete' && deletes === 'skip') continue;
    let node: Record<string, unknown> = root;
    for (const part of o.path.slice(0, -1)) {
      const next = node[part];
      if (next === null || typeof next !== 'object' || Array.isArray(next)) {
        if (o.kind === 'delete') {
          throw new ConfigError(`Command-line override \`${o.raw}\`: there is no key \`${o.key}\` to delete.`);
        }
        node[part] = {};
      }
      node = node[part] as Record<string, unknown>;
    }
    const last = o.path[o.path.length - 1]!;
    if (o.kind === 'delete') {
      if (!(last in node)) throw new ConfigError(`Command-line override \`${o.raw}\`: there is no key \`${o.key}\` to delete.`);
      delete node[last];
    } else if (o.kind === 'add' && last in node) {
      throw new ConfigError(`Command-line override \`${o.raw}\`: the key \`${o.key}\` is given twice on the command line. Use \`++${o.key}=…\` to override.`);
    } else {
      node[last] = o.value;
    }
  }
  return root;
}

export function applyDeletes(config: Record<string, unknown>, overrides: readonly Override[]): Record<string, unknown> {
  const deletes = overrides.filter((o) => o.kind === 'delete');
  return deletes.length === 0 ? config : applyOverrides(config, deletes);
}
