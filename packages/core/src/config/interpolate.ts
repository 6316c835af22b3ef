/**
 * `${a.b.c}` interpolation against the root of the merged config, as OmegaConf resolves it:
 * a value that is exactly one interpolation takes the referenced value (any type); an
 * interpolation inside a longer string is replaced by the referenced value's text.
 * `${oc.env:NAME}` and `${oc.env:NAME,default}` read environment variables.
 */
import { ConfigError } from '../errors.js';
import { isDict, MISSING, type ConfigDict } from './merge.js';

const WHOLE_RE = /^\$\{([^${}]+)\}$/;
const ANY_RE = /\$\{([^${}]+)\}/g;

export function hasInterpolation(v: unknown): v is string {
  return typeof v === 'string' && v.includes('${');
}

export class InterpolationError extends ConfigError {
  constructor(
    readonly keyPath: string,
    readonly reference: string,
    reason: string,
  ) {
    super(`Could not resolve \`\${${reference}}\` at key \`${keyPath}\`: ${reason}`);
  }
}

function lookup(root: ConfigDict, ref: string): { found: boolean; value: unknown } {
  let node: unknown = root;
  for (const part of ref.split('.')) {
    if (isDict(node) && part in node) node = node[part];
    else if (Array.isArray(node) && /^\d+$/.test(part) && Number(part) < node.length) node = node[Number(part)];
    else return { found: false, value: undefined };
  }
  return { found: true, value: node };
}

function resolveRef(root: ConfigDict, ref: string, keyPath: string, seen: Set<string>): unknown {
  const trimmed = ref.trim();
  if (trimmed.startsWith('oc.env:')) {
    const [name, ...rest] = trimmed.slice('oc.env:'.length).split(',');
    const v = process.env[name!.trim()];
    if (v !== undefined) return v;
    if (rest.length > 0) return rest.join(',').trim().replace(/^['"]|['"]$/g, '');
    throw new InterpolationError(keyPath, trimmed, `the environment variable ${name!.trim()} is not set`);
  }
  if (seen.has(trimmed)) {
    throw new InterpolationError(keyPath, trimmed, `it refers back to itself (cycle through ${[...seen].join(' -> ')})`);
  }
  const { found, value } = lookup(root, trimmed);
  if (!found) {
    throw new InterpolationError(
      keyPath,
      trimmed,
      `no key \`${trimmed}\` exists in the merged config. Define it in a config file, in env.yaml at the repo root, or on the command line (\`+${trimmed}=…\`).`,
    );
  }
  if (value === MISSING) {
    throw new InterpolationError(keyPath, trimmed, `\`${trimmed}\` is still \`???\` (a value that must be provided). Set it in env.yaml or with \`+${trimmed}=…\`.`);
  }
  const next = new Set(seen).add(trimmed);
  return resolveValue(root, value, trimmed, next);
}

/** Resolves every interpolation in `value` (recursively through dicts and lists). */
export function resolveValue(root: ConfigDict, value: unknown, keyPath: string, seen: Set<string> = new Set()): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${')) return value;
    const whole = WHOLE_RE.exec(value);
    if (whole) return resolveRef(root, whole[1]!, keyPath, seen);
    return value.replace(ANY_RE, (_m, ref: string) => {
      const v = resolveRef(root, ref, keyPath, seen);
      return typeof v === 'string' ? v : JSON.stringify(v);
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => resolveValue(root, v, `${keyPath}.${i}`, seen));
  if (isDict(value)) {
    const out: ConfigDict = {};
    for (const [k, v] of Object.entries(value)) out[k] = resolveValue(root, v, keyPath ? `${keyPath}.${k}` : k, seen);
    return out;
  }
  return value;
}

/** The whole config with every interpolation resolved. */
export function resolveAll(root: ConfigDict): ConfigDict {
  return resolveValue(root, root, '') as ConfigDict;
}
