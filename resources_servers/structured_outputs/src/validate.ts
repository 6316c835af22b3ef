/**
 * JSON structured-output scoring, as upstream: parse the schema, make it strict (every object
 * property required, no additional properties), parse the model's text with Python's JSON rules
 * and validate it against JSON Schema 2020-12 (the OpenAPI 3.1 dialect) without asserting
 * `format`. Any failure scores 0.0.
 *
 * This module is also the worker-thread entry: `scoreJson` takes and returns plain data.
 */
import Ajv2020Import from 'ajv/dist/2020.js';
import type { AnySchema, ValidateFunction } from 'ajv';
import { NgError, PyRegex, PyRegexError, PyRegexUnsupportedError, pyJsonLoads as pyJsonLoadsLossless, toPlain } from '@nemo-gym/core';

/** Python `json.loads`: JSON.parse, and the core's Python-grammar parser (NaN, Infinity) when JSON.parse refuses. */
function pyJsonLoads(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return toPlain(pyJsonLoadsLossless(text));
  }
}

// ajv ships CommonJS: module.exports is the class, which also carries itself as `.default`
const Ajv2020 = Ajv2020Import.default;

export type FailureStage = 'schema_parse' | 'schema_error' | 'parse_error' | 'validation_error' | 'unsupported';

export interface ScoreResult {
  reward: number;
  /** Where a 0.0 came from (for logs and tests; not part of the verify response). */
  stage?: FailureStage;
  message?: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Python `list(x)`: dict keys, list items, string characters; anything else is a TypeError. */
function pyList(x: unknown): unknown[] {
  if (Array.isArray(x)) return [...x];
  if (typeof x === 'string') return [...x];
  if (isObject(x)) return Object.keys(x);
  throw new TypeError(`'${x === null ? 'NoneType' : typeof x}' object is not iterable`);
}

/**
 * Upstream's strictify, in place: every dict holding `properties` gets `required` = its keys and
 * `additionalProperties: false`; recursion goes into every dict value (lists are not entered).
 */
export function strictify(node: unknown): void {
  if (!isObject(node)) return;
  if ('properties' in node) {
    node.required = pyList(node.properties);
    node.additionalProperties = false;
  }
  for (const v of Object.values(node)) strictify(v);
}

/** Keywords whose value is a map of subschemas, a subschema, or a list of subschemas. */
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'];
const SCHEMA_VALUES = [
  'additionalProperties',
  'items',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'additionalItems',
];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];

/** The schema is invalid for the Python validator (its meta-schema check fails). */
export class SchemaInvalidError extends NgError {
  override readonly name = 'SchemaInvalidError';
  constructor(message: string) {
    super('NG_ERR_SCHEMA_INVALID', message);
  }
}

function checkPythonRegex(pattern: string, where: string): void {
  try {
    new PyRegex(pattern);
  } catch (e) {
    if (e instanceof PyRegexError) throw new SchemaInvalidError(`${where} ${JSON.stringify(pattern)} is not a valid regex: ${e.message}`);
    throw e;
  }
}

/** Resolves a `#/...` JSON pointer inside the document. */
function resolvePointer(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let token: string;
    try {
      token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(token)) node = node[Number(token)];
    else if (isObject(node) && Object.prototype.hasOwnProperty.call(node, token)) node = node[token];
    else return undefined;
  }
  return node;
}

const FAILS = { not: {} };
const PY_FALSY = [null, false, 0, '', [], {}];

/**
 * With `discriminator` next to `anyOf`/`oneOf`/`allOf`, the Python OAS 3.1 validator does not
 * evaluate those lists: it reads the instance's `propertyName` value (a non-object instance or a
 * falsy value fails), takes `mapping[value]` or `#/components/schemas/<value>` and validates the
 * instance against that reference (unresolvable: fails). This rewrites the node into the same rule.
 */
function rewriteDiscriminator(node: Record<string, unknown>, root: unknown): void {
  const d = node.discriminator;
  delete node.anyOf;
  delete node.oneOf;
  delete node.allOf;
  if (!isObject(d) || typeof d.propertyName !== 'string' || (d.mapping !== undefined && !isObject(d.mapping))) {
    node.allOf = [FAILS];
    return;
  }
  const prop = d.propertyName;
  const mapping = (d.mapping ?? {}) as Record<string, unknown>;
  const refs = new Map<string, unknown>();
  const components = isObject(root) && isObject(root.components) && isObject(root.components.schemas) ? root.components.schemas : {};
  for (const name of Object.keys(components)) refs.set(name, `#/components/schemas/${name}`);
  for (const [value, target] of Object.entries(mapping)) refs.set(value, target ? target : `#/components/schemas/${value}`);
  const branches = [...refs].map(([value, ref]) => {
    const target = typeof ref === 'string' ? resolvePointer(root, ref) : undefined;
    const resolvable = typeof ref === 'string' && (isObject(target) || typeof target === 'boolean');
    return { properties: { [prop]: { const: value } }, ...(resolvable ? { $ref: ref } : FAILS) };
  });
  node.allOf = [
    {
      type: 'object',
      required: [prop],
      properties: { [prop]: { not: { enum: PY_FALSY } } },
      ...(branches.length ? { anyOf: branches } : FAILS),
    },
  ];
}

/**
 * Brings the schema in line with the Python validator before ajv sees it:
 * - every `pattern` and `patternProperties` key must compile as a Python regex, wherever it sits
 *   (Python's meta-schema check asserts `format: regex` on the whole document);
 * - `nullable` (an OpenAPI 3.0 keyword ajv honours, a no-op in 3.1), `$async` (makes ajv
 *   return a promise) and `dependencies` (draft-07; not applied under 2020-12) are removed;
 * - `discriminator` next to `anyOf`/`oneOf`/`allOf` gets the Python validator's dispatch rule.
 */
function prepareForAjv(schema: unknown, root: unknown): void {
  if (!isObject(schema)) return;
  delete schema.nullable;
  delete schema.$async;
  if (typeof schema.pattern === 'string') checkPythonRegex(schema.pattern, 'pattern');
  if (isObject(schema.patternProperties)) {
    for (const key of Object.keys(schema.patternProperties)) checkPythonRegex(key, 'patternProperties key');
  }
  for (const k of SCHEMA_MAPS) {
    const m = schema[k];
    if (isObject(m)) for (const v of Object.values(m)) prepareForAjv(v, root);
  }
  for (const k of SCHEMA_VALUES) prepareForAjv(schema[k], root);
  for (const k of SCHEMA_LISTS) {
    const l = schema[k];
    if (Array.isArray(l)) for (const v of l) prepareForAjv(v, root);
  }
  if ('discriminator' in schema && ('anyOf' in schema || 'oneOf' in schema || 'allOf' in schema)) {
    rewriteDiscriminator(schema, root);
  }
  // draft-07 `dependencies`: checked by the 2020-12 meta-schema but not applied by a 2020-12
  // validator; ajv would apply it
  delete schema.dependencies;
  // ajv 8.20 skips `contains` on an empty array when the same schema has `prefixItems`
  // ({"prefixItems": [{"not": {}}], "contains": {}} accepts []); a subschema of its own is unaffected
  if ('contains' in schema) {
    const moved: Record<string, unknown> = { contains: schema.contains };
    for (const k of ['minContains', 'maxContains']) if (k in schema) moved[k] = schema[k];
    delete schema.contains;
    delete schema.minContains;
    delete schema.maxContains;
    schema.allOf = Array.isArray(schema.allOf) ? [...schema.allOf, moved] : [moved];
  }
}

/** `pattern` / `patternProperties` are Python regexes searched with `re.search`. */
const pyRegExpEngine = Object.assign(
  (pattern: string): { test: (s: string) => boolean } => {
    const t = new PyRegex(pattern).translated;
    return new RegExp(t.source, t.flags);
  },
  { code: 'pyRegExp' },
);

function newAjv() {
  return new Ajv2020({
    strict: false,
    validateFormats: false,
    allErrors: false,
    strictNumbers: false,
    // the schema is checked against the meta-schema explicitly, before ajv-specific rewriting
    validateSchema: false,
    code: { regExp: pyRegExpEngine },
  });
}

const CACHE_LIMIT = 256;
let ajv = newAjv();

/** A compiled validator, or the verdict for a schema that cannot be used. */
type Compiled = ValidateFunction | ScoreResult;
/** Rows repeat (several rollouts per task): compiled schemas are kept, least recently used dropped. */
const cache = new Map<string, Compiled>();

function compileFresh(schema: AnySchema): ValidateFunction {
  try {
    return ajv.compile(schema);
  } catch (e) {
    // another schema registered the same $id: start from a clean instance and retry once
    if (!/already exists/.test((e as Error).message)) throw e;
    ajv = newAjv();
    cache.clear();
    return ajv.compile(schema);
  }
}

/** Meta-schema check, Python-compatibility rewriting and compilation of a strictified schema. */
function compiledFor(schema: unknown): Compiled {
  const key = JSON.stringify(schema);
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  let out: Compiled;
  try {
    if (!isObject(schema) && typeof schema !== 'boolean') {
      out = { reward: 0.0, stage: 'schema_error', message: 'a schema must be an object or a boolean' };
    } else if (!ajv.validateSchema(schema as AnySchema)) {
      out = { reward: 0.0, stage: 'schema_error', message: `schema is invalid: ${ajv.errorsText(ajv.errors)}` };
    } else {
      prepareForAjv(schema, schema);
      out = compileFresh(schema as AnySchema);
    }
  } catch (e) {
    out =
      e instanceof PyRegexUnsupportedError
        ? { reward: 0.0, stage: 'unsupported', message: e.message }
        : { reward: 0.0, stage: 'schema_error', message: (e as Error).message };
  }
  cache.set(key, out);
  if (cache.size > CACHE_LIMIT) {
    const [oldKey, old] = cache.entries().next().value as [string, Compiled];
    cache.delete(oldKey);
    if (typeof old === 'function') ajv.removeSchema(old.schema as AnySchema);
  }
  return out;
}

export function scoreJson(schemaStr: string, responseText: string): ScoreResult {
  let schema: unknown;
  try {
    schema = pyJsonLoads(schemaStr);
    strictify(schema);
  } catch (e) {
    return { reward: 0.0, stage: 'schema_parse', message: (e as Error).message };
  }
  let instance: unknown;
  try {
    instance = pyJsonLoads(responseText);
  } catch (e) {
    return { reward: 0.0, stage: 'parse_error', message: (e as Error).message };
  }
  if (isObject(schema) && typeof schema.$schema === 'string') delete schema.$schema; // ignored upstream
  const validate = compiledFor(schema);
  if (typeof validate !== 'function') return validate;
  if (validate(instance)) return { reward: 1.0 };
  const err = validate.errors?.[0];
  return { reward: 0.0, stage: 'validation_error', message: err ? `${err.instancePath || '/'} ${err.message ?? ''}` : 'invalid' };
}
