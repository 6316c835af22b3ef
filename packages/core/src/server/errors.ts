/**
 * How a failed request is answered: FastAPI-shaped validation details (so tool errors read the
 * same to a model as upstream's) and the mapping from a thrown value to a status and body.
 */
import type { z } from 'zod';
import { redactUrlCredentials } from '../config/redact.js';
import { HttpError, NgError, describeError } from '../errors.js';
import { errorBody } from '../http/error-body.js';
import { RawJson } from '../http/raw-json.js';
import type { Logger } from './logger.js';

export interface ValidationDetail {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
}

/** One FastAPI-style validation detail of the request body: `path` is where in the body (loc is `['body', ...path]`). */
export function validationDetail(type: string, path: readonly (string | number)[], msg: string, input: unknown): ValidationDetail {
  return { type, loc: ['body', ...path], msg, input };
}

/** The 422 answer holding these validation details, as FastAPI answers a body it refuses. */
export function validationError(...details: ValidationDetail[]): HttpError {
  return new HttpError(422, details);
}

/** The detail for a body (or a field, at `path`) that must be a JSON object and is not, worded as pydantic words it. */
export function notAnObjectDetail(input: unknown, path: readonly (string | number)[] = []): ValidationDetail {
  return validationDetail('model_attributes_type', path, 'Input should be a valid dictionary or object to extract fields from', input);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const p of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[p];
  }
  return node;
}

export function zodIssuesToDetail(issues: readonly z.core.$ZodIssue[], body: unknown): ValidationDetail[] {
  return issues.map((issue) => {
    const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)) as (string | number)[];
    const input = path.length ? valueAt(body, path.slice(0, -1)) : body;
    const own = valueAt(body, path);
    if (issue.code === 'invalid_type' && own === undefined) {
      return validationDetail('missing', path, 'Field required', input ?? null);
    }
    if (issue.code === 'unrecognized_keys') {
      return validationDetail('extra_forbidden', [...path, ...issue.keys], 'Extra inputs are not permitted', own ?? null);
    }
    const type = issue.code === 'invalid_type' ? `${issue.expected}_type` : issue.code;
    return validationDetail(type, path, issue.message, own ?? null);
  });
}

/** The 422 answer for a body that is not JSON, worded as FastAPI words it. */
export function jsonInvalid(err: Error): HttpError {
  return validationError(validationDetail('json_invalid', [0], `JSON decode error: ${err.message}`, {}));
}

/** The 422 answer for a missing body on a route whose schema needs fields. */
export function emptyBodyDetail(): ValidationDetail[] {
  return [validationDetail('missing', [], 'Field required', null)];
}

/**
 * The answer for a failed request: HttpError keeps its status, a coded error whose table entry has
 * a status answers that status with its message, a client error raised by Fastify
 * keeps its 4xx (400 answers 422, as FastAPI does); anything else is a logged, short 500. Every
 * answer of a coded error carries its code (`{detail, code}`).
 * Texts built from a configured URL show its credentials masked (coded errors are masked when made).
 */
export function errorAnswer(err: unknown, log: Logger, method: string, url: string): RawJson {
  if (err instanceof HttpError) return new RawJson(errorBody(err.detail, err.code, err.extra), err.status, err.headers);
  if (err instanceof NgError && err.httpStatus !== undefined) return new RawJson(errorBody(err.message, err.code), err.httpStatus);
  const e = err as { statusCode?: unknown; message?: string };
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new RawJson(errorBody(redactUrlCredentials(e.message ?? 'Bad request')), e.statusCode === 400 ? 422 : e.statusCode);
  }
  log.error(`${method} ${url} failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  // A coded error answers {detail, code}; anything else its description alone, as a JSON string (as before codes).
  return new RawJson(err instanceof NgError ? errorBody(describeError(err), err.code) : JSON.stringify(describeError(err)), 500);
}
