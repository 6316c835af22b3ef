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
import { pyJsonLoads } from './pyjson.js';
import { PyRegex, PyRegexUnsupportedError } from './pyregex.js';

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

const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
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

/**
 * Removes keywords ajv gives a meaning that the Python validator does not: `nullable` (an
 * OpenAPI 3.0 keyword ajv honours, a no-op in 3.1) and `$async` (makes ajv return a promise).
 */
function dropAjvOnlyKeywords(schema: unknown): void {
  if (!isObject(schema)) return;
  delete schema.nullable;
  delete schema.$async;
  for (const k of SCHEMA_MAPS) {
    const m = schema[k];
    if (isObject(m)) for (const v of Object.values(m)) dropAjvOnlyKeywords(v);
  }
  for (const k of SCHEMA_VALUES) dropAjvOnlyKeywords(schema[k]);
  for (const k of SCHEMA_LISTS) {
    const l = schema[k];
    if (Array.isArray(l)) for (const v of l) dropAjvOnlyKeywords(v);
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
    code: { regExp: pyRegExpEngine },
  });
}

const CACHE_LIMIT = 256;
let ajv = newAjv();
const cache = new Map<string, ValidateFunction>();

function compile(schema: AnySchema, key: string): ValidateFunction {
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  let fn: ValidateFunction;
  try {
    fn = ajv.compile(schema);
  } catch (e) {
    // another schema registered the same $id: start from a clean instance and retry once
    if (!/already exists/.test((e as Error).message)) throw e;
    ajv = newAjv();
    cache.clear();
    fn = ajv.compile(schema);
  }
  cache.set(key, fn);
  if (cache.size > CACHE_LIMIT) {
    const [oldKey, oldFn] = cache.entries().next().value as [string, ValidateFunction];
    cache.delete(oldKey);
    ajv.removeSchema(oldFn.schema as AnySchema);
  }
  return fn;
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
  let validate: ValidateFunction;
  try {
    if (isObject(schema) && typeof schema.$schema === 'string') delete schema.$schema; // ignored upstream
    dropAjvOnlyKeywords(schema);
    if (!isObject(schema) && typeof schema !== 'boolean') {
      return { reward: 0.0, stage: 'schema_error', message: 'a schema must be an object or a boolean' };
    }
    validate = compile(schema as AnySchema, JSON.stringify(schema));
  } catch (e) {
    if (e instanceof PyRegexUnsupportedError) return { reward: 0.0, stage: 'unsupported', message: e.message };
    return { reward: 0.0, stage: 'schema_error', message: (e as Error).message };
  }
  if (validate(instance)) return { reward: 1.0 };
  const err = validate.errors?.[0];
  return { reward: 0.0, stage: 'validation_error', message: err ? `${err.instancePath || '/'} ${err.message ?? ''}` : 'invalid' };
}
