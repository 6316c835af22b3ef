/**
 * Every error the project raises on purpose has a stable code (NG_ERR_*), so callers and tests
 * can match on it, and a message that says what went wrong, where, and how to fix it.
 *
 * The table below is the one list of codes: each has a message template (`%s` placeholders,
 * filled in order from the constructor's arguments) and, where a server answers it with a fixed
 * HTTP status when a handler lets it escape, that status. A package or server owns the codes only it
 * raises: it registers them with {@link registerErrorCodes} (template, status, meaning, fix) in its
 * own `src/errors.ts`, so a new environment adds an error without editing core. docs/errors.md is
 * generated from the registered codes (`node scripts/errors-doc.mjs`); a test checks it is current.
 *
 * A code crosses processes: an error answer is `{detail, code}`, and an error raised from another
 * server's answer, a worker thread's failure or a queue worker's record keeps the code it carried,
 * so callers (the collector above all) decide by code, never by reading the message.
 *
 * Every message passes through the project's one secret rule for URLs (secret-rule.ts) when the
 * error is made: a base URL with credentials (`http://user:KEY@host`, `?api_key=…`, `?sig=…`)
 * shows them as `****` in the message, in the `detail` of an HttpError given as text, and in the
 * URL and body kept by ServerResponseError and ServerUnreachableError, so no error text built
 * from a configured URL can carry its secret into an answer, a log or a failure record.
 */
import { format } from 'node:util';
import { redactUrlCredentials } from './secret-rule.js';

export interface ErrorDefinition {
  /** Message template: `%s` placeholders are filled in order from the constructor's arguments. */
  readonly message: string;
  /** HTTP status a server answers with when a handler throws this error. */
  readonly status?: number;
}

/** A code of the one table: `NG_ERR_` followed by capitals, digits and underscores. */
export type NgCode = `NG_ERR_${string}`;

const CODE_SHAPE = /^NG_ERR_[A-Z0-9_]+$/;

/** `value` when it is shaped like a code (a string `NG_ERR_…`), else undefined. */
export function asNgCode(value: unknown): NgCode | undefined {
  return typeof value === 'string' && CODE_SHAPE.test(value) ? (value as NgCode) : undefined;
}

/**
 * The code an error answer carries (`{"detail": …, "code": "NG_ERR_…"}`), or undefined when the
 * text is not such an answer.
 */
export function answerCode(text: string): NgCode | undefined {
  // Only a guard that spares parsing bodies without the key; the decision is the parsed field.
  if (!text.includes('"code"')) return undefined;
  try {
    const body: unknown = JSON.parse(text);
    return body !== null && typeof body === 'object' ? asNgCode((body as { code?: unknown }).code) : undefined;
  } catch {
    return undefined;
  }
}

export const ERRORS = {
  // Configuration and command line
  NG_ERR_CONFIG: { message: '%s' },
  NG_ERR_USAGE: { message: '%s' },
  NG_ERR_SERVER_DEFINITION: { message: '%s' },
  // Talking to other servers
  NG_ERR_HTTP: { message: '%s' },
  NG_ERR_SERVER_RESPONSE: { message: '%s answered HTTP %s: %s' },
  NG_ERR_SERVER_UNREACHABLE: { message: 'could not reach %s: %s' },
  NG_ERR_TIMEOUT: { message: '%s' },
  NG_ERR_MODEL_UNREACHABLE: { message: '%s' },
  NG_ERR_MODEL_TIMEOUT: { message: '%s' },
  NG_ERR_VERIFY_FAILED: { message: '%s' },
  NG_ERR_JUDGE_FAILED: { message: '%s', status: 502 },
  NG_ERR_BAD_JSON: { message: '%s answered HTTP %s with a body that is not JSON: %s' },
  NG_ERR_UNKNOWN_SERVER: { message: '%s' },
  NG_ERR_HEAD_SERVER: { message: 'Could not connect to the head server at %s (%s). Start the servers first with `pnpm ng-run "+config_paths=[...]"`, or pass +head_server.port=<port> if it runs on another port.' },
  NG_ERR_CONVERSION: { message: '%s', status: 400 },
  NG_ERR_HEAD_TOKEN: { message: '%s', status: 401 },
  // Rollout collection
  NG_ERR_BAD_ROW: { message: '%s' },
  NG_ERR_BAD_RESULT: { message: 'agent `%s` answered /run with %s, not an object' },
  NG_ERR_RESUME_MISMATCH: { message: '%s' },
  NG_ERR_COLLECT_FILE: { message: '%s' },
  NG_ERR_PREFLIGHT: { message: '%s' },
  NG_ERR_GROUP_VERIFY: { message: '%s' },
  // Files every command reads and writes
  NG_ERR_FILE: { message: '%s' },
  NG_ERR_OUTPUT_LOCKED: { message: '%s' },
  // Per-rollout model routes and token capture
  NG_ERR_ROLLOUT_ID: { message: '%s', status: 400 },
  NG_ERR_CAPTURE_NOT_FOUND: { message: '%s', status: 404 },
  NG_ERR_CAPTURE_NO_TOKEN_IDS: { message: '%s', status: 422 },
  // Worker pool
  NG_ERR_POOL_CLOSED: { message: 'the worker pool is closed' },
  NG_ERR_POOL_TASK: { message: '%s' },
  NG_ERR_POOL_WORKER: { message: '%s' },
  NG_ERR_POOL_WORKER_DIED: { message: '%s' },
  // Datasets and metrics
  NG_ERR_PY_JSON_DECODE: { message: '%s (char %s)' },
  NG_ERR_METRICS_KEY_COLLISION: { message: '%s' },
  NG_ERR_MIXED_METRIC_TYPES: { message: '%s' },
  NG_ERR_METRICS_CONFLICT: { message: '%s' },
  NG_ERR_PREPARE_CONFIG: { message: '%s' },
  NG_ERR_PREPARE_MISSING_DATASETS: { message: '%s' },
  NG_ERR_PREPARE_COLLATE: { message: '%s' },
  NG_ERR_DATA_DOWNLOAD: { message: '%s' },
  // Python semantics
  NG_ERR_PY_REGEX: { message: '%s at position %s' },
  NG_ERR_PY_REGEX_UNSUPPORTED: { message: '%s at position %s has no JavaScript equivalent' },
  NG_ERR_PY_EXCEPTION: { message: '%s' },
  // Limits on requests
  NG_ERR_BODY_TOO_DEEP: { message: 'the request body nests arrays/objects more than %s levels deep; send a flatter body (e.g. encode deep data as a string)', status: 400 },
  NG_ERR_BODY_TOO_LARGE: { message: 'the request body is larger than the limit of %s bytes; send less data per request', status: 413 },
  NG_ERR_PY_REGEX_LIMIT: { message: '%s', status: 422 },
  NG_ERR_CLIENT_GONE: { message: 'the client closed the connection before the answer was ready; the work for it was cancelled', status: 499 },
  // Gymnasium environments (reset/step)
  NG_ERR_ENV_RESET_FAILED: { message: '%s', status: 500 },
  NG_ERR_ENV_STEP_FAILED: { message: '%s', status: 500 },
  NG_ERR_ENV_NO_EPISODE: { message: '%s', status: 409 },
  // In-process agents (an agent framework's code run by the agent server)
  NG_ERR_AGENT_FUNCTION: { message: '%s', status: 500 },
  // A bug
  NG_ERR_INTERNAL: { message: 'internal error: %s' },
} as const satisfies Record<NgCode, ErrorDefinition>;

/** A code of core's own table. */
export type ErrorCode = keyof typeof ERRORS;

/** What a package or server writes for each code it owns; docs/errors.md is made from it. */
export interface ErrorDoc extends ErrorDefinition {
  /** What went wrong (Markdown, one paragraph). */
  readonly meaning: string;
  /** How to fix it (Markdown, one paragraph). */
  readonly fix: string;
}

/** One code of the table with its owner (`core` or the package name) and its docs section. */
export interface RegisteredError extends ErrorDefinition {
  readonly code: NgCode;
  readonly owner: string;
  /** The documentation of a code registered by its owner (core's codes are documented in errors-doc.ts). */
  readonly doc?: ErrorDoc;
}

const TABLE = new Map<string, RegisteredError>();
for (const [code, def] of Object.entries(ERRORS)) TABLE.set(code, { ...(def as ErrorDefinition), code: code as NgCode, owner: 'core' });

/**
 * Registers the codes a package or server owns into the one table, with their message template,
 * the status a server answers when a handler lets one escape, and their documentation. Call it
 * once, in the owner's `src/errors.ts`, before `createError` for those codes. A code another owner
 * registered already is a definition error.
 */
export function registerErrorCodes<T extends Record<NgCode, ErrorDoc>>(owner: string, table: T): { readonly [K in keyof T]: K } {
  const codes = {} as Record<string, string>;
  for (const [code, doc] of Object.entries(table) as [NgCode, ErrorDoc][]) {
    const seen = TABLE.get(code);
    if (!CODE_SHAPE.test(code) || (seen && seen.owner !== owner)) {
      throw new NgError('NG_ERR_SERVER_DEFINITION', seen ? `${owner} registers ${code}, which ${seen.owner} owns already; choose another code` : `${owner} registers ${code}, which is not NG_ERR_ followed by capitals, digits and underscores`);
    }
    TABLE.set(code, { message: doc.message, ...(doc.status === undefined ? {} : { status: doc.status }), code, owner, doc });
    codes[code] = code;
  }
  return codes as { readonly [K in keyof T]: K };
}

/** Every registered code (core's and those of the packages and servers loaded so far), sorted. */
export function registeredErrors(): RegisteredError[] {
  return [...TABLE.values()].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
}

/** The table entry of a code, or undefined when no loaded owner registered it. */
export function errorDefinition(code: string): RegisteredError | undefined {
  return TABLE.get(code);
}

/** The base of every coded error. */
export class NgError extends Error {
  /** The error's code; for an error raised from another hop's failure, the code that failure carried. */
  readonly code: NgCode;
  /** The status a server answers with when a handler lets this error escape (from the table entry of this class's own code). */
  readonly httpStatus: number | undefined;
  /**
   * `options.code` is the code carried by the failure this error passes on (another server's
   * answer, a worker thread's error): it becomes `code`, so the original failure stays known.
   */
  constructor(code: NgCode, message: string, options?: NgErrorOptions) {
    super(redactUrlCredentials(message), options && 'cause' in options ? { cause: options.cause } : undefined);
    this.code = options?.code ?? code;
    this.httpStatus = TABLE.get(code)?.status;
    this.name = new.target.name;
  }
}

/** Options of a coded error: its cause, and the code of the failure it passes on. */
export interface NgErrorOptions {
  cause?: unknown;
  code?: NgCode | undefined;
}

/** The message of `code` with its template filled from `args`. */
export function errorMessage(code: NgCode, ...args: unknown[]): string {
  return format(TABLE.get(code)?.message ?? '%s', ...args);
}

/** A coded error class, made by {@link createError}. */
export interface NgErrorClass<C extends NgCode> {
  new (...args: unknown[]): NgError & { readonly code: C };
  readonly code: C;
}

/**
 * A tiny error class for one code of the table, in the style of `@fastify/error`:
 * `new PoolClosedError()`, `new BadResultError(agent, shown)`. The arguments fill the template;
 * a last argument `{ cause }` becomes the error's cause, `{ code }` the code of the failure it passes on.
 * The code must be registered first (core's table, or the owner's {@link registerErrorCodes}).
 */
export function createError<C extends NgCode>(code: C, name: string): NgErrorClass<C> {
  const def = TABLE.get(code);
  if (!def) throw new NgError('NG_ERR_SERVER_DEFINITION', `${name} uses ${code}, which no owner registered: call registerErrorCodes first`);
  const template = def.message;
  const cls = class extends NgError {
    static readonly code = code;
    constructor(...args: unknown[]) {
      const last = args[args.length - 1];
      const options = isErrorOptions(last) ? (args.pop() as NgErrorOptions) : undefined;
      super(code, format(template, ...args), options);
    }
  };
  Object.defineProperty(cls, 'name', { value: name });
  return cls as unknown as NgErrorClass<C>;
}

function isErrorOptions(v: unknown): v is NgErrorOptions {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  return keys.length > 0 && keys.every((k) => k === 'cause' || (k === 'code' && (asNgCode((v as NgErrorOptions).code) !== undefined || (v as NgErrorOptions).code === undefined)));
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

/**
 * Deliberate HTTP error from a route handler: answered as {"detail": detail} with `status`, plus
 * `"code"` when it is given one (the code of the failure it reports, e.g. NG_ERR_MODEL_UNREACHABLE).
 */
export class HttpError extends NgError {
  readonly status: number;
  readonly detail: unknown;
  /** Headers sent with the answer (e.g. `retry-after` on a 429/503). */
  readonly headers: Record<string, string> | undefined;
  /** Fields the answer carries beside `detail` and `code` (e.g. the `verify_request` of a judge failure). */
  readonly extra: Record<string, unknown> | undefined;
  constructor(status: number, detail: unknown, headers?: Record<string, string>, code?: NgCode, extra?: Record<string, unknown>) {
    super('NG_ERR_HTTP', typeof detail === 'string' ? detail : JSON.stringify(detail), { code });
    this.status = status;
    this.detail = typeof detail === 'string' ? this.message : detail;
    this.headers = headers;
    this.extra = extra;
  }
}

/**
 * Another server answered with an error status. When its answer carries a code (`{detail, code}`),
 * `code` is that code, so the failure behind the hop stays known; else NG_ERR_SERVER_RESPONSE.
 */
export class ServerResponseError extends NgError {
  readonly status: number;
  readonly body: string;
  readonly url: string;
  /** The answer said not to resend the request (a 429/503 passed on after the server acted on it). */
  readonly noResend: boolean;
  constructor(url: string, status: number, body: string, noResend = false) {
    const shown = body.length > 2000 ? `${body.slice(0, 2000)}… (${body.length} bytes)` : body;
    super('NG_ERR_SERVER_RESPONSE', errorMessage('NG_ERR_SERVER_RESPONSE', url, status, shown), { code: answerCode(body) });
    this.status = status;
    this.body = redactUrlCredentials(body);
    this.url = redactUrlCredentials(url);
    this.noResend = noResend;
  }
}

/**
 * A request to another server could not be completed (connection refused, reset, timed out); a
 * connection that timed out has the code NG_ERR_TIMEOUT (`options.code`).
 */
export class ServerUnreachableError extends NgError {
  readonly url: string;
  constructor(url: string, reason: string, options?: NgErrorOptions) {
    super('NG_ERR_SERVER_UNREACHABLE', errorMessage('NG_ERR_SERVER_UNREACHABLE', url, reason), options);
    this.url = redactUrlCredentials(url);
  }
}

/** Something did not finish within its time budget. */
export class TimeoutError extends NgError {
  constructor(message: string) {
    super('NG_ERR_TIMEOUT', message);
  }
}

/** A server definition that cannot work (e.g. a tool named like a built-in route). */
export const ServerDefinitionError = createError('NG_ERR_SERVER_DEFINITION', 'ServerDefinitionError');
/** Another server answered with a body that is not JSON where JSON was expected. */
export const BadJsonError = createError('NG_ERR_BAD_JSON', 'BadJsonError');
/** A server name that is not in the config. */
export const UnknownServerError = createError('NG_ERR_UNKNOWN_SERVER', 'UnknownServerError');
/** The head server could not be reached or did not answer its config. */
export const HeadServerError = createError('NG_ERR_HEAD_SERVER', 'HeadServerError');
/** A state-changing request to the head server without the deployment token, or with a wrong one. */
export const HeadTokenError = createError('NG_ERR_HEAD_TOKEN', 'HeadTokenError');
/** An input row that cannot be run. */
export const BadRowError = createError('NG_ERR_BAD_ROW', 'BadRowError');
/** An agent's /run answer that is not a JSON object. */
export const BadResultError = createError('NG_ERR_BAD_RESULT', 'BadResultError');
/** A resumed collection whose output does not belong to its input. */
export const ResumeMismatchError = createError('NG_ERR_RESUME_MISMATCH', 'ResumeMismatchError');
/** A collector input or output file that cannot be used (missing, the same as the output, not writable). */
export const CollectFileError = createError('NG_ERR_COLLECT_FILE', 'CollectFileError');
/** An input or output file a command cannot use (missing, the same file as an output, a folder, not writable, a full disk). */
export const FileError = createError('NG_ERR_FILE', 'FileError');
/** An output another live process is writing (its lock file names the process). */
export const OutputLockedError = createError('NG_ERR_OUTPUT_LOCKED', 'OutputLockedError');
/** A check before a collection sends its first rollout failed (an agent, a server or the model backend). */
export const PreflightError = createError('NG_ERR_PREFLIGHT', 'PreflightError');
/** A group of rollouts that was not scored by its resources server's /verify_group (a member missing or failed, an unusable answer). */
export const GroupVerifyError = createError('NG_ERR_GROUP_VERIFY', 'GroupVerifyError');
/** A task given to a worker pool that is closed. */
export const PoolClosedError = createError('NG_ERR_POOL_CLOSED', 'PoolClosedError');
/** A worker-pool task that failed in its worker. */
export const PoolTaskError = createError('NG_ERR_POOL_TASK', 'PoolTaskError');
/** A worker that could not start. */
export const PoolWorkerError = createError('NG_ERR_POOL_WORKER', 'PoolWorkerError');
/** A worker that died while it ran a task. */
export const PoolWorkerDiedError = createError('NG_ERR_POOL_WORKER_DIED', 'PoolWorkerDiedError');
/** A data file a server needs could not be downloaded or did not match its checksum. */
export const DataDownloadError = createError('NG_ERR_DATA_DOWNLOAD', 'DataDownloadError');
/** A request body nested deeper than the server accepts. */
export const BodyTooDeepError = createError('NG_ERR_BODY_TOO_DEEP', 'BodyTooDeepError');
/** A request body larger than the server accepts. */
export const BodyTooLargeError = createError('NG_ERR_BODY_TOO_LARGE', 'BodyTooLargeError');
/** A regular expression longer or more deeply nested than the translator accepts. */
export const PyRegexLimitError = createError('NG_ERR_PY_REGEX_LIMIT', 'PyRegexLimitError');
/** The client of a request went away (timed out, stopped): the request's downstream calls are cancelled. */
export const ClientGoneError = createError('NG_ERR_CLIENT_GONE', 'ClientGoneError');
/** An invariant of the code itself did not hold: a bug to report, not a problem of the input. */
export const InternalError = createError('NG_ERR_INTERNAL', 'InternalError');

/** A malformed rollout id: in `/ng-rollout/<id>/…`, or `_ng_rollout_id` / the indices of a run request. */
export const RolloutIdError = createError('NG_ERR_ROLLOUT_ID', 'RolloutIdError');
/** No capture is held for a rollout (no call came through its route, or it was released, expired or evicted). */
export const CaptureNotFoundError = createError('NG_ERR_CAPTURE_NOT_FOUND', 'CaptureNotFoundError');
/** A capture was asked for token ids, but the backend of a call gave none. */
export const CaptureNoTokenIdsError = createError('NG_ERR_CAPTURE_NO_TOKEN_IDS', 'CaptureNoTokenIdsError');
/** The agent function of an in-process agent threw, or a tool call it made could not reach the resources server. */
export const AgentFunctionError = createError('NG_ERR_AGENT_FUNCTION', 'AgentFunctionError');

/** A short, single-line description of any thrown value, for logs and error bodies (URL credentials masked). */
export function describeError(err: unknown): string {
  return redactUrlCredentials(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
}
