/**
 * Every error the project raises on purpose has a stable code (NG_ERR_*), so callers and
 * tests can match on it, and a message that says what went wrong, where, and how to fix it.
 */
export class NgError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** A problem in the merged configuration: a file, a key, an override or an interpolation. */
export class ConfigError extends NgError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('NG_ERR_CONFIG', message, options);
  }
}

/** A command-line flag that is missing or malformed. */
export class UsageError extends NgError {
  constructor(message: string) {
    super('NG_ERR_USAGE', message);
  }
}

/** Deliberate HTTP error from a route handler: answered as {"detail": detail} with `status`. */
export class HttpError extends NgError {
  readonly status: number;
  readonly detail: unknown;
  constructor(status: number, detail: unknown) {
    super('NG_ERR_HTTP', typeof detail === 'string' ? detail : JSON.stringify(detail));
    this.status = status;
    this.detail = detail;
  }
}

/** Another server answered with an error status. */
export class ServerResponseError extends NgError {
  readonly status: number;
  readonly body: string;
  readonly url: string;
  constructor(url: string, status: number, body: string) {
    const shown = body.length > 2000 ? `${body.slice(0, 2000)}… (${body.length} bytes)` : body;
    super('NG_ERR_SERVER_RESPONSE', `${url} answered HTTP ${status}: ${shown}`);
    this.status = status;
    this.body = body;
    this.url = url;
  }
}

/** A request to another server could not be completed (connection refused, reset, timed out). */
export class ServerUnreachableError extends NgError {
  readonly url: string;
  constructor(url: string, reason: string, options?: { cause?: unknown }) {
    super('NG_ERR_SERVER_UNREACHABLE', `could not reach ${url}: ${reason}`, options);
    this.url = url;
  }
}

export class TimeoutError extends NgError {
  constructor(message: string) {
    super('NG_ERR_TIMEOUT', message);
  }
}

/** A short, single-line description of any thrown value, for logs and error bodies. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
