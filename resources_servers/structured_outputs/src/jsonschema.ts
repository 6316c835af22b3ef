/**
 * JSON Schema 2020-12 validation with the Python reference validator's semantics (the OAS 3.1
 * validator upstream uses: python-jsonschema's Draft 2020-12 keywords, `referencing` for `$ref`,
 * `$dynamicRef`, `$id` and anchors, plus the OpenAPI `discriminator`).
 *
 * It is an interpreter, not a code generator: a schema is indexed once (its resources and
 * anchors) and then walked for each instance. It follows the Python implementation where that
 * differs from a literal reading of the specification, because the reward must be upstream's:
 * - references resolve with Python's `urljoin`; the dynamic scope is the list of base URIs that
 *   references were followed from (an anonymous root is not in it), and a `$ref` to a
 *   `$dynamicAnchor` is resolved dynamically too;
 * - `unevaluatedItems` / `unevaluatedProperties` use python-jsonschema's evaluated-index and
 *   evaluated-key walk (not annotation collection);
 * - keywords run in document order and the validator stops where Python's lazy error iteration
 *   stops, so an exception (an unresolvable reference, a bad regex reached at run time) surfaces
 *   exactly when Python's would: `SchemaEvalError`, which scores 0;
 * - `pattern` / `patternProperties` are Python regexes applied with `re.search`; `format` is not
 *   asserted except `regex` while checking a schema against the meta-schema (as `check_schema`);
 * - equality (`enum`, `const`, `uniqueItems`) keeps `true` and `1` apart and `1` and `1.0` equal;
 *   `multipleOf` divides and falls back to exact arithmetic when the quotient overflows.
 *
 * Object keys are read as own properties only, so names like `__proto__`, `constructor` and
 * `toString` are ordinary names in schemas and instances.
 */
import { createRequire } from 'node:module';
import { pyCompile, PyException, pyIntFromStr, pyIter, pyLen, type PyRegex, PyRegexError, pyStr, pyTruthy, pyTypeName as typeName } from '@nemo-gym/core/py';
import { unquote, urldefrag, urljoin } from './pyurl.js';
import { SchemaEvalError } from './schema-error.js';

export { SchemaEvalError };

type Obj = Record<string, unknown>;

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
/** `o[k]` when `k` is an own key, else undefined (never the prototype's member). */
const own = (o: Obj, k: string): unknown => (hasOwn(o, k) ? o[k] : undefined);

// ---------------------------------------------------------------------------------------------
// Python regexes

/** Python `re.search(pattern, s)`; an invalid pattern is an error as in Python. */
function reSearch(pattern: unknown, s: string): boolean {
  if (typeof pattern !== 'string') throw new SchemaEvalError(`a regex must be a string, not ${typeName(pattern)}`);
  let re: PyRegex;
  try {
    re = pyCompile(pattern);
  } catch (e) {
    if (e instanceof PyRegexError) throw new SchemaEvalError(`${JSON.stringify(pattern)} is not a valid regex: ${e.message}`);
    throw e;
  }
  return re.test(s);
}

// ---------------------------------------------------------------------------------------------
// Python value semantics

/** python-jsonschema's `equal` (not Python's `==`): booleans are not numbers, 1 == 1.0, containers compared deeply. */
export function schemaEqual(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!schemaEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObj(a) || isObj(b)) {
    if (!isObj(a) || !isObj(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    for (const k of ka) if (!hasOwn(b, k) || !schemaEqual(a[k], b[k])) return false;
    return true;
  }
  return a === b; // numbers (NaN is never equal), booleans, null
}

function isType(v: unknown, type: unknown): boolean {
  switch (type) {
    case 'object':
      return isObj(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'null':
      return v === null;
    default:
      throw new SchemaEvalError(`unknown type ${JSON.stringify(type)}`);
  }
}

function num(v: unknown, keyword: string): number {
  if (typeof v !== 'number') throw new SchemaEvalError(`${keyword} must be a number, not ${typeName(v)}`);
  return v;
}

/** A finite double as `m * 2**e` with integer `m`. */
function exactParts(x: number): [bigint, number] {
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, x);
  const hi = buf.getUint32(0);
  const lo = buf.getUint32(4);
  const expBits = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp: number;
  if (expBits === 0) exp = -1074;
  else {
    mant |= 1n << 52n;
    exp = expBits - 1075;
  }
  if (hi >>> 31) mant = -mant;
  return [mant, exp];
}

/** Whether `x / d` is an integer, computed exactly (`Fraction` arithmetic in Python). */
function exactMultiple(x: number, d: number): boolean {
  const [mx, ex] = exactParts(x);
  const [md, ed] = exactParts(d);
  if (mx === 0n) return true;
  // x / d = (mx / md) * 2**(ex - ed)
  let num = mx;
  let den = md;
  if (ex >= ed) num <<= BigInt(ex - ed);
  else den <<= BigInt(ed - ex);
  return num % den === 0n;
}

/** python-jsonschema `multipleOf`: `%` for an integral divisor, division (exact on overflow) otherwise. */
function isMultipleOf(x: number, d: number): boolean {
  if (Number.isInteger(d)) {
    const r = x % d;
    return r === 0;
  }
  const q = x / d;
  if (Number.isNaN(q)) throw new SchemaEvalError(`cannot convert float NaN to integer (${x} / ${d})`);
  if (!Number.isFinite(q)) {
    if (!Number.isFinite(x)) throw new SchemaEvalError(`cannot convert Infinity to integer ratio (${x})`);
    return exactMultiple(x, d);
  }
  return Number.isInteger(q);
}

// ---------------------------------------------------------------------------------------------
// Resources, anchors and resolution (`referencing` for Draft 2020-12)

/** Keywords whose value is a subschema / a list of subschemas / a map of subschemas. */
const IN_VALUE = new Set(['additionalProperties', 'contains', 'contentSchema', 'else', 'if', 'items', 'not', 'propertyNames', 'then', 'unevaluatedItems', 'unevaluatedProperties']);
const IN_SUBARRAY = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const IN_SUBVALUES = new Set(['$defs', 'definitions', 'dependentSchemas', 'patternProperties', 'properties']);
const IN_CHILD = new Set([...IN_SUBARRAY, ...IN_SUBVALUES]);

interface Anchor {
  dynamic: boolean;
  contents: unknown;
}

/** Every resource (by URI) and anchor (by URI and name) of a set of documents. */
export class Registry {
  readonly resources = new Map<string, unknown>();
  readonly anchors = new Map<string, Anchor>();

  constructor(readonly parent?: Registry) {}

  /** Adds a document at `uri` and crawls its subresources (last one found wins, as in Python). */
  add(uri: string, contents: unknown): void {
    const stack: [string, unknown][] = [[uri, contents]];
    this.resources.set(uri, contents);
    while (stack.length) {
      let [at, c] = stack.pop()!;
      if (!isObj(c)) continue;
      const id = idOf(c);
      if (id !== undefined) {
        at = urljoin(at, id);
        this.resources.set(at, c);
      }
      const anchor = own(c, '$anchor');
      if (typeof anchor === 'string') this.anchors.set(`${at}\u0000${anchor}`, { dynamic: false, contents: c });
      const dyn = own(c, '$dynamicAnchor');
      if (typeof dyn === 'string') this.anchors.set(`${at}\u0000${dyn}`, { dynamic: true, contents: c });
      for (const k of IN_VALUE) if (hasOwn(c, k)) stack.push([at, c[k]]);
      for (const k of IN_SUBARRAY) {
        const v = own(c, k);
        if (Array.isArray(v)) for (const s of v) stack.push([at, s]);
      }
      for (const k of IN_SUBVALUES) {
        const v = own(c, k);
        if (isObj(v)) for (const s of Object.values(v)) stack.push([at, s]);
      }
    }
  }

  resource(uri: string): unknown {
    if (this.resources.has(uri)) return this.resources.get(uri);
    return this.parent?.resource(uri);
  }

  hasResource(uri: string): boolean {
    return this.resources.has(uri) || (this.parent?.hasResource(uri) ?? false);
  }

  /** Python `Registry.anchor`: by URI, then by the resource's own `$id`; undefined when absent. */
  anchor(uri: string, name: string): Anchor | undefined {
    const hit = this.findAnchor(`${uri}\u0000${name}`);
    if (hit) return hit;
    if (!this.hasResource(uri)) throw new SchemaEvalError(`no resource at ${JSON.stringify(uri)} (looking for anchor ${JSON.stringify(name)})`);
    const res = this.resource(uri);
    const canonical = isObj(res) ? idOf(res) : undefined;
    return canonical !== undefined ? this.findAnchor(`${canonical}\u0000${name}`) : undefined;
  }

  private findAnchor(key: string): Anchor | undefined {
    return this.anchors.get(key) ?? this.parent?.findAnchor(key);
  }
}

/** A resource's `$id` with trailing `#` removed, or undefined. */
function idOf(c: Obj): string | undefined {
  const id = own(c, '$id');
  if (id === undefined || id === null) return undefined;
  if (typeof id !== 'string') throw new SchemaEvalError(`$id must be a string, not ${typeName(id)}`);
  return id.replace(/#+$/, '');
}

/** The base URIs references were followed from, most recent first. */
interface Scope {
  readonly uri: string;
  readonly next: Scope | null;
}

/** A base URI and dynamic scope (Python `referencing.Resolver`). */
class Resolver {
  constructor(
    readonly base: string,
    readonly scope: Scope | null,
    readonly registry: Registry,
  ) {}

  /** The resolver for a subschema: its `$id`, if any, is the new base URI. */
  inSubresource(contents: unknown): Resolver {
    if (!isObj(contents)) return this;
    const id = idOf(contents);
    return id === undefined ? this : new Resolver(urljoin(this.base, id), this.scope, this.registry);
  }

  /** Moves to `base`, remembering the current base in the dynamic scope. */
  private moved(base: string): Resolver {
    let scope = this.scope;
    if (this.base && (!scope || base !== this.base)) scope = { uri: this.base, next: scope };
    return new Resolver(base, scope, this.registry);
  }

  lookup(ref: unknown): { contents: unknown; resolver: Resolver } {
    if (typeof ref !== 'string') throw new SchemaEvalError(`a reference must be a string, not ${typeName(ref)}`);
    let uri: string;
    let fragment: string;
    if (ref.startsWith('#')) {
      uri = this.base;
      fragment = ref.slice(1);
    } else {
      [uri, fragment] = urldefrag(urljoin(this.base, ref));
    }
    if (!this.registry.hasResource(uri)) throw new SchemaEvalError(`unresolvable reference ${JSON.stringify(ref)}`);
    const resource = this.registry.resource(uri);
    const resolver = this.moved(uri);
    if (fragment.startsWith('/')) return resolvePointer(resource, fragment, resolver);
    if (fragment) {
      const anchor = this.registry.anchor(uri, fragment);
      if (!anchor) throw new SchemaEvalError(`unresolvable reference ${JSON.stringify(ref)}: no anchor ${JSON.stringify(fragment)}`);
      if (!anchor.dynamic) return { contents: anchor.contents, resolver };
      // the outermost resource in the dynamic scope with a dynamic anchor of that name
      let last = anchor.contents;
      for (let s = resolver.scope; s; s = s.next) {
        const a = this.registry.anchor(s.uri, fragment);
        if (a?.dynamic) last = a.contents;
      }
      return { contents: last, resolver: resolver.inSubresource(last) };
    }
    return { contents: resource, resolver };
  }
}

/** A JSON pointer segment into an array, read as `referencing` does with Python's `int(text)`. */
function pointerIndex(text: string): number {
  const n = pyIntFromStr(text);
  if (n === null) throw new SchemaEvalError(`invalid literal for int() with base 10: ${JSON.stringify(text)}`);
  return n;
}

/** `referencing`'s JSON pointer walk, entering subresources (`$id`) along schema keywords. */
function resolvePointer(document: unknown, pointer: string, start: Resolver): { contents: unknown; resolver: Resolver } {
  let contents = document;
  let resolver = start;
  let segments: string[] = [];
  for (const raw of unquote(pointer.slice(1)).split('/')) {
    let seg: string;
    if (Array.isArray(contents) || typeof contents === 'string') {
      let i = pointerIndex(raw);
      if (i < 0) i += contents.length;
      if (i < 0 || i >= contents.length) throw new SchemaEvalError(`unresolvable JSON pointer ${JSON.stringify(pointer)}`);
      contents = Array.isArray(contents) ? contents[i] : contents[i];
      seg = String(i);
    } else if (isObj(contents)) {
      seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      if (!hasOwn(contents, seg)) throw new SchemaEvalError(`unresolvable JSON pointer ${JSON.stringify(pointer)}`);
      contents = contents[seg];
    } else {
      throw new SchemaEvalError(`unresolvable JSON pointer ${JSON.stringify(pointer)}: ${typeName(contents)} is not subscriptable`);
    }
    segments.push(seg);
    const before = resolver;
    resolver = maybeInSubresource(segments, resolver, contents);
    if (resolver !== before) segments = [];
  }
  return { contents, resolver };
}

function maybeInSubresource(segments: string[], resolver: Resolver, contents: unknown): Resolver {
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    if (IN_VALUE.has(s)) continue;
    if (IN_CHILD.has(s) && i + 1 < segments.length) {
      i++;
      continue;
    }
    return resolver;
  }
  return resolver.inSubresource(contents);
}

// ---------------------------------------------------------------------------------------------
// Validation

const DIALECTS = new Set([
  'https://json-schema.org/draft/2020-12/schema',
  'https://json-schema.org/draft/2019-09/schema',
  'http://json-schema.org/draft-07/schema',
  'http://json-schema.org/draft-06/schema',
  'http://json-schema.org/draft-04/schema',
  'http://json-schema.org/draft-03/schema',
]);

/** Python picks the validator class of a subschema by its `$schema`: a known dialect drops the OpenAPI keywords. */
function oasFor(schema: Obj, oas: boolean): boolean {
  if (!oas || !hasOwn(schema, '$schema')) return oas;
  const d = schema.$schema;
  return !(typeof d === 'string' && DIALECTS.has(d.replace(/#$/, '')));
}

/** Nesting beyond this many subschema levels fails, as Python's recursion limit does (at a similar depth). */
const MAX_DEPTH = 500;

export interface CheckOptions {
  /** Assert `format: "regex"` (the meta-schema check does; instance validation does not). */
  assertRegexFormat: boolean;
  /** Apply the OpenAPI `discriminator` rule (the OAS 3.1 validator); off for the meta-schema check. */
  oas: boolean;
}

class Validation {
  private depth = 0;

  constructor(private readonly opts: CheckOptions) {}

  /** Python `descend`: the subschema's own `$id` (or the given resolver) applies, errors as the caller consumes them. */
  descend(schema: unknown, instance: unknown, resolver: Resolver, all: boolean, oas: boolean, given?: Resolver): boolean {
    if (schema === true) return true;
    if (schema === false) return false;
    if (!isObj(schema)) throw new SchemaEvalError(`a schema must be an object or a boolean, not ${typeName(schema)}`);
    return this.run(schema, instance, given ?? resolver.inSubresource(schema), all, oasFor(schema, oas));
  }

  /** Python `evolve(schema=...).is_valid(...)`: the caller's resolver, stop at the first error. */
  isValid(schema: unknown, instance: unknown, resolver: Resolver, oas: boolean): boolean {
    if (schema === true) return true;
    if (schema === false) return false;
    if (!isObj(schema)) throw new SchemaEvalError(`a schema must be an object or a boolean, not ${typeName(schema)}`);
    return this.run(schema, instance, resolver, false, oasFor(schema, oas));
  }

  /** Root validation; `all`: every error is enumerated (so every keyword runs), as `best_match` does. */
  root(schema: unknown, instance: unknown, resolver: Resolver, all: boolean): boolean {
    if (schema === true) return true;
    if (schema === false) return false;
    if (!isObj(schema)) throw new SchemaEvalError(`a schema must be an object or a boolean, not ${typeName(schema)}`);
    return this.run(schema, instance, resolver, all, this.opts.oas);
  }

  /** The keywords of one schema object in document order. `all`: keep going after a failure. */
  private run(schema: Obj, instance: unknown, resolver: Resolver, all: boolean, oas: boolean): boolean {
    if (this.depth >= MAX_DEPTH) throw new SchemaEvalError(`maximum recursion depth exceeded (more than ${MAX_DEPTH} nested subschemas)`);
    this.depth++;
    try {
      let ok = true;
      for (const k of Object.keys(schema)) {
        if (!this.keyword(k, schema[k], schema, instance, resolver, all, oas)) {
          ok = false;
          if (!all) break;
        }
      }
      return ok;
    } finally {
      this.depth--;
    }
  }

  private keyword(k: string, v: unknown, schema: Obj, instance: unknown, resolver: Resolver, all: boolean, oas: boolean): boolean {
    switch (k) {
      case '$ref':
      case '$dynamicRef': {
        const r = resolver.lookup(v);
        return this.descend(r.contents, instance, resolver, all, oas, r.resolver);
      }
      case 'type': {
        const types = typeof v === 'string' ? [v] : v;
        if (!Array.isArray(types)) throw new SchemaEvalError(`type must be a string or a list, not ${typeName(v)}`);
        for (const t of types) if (isType(instance, t)) return true;
        return false;
      }
      case 'enum': {
        const values = Array.isArray(v) ? v : isObj(v) ? Object.keys(v) : typeof v === 'string' ? [...v] : null;
        if (!values) throw new SchemaEvalError(`enum must be a list, not ${typeName(v)}`);
        return values.some((e) => schemaEqual(e, instance));
      }
      case 'const':
        return schemaEqual(instance, v);
      case 'allOf':
      case 'anyOf':
      case 'oneOf':
        if (oas && hasOwn(schema, 'discriminator')) return this.discriminator(schema, instance, resolver, all, oas);
        return this.combinator(k, v, instance, resolver, all, oas);
      case 'not':
        return !this.isValid(v, instance, resolver, oas);
      case 'if':
        if (this.isValid(v, instance, resolver, oas)) return hasOwn(schema, 'then') ? this.descend(schema.then, instance, resolver, all, oas) : true;
        return hasOwn(schema, 'else') ? this.descend(schema.else, instance, resolver, all, oas) : true;
      case 'properties': {
        if (!isObj(instance)) return true;
        let ok = true;
        for (const [p, sub] of entries(v, k)) {
          if (hasOwn(instance, p) && !this.descend(sub, instance[p], resolver, all, oas)) {
            ok = false;
            if (!all) return false;
          }
        }
        return ok;
      }
      case 'patternProperties': {
        if (!isObj(instance)) return true;
        let ok = true;
        for (const [pattern, sub] of entries(v, k)) {
          for (const p of Object.keys(instance)) {
            if (reSearch(pattern, p) && !this.descend(sub, instance[p], resolver, all, oas)) {
              ok = false;
              if (!all) return false;
            }
          }
        }
        return ok;
      }
      case 'additionalProperties': {
        if (!isObj(instance)) return true;
        const extras = this.additional(schema, instance);
        if (isObj(v)) {
          let ok = true;
          for (const p of extras) {
            if (!this.descend(v, instance[p], resolver, all, oas)) {
              ok = false;
              if (!all) return false;
            }
          }
          return ok;
        }
        return pyTruthy(v) || extras.length === 0;
      }
      case 'propertyNames': {
        if (!isObj(instance)) return true;
        let ok = true;
        for (const p of Object.keys(instance)) {
          if (!this.descend(v, p, resolver, all, oas)) {
            ok = false;
            if (!all) return false;
          }
        }
        return ok;
      }
      case 'required': {
        if (!isObj(instance)) return true;
        for (const p of iterable(v, k)) if (typeof p !== 'string' || !hasOwn(instance, p)) return false;
        return true;
      }
      case 'dependentRequired': {
        if (!isObj(instance)) return true;
        for (const [p, deps] of entries(v, k)) {
          if (!hasOwn(instance, p)) continue;
          for (const d of iterable(deps, k)) if (typeof d !== 'string' || !hasOwn(instance, d)) return false;
        }
        return true;
      }
      case 'dependentSchemas': {
        if (!isObj(instance)) return true;
        let ok = true;
        for (const [p, sub] of entries(v, k)) {
          if (hasOwn(instance, p) && !this.descend(sub, instance, resolver, all, oas)) {
            ok = false;
            if (!all) return false;
          }
        }
        return ok;
      }
      case 'minProperties':
        return !isObj(instance) || !(Object.keys(instance).length < num(v, k));
      case 'maxProperties':
        return !isObj(instance) || !(Object.keys(instance).length > num(v, k));
      case 'prefixItems': {
        if (!Array.isArray(instance)) return true;
        const subs = iterable(v, k);
        let ok = true;
        for (let i = 0; i < Math.min(subs.length, instance.length); i++) {
          if (!this.descend(subs[i], instance[i], resolver, all, oas)) {
            ok = false;
            if (!all) return false;
          }
        }
        return ok;
      }
      case 'items': {
        if (!Array.isArray(instance)) return true;
        const prefix = hasOwn(schema, 'prefixItems') ? iterable(schema.prefixItems, 'prefixItems').length : 0;
        if (instance.length <= prefix) return true;
        if (v === false) return false;
        let ok = true;
        for (let i = prefix; i < instance.length; i++) {
          if (!this.descend(v, instance[i], resolver, all, oas)) {
            ok = false;
            if (!all) return false;
          }
        }
        return ok;
      }
      case 'contains': {
        if (!Array.isArray(instance)) return true;
        const min = hasOwn(schema, 'minContains') ? num(schema.minContains, 'minContains') : 1;
        const max = hasOwn(schema, 'maxContains') ? num(schema.maxContains, 'maxContains') : instance.length;
        let matches = 0;
        for (const item of instance) {
          if (this.isValid(v, item, resolver, oas) && ++matches > max) return false;
        }
        return !(matches < min);
      }
      case 'minItems':
        return !Array.isArray(instance) || !(instance.length < num(v, k));
      case 'maxItems':
        return !Array.isArray(instance) || !(instance.length > num(v, k));
      case 'uniqueItems': {
        if (!pyTruthy(v) || !Array.isArray(instance)) return true;
        for (let i = 1; i < instance.length; i++) for (let j = 0; j < i; j++) if (schemaEqual(instance[i], instance[j])) return false;
        return true;
      }
      case 'unevaluatedItems': {
        if (!Array.isArray(instance)) return true;
        const seen = new Set(this.evaluatedItems(schema, instance, resolver, oas));
        for (let i = 0; i < instance.length; i++) if (!seen.has(i)) return false;
        return true;
      }
      case 'unevaluatedProperties': {
        if (!isObj(instance)) return true;
        const seen = new Set(this.evaluatedProperties(schema, instance, resolver, oas));
        let ok = true;
        // Python checks every unevaluated property with full error iteration
        for (const p of Object.keys(instance)) if (!seen.has(p) && !this.descend(v, instance[p], resolver, true, oas)) ok = false;
        return ok;
      }
      case 'minLength':
        return typeof instance !== 'string' || !(pyLen(instance) < num(v, k));
      case 'maxLength':
        return typeof instance !== 'string' || !(pyLen(instance) > num(v, k));
      case 'pattern':
        return typeof instance !== 'string' || reSearch(v, instance);
      case 'format':
        if (this.opts.assertRegexFormat && v === 'regex' && typeof instance === 'string') {
          try {
            pyCompile(instance);
          } catch (e) {
            if (e instanceof PyRegexError) return false;
            throw e;
          }
        }
        return true;
      // written as Python's failing comparison, so NaN passes as it does there
      case 'minimum':
        return typeof instance !== 'number' || !(instance < num(v, k));
      case 'maximum':
        return typeof instance !== 'number' || !(instance > num(v, k));
      case 'exclusiveMinimum':
        return typeof instance !== 'number' || !(instance <= num(v, k));
      case 'exclusiveMaximum':
        return typeof instance !== 'number' || !(instance >= num(v, k));
      case 'multipleOf':
        return typeof instance !== 'number' || isMultipleOf(instance, num(v, k));
      default:
        return true; // annotations and unknown keywords
    }
  }

  private combinator(k: string, v: unknown, instance: unknown, resolver: Resolver, all: boolean, oas: boolean): boolean {
    const subs = iterable(v, k);
    if (k === 'allOf') {
      let ok = true;
      for (const s of subs) {
        if (!this.descend(s, instance, resolver, all, oas)) {
          ok = false;
          if (!all) return false;
        }
      }
      return ok;
    }
    // anyOf / oneOf collect every error of a branch before moving on
    let first = -1;
    for (let i = 0; i < subs.length; i++) {
      if (this.descend(subs[i], instance, resolver, true, oas)) {
        first = i;
        break;
      }
    }
    if (first < 0) return false;
    if (k === 'anyOf') return true;
    let more = false;
    for (let i = first + 1; i < subs.length; i++) if (this.isValid(subs[i], instance, resolver, oas)) more = true;
    return !more;
  }

  /** The OpenAPI rule for `discriminator` next to `anyOf` / `oneOf` / `allOf`. */
  private discriminator(schema: Obj, instance: unknown, resolver: Resolver, all: boolean, oas: boolean): boolean {
    const d = schema.discriminator;
    if (!isObj(d)) throw new SchemaEvalError(`discriminator must be an object, not ${typeName(d)}`);
    if (!hasOwn(d, 'propertyName')) throw new SchemaEvalError('discriminator has no propertyName');
    const prop = d.propertyName;
    if (!isObj(instance)) throw new SchemaEvalError(`a ${typeName(instance)} instance has no discriminating property`);
    if (Array.isArray(prop) || isObj(prop)) throw new SchemaEvalError(`unhashable discriminator propertyName: ${typeName(prop)}`);
    const value = typeof prop === 'string' ? own(instance, prop) : undefined;
    if (!pyTruthy(value ?? null)) return false;
    const mapping = hasOwn(d, 'mapping') ? d.mapping : {};
    if (!isObj(mapping)) throw new SchemaEvalError(`discriminator mapping must be an object, not ${typeName(mapping)}`);
    if (Array.isArray(value) || isObj(value)) throw new SchemaEvalError(`unhashable discriminator value: ${typeName(value)}`);
    const mapped = typeof value === 'string' ? own(mapping, value) : undefined;
    const ref = pyTruthy(mapped ?? null) ? mapped : `#/components/schemas/${pyStr(value)}`;
    if (typeof ref !== 'string') return false;
    try {
      resolver.lookup(ref);
    } catch (e) {
      if (e instanceof SchemaEvalError) return false;
      throw e;
    }
    return this.descend({ $ref: ref }, instance, resolver, all, oas);
  }

  /** python-jsonschema `find_additional_properties`: names matched by neither `properties` nor any pattern. */
  private additional(schema: Obj, instance: Obj): string[] {
    const props = hasOwn(schema, 'properties') ? schema.properties : {};
    const pats = hasOwn(schema, 'patternProperties') ? schema.patternProperties : {};
    const joined = isObj(pats) ? Object.keys(pats).join('|') : '';
    const out: string[] = [];
    for (const p of Object.keys(instance)) {
      if (isObj(props) ? hasOwn(props, p) : false) continue;
      if (joined && reSearch(joined, p)) continue;
      out.push(p);
    }
    return out;
  }

  /** python-jsonschema `find_evaluated_item_indexes_by_schema`. */
  private evaluatedItems(schema: unknown, instance: unknown[], resolver: Resolver, oas: boolean): number[] {
    if (typeof schema === 'boolean') return [];
    if (!isObj(schema)) throw new SchemaEvalError(`a schema must be an object or a boolean, not ${typeName(schema)}`);
    if (hasOwn(schema, 'items')) return instance.map((_, i) => i);
    const out: number[] = [];
    for (const k of ['$ref', '$dynamicRef']) {
      if (own(schema, k) === undefined || schema[k] === null) continue;
      const r = resolver.lookup(schema[k]);
      out.push(...this.evaluatedItems(r.contents, instance, r.resolver, oas));
    }
    if (hasOwn(schema, 'prefixItems')) {
      const n = iterable(schema.prefixItems, 'prefixItems').length;
      for (let i = 0; i < n; i++) out.push(i);
    }
    if (hasOwn(schema, 'if')) {
      if (this.isValid(schema.if, instance, resolver, oas)) {
        out.push(...this.evaluatedItems(schema.if, instance, resolver, oas));
        if (hasOwn(schema, 'then')) out.push(...this.evaluatedItems(schema.then, instance, resolver, oas));
      } else if (hasOwn(schema, 'else')) out.push(...this.evaluatedItems(schema.else, instance, resolver, oas));
    }
    for (const k of ['contains', 'unevaluatedItems']) {
      if (!hasOwn(schema, k)) continue;
      instance.forEach((item, i) => {
        if (this.isValid(schema[k], item, resolver, oas)) out.push(i);
      });
    }
    for (const k of ['allOf', 'oneOf', 'anyOf']) {
      if (!hasOwn(schema, k)) continue;
      for (const s of iterable(schema[k], k)) {
        if (this.descend(s, instance, resolver, false, oas)) out.push(...this.evaluatedItems(s, instance, resolver, oas));
      }
    }
    return out;
  }

  /** python-jsonschema `find_evaluated_property_keys_by_schema`. */
  private evaluatedProperties(schema: unknown, instance: Obj, resolver: Resolver, oas: boolean): string[] {
    if (typeof schema === 'boolean') return [];
    if (!isObj(schema)) throw new SchemaEvalError(`a schema must be an object or a boolean, not ${typeName(schema)}`);
    const out: string[] = [];
    for (const k of ['$ref', '$dynamicRef']) {
      if (own(schema, k) === undefined || schema[k] === null) continue;
      const r = resolver.lookup(schema[k]);
      out.push(...this.evaluatedProperties(r.contents, instance, r.resolver, oas));
    }
    const props = own(schema, 'properties');
    if (isObj(props)) for (const p of Object.keys(props)) if (hasOwn(instance, p)) out.push(p);
    for (const k of ['additionalProperties', 'unevaluatedProperties']) {
      const sub = own(schema, k);
      if (sub === undefined || sub === null) continue;
      for (const p of Object.keys(instance)) if (this.descend(sub, instance[p], resolver, false, oas)) out.push(p);
    }
    if (hasOwn(schema, 'patternProperties')) {
      const pats = schema.patternProperties;
      for (const p of Object.keys(instance)) for (const pattern of keysOf(pats)) if (reSearch(pattern, p)) out.push(p);
    }
    if (hasOwn(schema, 'dependentSchemas')) {
      for (const [p, sub] of entries(schema.dependentSchemas, 'dependentSchemas')) {
        if (hasOwn(instance, p)) out.push(...this.evaluatedProperties(sub, instance, resolver, oas));
      }
    }
    for (const k of ['allOf', 'oneOf', 'anyOf']) {
      const subs = own(schema, k);
      if (subs === undefined) continue;
      for (const s of iterable(subs, k)) {
        if (this.descend(s, instance, resolver, false, oas)) out.push(...this.evaluatedProperties(s, instance, resolver, oas));
      }
    }
    if (hasOwn(schema, 'if')) {
      if (this.isValid(schema.if, instance, resolver, oas)) {
        out.push(...this.evaluatedProperties(schema.if, instance, resolver, oas));
        if (hasOwn(schema, 'then')) out.push(...this.evaluatedProperties(schema.then, instance, resolver, oas));
      } else if (hasOwn(schema, 'else')) out.push(...this.evaluatedProperties(schema.else, instance, resolver, oas));
    }
    return out;
  }
}

/** Python iteration over a keyword value that should be a list (a dict gives its keys, a string its characters). */
function iterable(v: unknown, keyword: string): unknown[] {
  if (Array.isArray(v)) return v;
  try {
    return pyIter(v);
  } catch (e) {
    if (e instanceof PyException) throw new SchemaEvalError(`${keyword}: ${e.pyMessage}`);
    throw e;
  }
}

function keysOf(v: unknown): string[] {
  if (isObj(v)) return Object.keys(v);
  return iterable(v, 'patternProperties') as string[];
}

/** `.items()` of a keyword value that must be a dict. */
function entries(v: unknown, keyword: string): [string, unknown][] {
  if (!isObj(v)) throw new SchemaEvalError(`${keyword}: '${typeName(v)}' object has no attribute 'items'`);
  return Object.entries(v);
}

// ---------------------------------------------------------------------------------------------
// The meta-schema and the public entry points

const require = createRequire(import.meta.url);
const META_FILES = ['schema', 'meta/core', 'meta/applicator', 'meta/unevaluated', 'meta/validation', 'meta/meta-data', 'meta/format-annotation', 'meta/content'];
const META_ID = 'https://json-schema.org/draft/2020-12/schema';

/** The JSON Schema 2020-12 meta-schema documents (shipped by ajv), indexed once. */
const metaRegistry = new Registry();
for (const f of META_FILES) {
  const doc = require(`ajv/dist/refs/json-schema-2020-12/${f}.json`) as Obj;
  metaRegistry.add(doc.$id as string, doc);
}

/** A schema indexed for validation: its registry (over the meta-schemas) and root resolver. */
export interface Prepared {
  schema: unknown;
  resolver: Resolver;
}

/** Indexes a schema document's resources and anchors (Python builds the same registry per validator). */
export function prepare(schema: unknown): Prepared {
  const registry = new Registry(metaRegistry);
  const id = isObj(schema) ? idOf(schema) : undefined;
  const uri = id ?? '';
  registry.add(uri, schema);
  return { schema, resolver: new Resolver(uri, null, registry) };
}

const metaResolver = new Resolver(META_ID, null, metaRegistry);

/** Python `Draft202012Validator.check_schema`: valid under the meta-schema, `format: regex` asserted. */
export function checkSchema(schema: unknown): boolean {
  return new Validation({ assertRegexFormat: true, oas: false }).root(metaRegistry.resource(META_ID), schema, metaResolver, false);
}

/** Python `OAS31Validator(schema).iter_errors(instance)` is empty. Throws SchemaEvalError where Python raises. */
export function isValid(prepared: Prepared, instance: unknown): boolean {
  return new Validation({ assertRegexFormat: false, oas: true }).root(prepared.schema, instance, prepared.resolver, true);
}
