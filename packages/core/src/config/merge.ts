/**
 * OmegaConf's merge rules, which upstream's configs rely on: mappings merge key by key,
 * lists and scalars replace, and a source value of `???` (a "missing" marker) never
 * overwrites a value the destination already has.
 */
export const MISSING = '???';

export type ConfigDict = Record<string, unknown>;

export function isDict(v: unknown): v is ConfigDict {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Records which source set each key path (for error messages). */
export type Provenance = Map<string, string>;

export function mergeInto(dest: ConfigDict, src: ConfigDict, source?: string, prov?: Provenance, prefix = ''): ConfigDict {
  for (const [key, value] of Object.entries(src)) {
    const path = prefix ? `${prefix}.${key}` : key;
    const existing = dest[key];
    if (value === MISSING && key in dest) continue;
    if (isDict(value) && isDict(existing)) {
      mergeInto(existing, value, source, prov, path);
    } else {
      dest[key] = isDict(value) || Array.isArray(value) ? structuredClone(value) : value;
    }
    if (source && prov) prov.set(path, source);
  }
  return dest;
}

/** Merges sources left to right (later wins) into a new dict. */
export function mergeAll(sources: readonly { dict: ConfigDict; source?: string }[], prov?: Provenance): ConfigDict {
  const out: ConfigDict = {};
  for (const { dict, source } of sources) mergeInto(out, dict, source, prov);
  return out;
}

/** The source that set `path` or its nearest ancestor. */
export function sourceOf(prov: Provenance | undefined, path: string): string | undefined {
  if (!prov) return undefined;
  let p = path;
  for (;;) {
    const s = prov.get(p);
    if (s) return s;
    const dot = p.lastIndexOf('.');
    if (dot < 0) return undefined;
    p = p.slice(0, dot);
  }
}
