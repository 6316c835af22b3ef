/**
 * Shared pieces of the SDK-backed model servers (OpenAI, Azure OpenAI): answering backend
 * failures with the backend's status and error body plus a clear explanation, and validating
 * what the backend returned.
 */
import type { z } from 'zod';
import { compiled } from '../compiled-schema.js';
import { HttpError, NgError } from '../errors.js';
import { errorBody } from '../http/error-body.js';
import { RawJson } from '../http/raw-json.js';
import { UpstreamError, fromOpenAIClientError, redactSecret } from './upstream.js';

/**
 * The answer for a failed backend call (a handler returns it). A backend HTTP error keeps its
 * status and its `error` object (so OpenAI clients see the original message and code) and gains a `detail`
 * naming the backend; transport failures answer 502/504 with a `detail`.
 */
export function backendErrorAnswer(err: unknown, url: string, apiKey: string): RawJson {
  const mapped = fromOpenAIClientError(err, url, apiKey);
  if (mapped instanceof UpstreamError && mapped.kind === 'status' && mapped.upstreamBody) {
    // The backend's own error text may echo credentials; scrub the key from it as well.
    const upstreamBody = redactSecret(mapped.upstreamBody, apiKey);
    let error: unknown = null;
    try {
      error = JSON.parse(upstreamBody);
    } catch {
      error = upstreamBody;
    }
    const body: Record<string, unknown> = { detail: mapped.message };
    if (mapped.code !== 'NG_ERR_HTTP') body.code = mapped.code;
    if (error !== null && error !== undefined) body.error = error;
    return new RawJson(JSON.stringify(body), mapped.status, mapped.headers);
  }
  const status = mapped instanceof HttpError ? mapped.status : 502;
  return new RawJson(errorBody(mapped.message, mapped instanceof NgError ? mapped.code : undefined), status, mapped instanceof HttpError ? mapped.headers : undefined);
}

/** Validates a backend answer; a shape we cannot use answers 502 with the first problems. */
export function checkBackendAnswer<T extends z.ZodType>(schema: T, value: unknown, what: string, url: string): z.output<T> {
  const r = compiled(schema).safeParse(value);
  if (r.success) return r.data;
  const problems = r.error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
  throw new HttpError(502, `the model backend at ${url} returned a ${what} this server cannot use: ${problems}`);
}
