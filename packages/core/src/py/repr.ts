/**
 * Python `repr()` of str and of JSON-shaped values. Prompts, tool outputs and regex inputs that
 * upstream builds with `repr()`, `{x!r}` or `str(list_of_objects)` depend on these exact bytes:
 * the quote Python picks, backslash escapes and `\xNN` / `\uNNNN` / `\UNNNNNNNN` for every
 * character `str.isprintable()` rejects.
 */
import { PyFloat, pyFloatRepr } from './json.js';

/** Characters `str.isprintable()` rejects: controls, format, surrogates, private use, unassigned, separators other than ' '. */
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

function hex(cp: number, width: number): string {
  return cp.toString(16).padStart(width, '0');
}

/** Python `repr(s)` of a str. */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === ' ' || !NON_PRINTABLE.test(ch)) out += ch;
    else {
      const cp = ch.codePointAt(0)!;
      out += cp <= 0xff ? `\\x${hex(cp, 2)}` : cp <= 0xffff ? `\\u${hex(cp, 4)}` : `\\U${hex(cp, 8)}`;
    }
  }
  return out + quote;
}

/**
 * Python `repr(v)` of a JSON-shaped value: `None`, `True`/`False`, integral numbers as ints (a
 * `PyFloat`, or any number with `asFloat`, as a float), bigints exactly, lists, and dicts (plain
 * objects or Maps, in insertion order). `undefined` is `None` (a field that is absent is unset).
 */
export function pyRepr(v: unknown, asFloat = false): string {
  if (v === null || v === undefined) return 'None';
  if (v instanceof PyFloat) return pyFloatRepr(v.value);
  switch (typeof v) {
    case 'boolean':
      return v ? 'True' : 'False';
    case 'number':
      if (asFloat || !Number.isInteger(v)) return pyFloatRepr(v);
      return Math.abs(v) < 1e21 ? String(v) : BigInt(v).toString();
    case 'bigint':
      return v.toString();
    case 'string':
      return pyStrRepr(v);
    default:
      break;
  }
  if (Array.isArray(v)) return `[${v.map((x) => pyRepr(x)).join(', ')}]`;
  const entries = v instanceof Map ? [...(v as Map<unknown, unknown>).entries()] : Object.entries(v as Record<string, unknown>);
  return `{${entries.map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
}
