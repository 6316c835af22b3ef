/**
 * JSON structured-output scoring, as upstream: parse the schema, make it strict (every object
 * property required, no additional properties), parse the model's text with Python's JSON rules
 * and validate it against JSON Schema 2020-12 (the OpenAPI 3.1 dialect) without asserting
 * `format`. Any failure scores 0.0.
 *
 * This module is also the worker-thread entry: `scoreJson` takes and returns plain data.
 */
import { pyIter, pyJsonLoadsPlain, PyRegexUnsupportedError } from '@nemo-gym/core/py';
import { checkSchema, isValid, prepare, SchemaEvalError, type Prepared } from './jsonschema.js';

export type FailureStage = 'schema_parse' | 'schema_error' | 'parse_error' | 'validation_error' | 'unsupported' | 'internal_error';

export interface ScoreResult {
  reward: number;
  /** Where a 0.0 came from (for logs and tests; not part of the verify response). */
  stage?: FailureStage;
  message?: string;
  /**
   * Set when verification raised an error instead of reaching a verdict (an unresolvable
   * reference, a regex that does not compile at run time, nesting past the recursion limit, a
   * fault here): the reason, returned in the verify response beside the 0.0.
   */
  error?: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Upstream's strictify, in place: every dict holding `properties` gets `required` = its keys and
 * `additionalProperties: false`; recursion goes into every dict value (lists are not entered).
 */
export function strictify(node: unknown): void {
  if (!isObject(node)) return;
  if (Object.prototype.hasOwnProperty.call(node, 'properties')) {
    node.required = pyIter(node.properties);
    node.additionalProperties = false;
  }
  for (const v of Object.values(node)) strictify(v);
}

const CACHE_LIMIT = 256;

/** A schema ready to validate against, or the verdict for a schema that cannot be used. */
type Compiled = { prepared: Prepared } | ScoreResult;
/** Rows repeat (several rollouts per task): checked and indexed schemas are kept, least recently used dropped. */
const cache = new Map<string, Compiled>();

/** Meta-schema check and indexing of a strictified schema (cached by its text). */
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
    out = checkSchema(schema)
      ? { prepared: prepare(schema) }
      : { reward: 0.0, stage: 'schema_error', message: 'the schema is not valid under the JSON Schema 2020-12 meta-schema' };
  } catch (e) {
    out = failure(e, 'schema_error');
  }
  cache.set(key, out);
  if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  return out;
}

/** An exception while checking: what Python raises scores 0.0; a regex JavaScript cannot run is reported; anything else is a fault here, still 0.0, with its reason. */
function failure(e: unknown, stage: FailureStage): ScoreResult {
  if (e instanceof PyRegexUnsupportedError) return { reward: 0.0, stage: 'unsupported', message: e.message };
  if (e instanceof SchemaEvalError) return { reward: 0.0, stage, message: e.message, error: e.message };
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return { reward: 0.0, stage: 'internal_error', message, error: `internal error while validating: ${message}` };
}

/** The reward for an answer: 1.0 when it validates against the strictified schema. Never throws. */
export function scoreJson(schemaStr: string, responseText: string): ScoreResult {
  try {
    return score(schemaStr, responseText);
  } catch (e) {
    return failure(e, 'internal_error');
  }
}

function score(schemaStr: string, responseText: string): ScoreResult {
  let schema: unknown;
  try {
    schema = pyJsonLoadsPlain(schemaStr);
    strictify(schema);
  } catch (e) {
    return { reward: 0.0, stage: 'schema_parse', message: (e as Error).message };
  }
  let instance: unknown;
  try {
    instance = pyJsonLoadsPlain(responseText);
  } catch (e) {
    return { reward: 0.0, stage: 'parse_error', message: (e as Error).message };
  }
  const compiled = compiledFor(schema);
  if (!('prepared' in compiled)) return compiled;
  try {
    return isValid(compiled.prepared, instance) ? { reward: 1.0 } : { reward: 0.0, stage: 'validation_error', message: 'the answer does not validate against the schema' };
  } catch (e) {
    return failure(e, 'validation_error');
  }
}
