/**
 * ServerClient: call another server of the config by instance name. One keep-alive undici
 * pool per target, explicit timeouts, bounded retries. Cookies travel only when passed
 * explicitly, as upstream does (each server's session cookie is forwarded by the caller).
 */
import type { Agent } from 'undici';
import { parse as parseYaml } from 'yaml';
import { getFirstServerConfigDict } from '../config/instances.js';
import { isDict, type ConfigDict } from '../config/merge.js';
import { GLOBAL_SETTINGS, headServerOf, numberSetting, originOf, type HeadAddress } from '../config/settings.js';
import { BadJsonError, HeadServerError, ServerResponseError, ServerUnreachableError, TimeoutError, UnknownServerError } from '../errors.js';
import { formatCookieHeader, parseSetCookies } from '../http/cookies.js';
import { abortReason, dispatchRequest, dispatchWithRetries, splitUrl } from './dispatch.js';
import { createPool } from './agent.js';
import { classifyRequest, isNoResend, localResourceFailure, NOT_PROCESSED_STATUSES, retryPolicy, type RequestClass, type RetryPolicy } from './retry.js';
import { ReplicaSet, type Replica } from './replicas.js';

export interface ClientTimeouts {
  connectMs: number;
  /** Time to the response headers: an LLM call can take minutes. */
  headersMs: number;
  /** Time between body chunks. */
  bodyMs: number;
}

export const DEFAULT_TIMEOUTS: ClientTimeouts = {
  connectMs: GLOBAL_SETTINGS.http_connect_timeout_s.default * 1000,
  headersMs: GLOBAL_SETTINGS.http_headers_timeout_s.default * 1000,
  bodyMs: GLOBAL_SETTINGS.http_body_timeout_s.default * 1000,
};

export interface ServerClientOptions {
  globalConfig?: ConfigDict;
  timeouts?: Partial<ClientTimeouts>;
  retry?: Partial<RetryPolicy>;
  /** Sockets per target (requests beyond this queue). */
  connectionsPerHost?: number;
  /** Requests in flight per socket (HTTP/1.1 pipelining); 1 = none. */
  pipelining?: number;
}

export interface RequestOptions {
  method?: 'GET' | 'POST';
  cookies?: Record<string, string> | null;
  headers?: Record<string, string>;
  /** Override the retry policy for this call (false: a single attempt). */
  retry?: Partial<RetryPolicy> | false;
  /** How the request may be retried (default: from the method, see classifyRequest). */
  requestClass?: RequestClass;
  signal?: AbortSignal;
}

/** What a failed request went through: its attempts and whether the last one may have reached the server. */
export interface RequestFailure {
  attempts: number;
  /** Some byte of the last attempt may have been written (so the server may have acted on it). */
  sent: boolean;
  requestClass: RequestClass;
}

const failures = new WeakMap<Error, RequestFailure>();

/** For an error thrown by ServerClient after a transport failure: its attempts and delivery state. */
export function requestFailure(err: unknown): RequestFailure | undefined {
  return err instanceof Error ? failures.get(err) : undefined;
}

export class ServerResponse {
  constructor(
    readonly url: string,
    readonly status: number,
    readonly headers: Record<string, string | string[] | undefined>,
    readonly text: string,
    readonly attempts: number,
    /** Cookies the client adds (the replica that holds the session), returned with the server's own. */
    readonly extraCookies?: Readonly<Record<string, string>>,
  ) {}
  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }
  get cookies(): Record<string, string> {
    const own = parseSetCookies(this.headers['set-cookie']);
    return this.extraCookies ? { ...own, ...this.extraCookies } : own;
  }
  json<T = unknown>(): T {
    try {
      return JSON.parse(this.text) as T;
    } catch {
      throw new BadJsonError(this.url, this.status, this.text.slice(0, 300));
    }
  }
  /** Throws ServerResponseError unless the status is 2xx (upstream's raise_for_status). */
  raiseForStatus(): this {
    if (!this.ok) throw this.error();
    return this;
  }
  /** The ServerResponseError for this (non-2xx) answer. */
  error(): ServerResponseError {
    return new ServerResponseError(this.url, this.status, this.text, isNoResend(this.headers));
  }
}

export class ServerClient {
  readonly globalConfig: ConfigDict;
  private readonly dispatcher: Agent;
  private readonly retry: RetryPolicy;
  private readonly timeouts: ClientTimeouts;
  /** Instance name -> `http://host:port` (the config does not change while a server runs). */
  private readonly origins = new Map<string, string>();
  /** Instance name -> its replicas, or null for an instance with one fixed address. */
  private readonly replicaSets = new Map<string, ReplicaSet | null>();

  constructor(options: ServerClientOptions = {}) {
    this.globalConfig = options.globalConfig ?? {};
    const g = this.globalConfig;
    this.timeouts = {
      connectMs: numberSetting(g, 'http_connect_timeout_s') * 1000,
      headersMs: numberSetting(g, 'http_headers_timeout_s') * 1000,
      bodyMs: numberSetting(g, 'http_body_timeout_s') * 1000,
      ...options.timeouts,
    };
    this.retry = retryPolicy({
      maxAttempts: numberSetting(g, 'http_retry_max_attempts'),
      maxElapsedMs: numberSetting(g, 'http_retry_max_elapsed_s') * 1000,
      ...options.retry,
    });
    this.dispatcher = createPool({
      connections: options.connectionsPerHost ?? numberSetting(g, 'http_connections_per_host'),
      pipelining: options.pipelining ?? numberSetting(g, 'http_pipelining'),
      connectTimeoutMs: this.timeouts.connectMs,
      headersTimeoutMs: this.timeouts.headersMs,
      bodyTimeoutMs: this.timeouts.bodyMs,
    });
  }

  /** A client for a process outside ng-run: reads the config from the head server. */
  static async fromHeadServer(head?: HeadAddress, options: Omit<ServerClientOptions, 'globalConfig'> = {}): Promise<ServerClient> {
    const globalConfig = await fetchGlobalConfig(head ?? headServerOf({}));
    return new ServerClient({ ...options, globalConfig });
  }

  /** `http://host:port` of a server instance. */
  baseUrl(serverName: string): string {
    let origin = this.origins.get(serverName);
    if (origin === undefined) {
      origin = this.lookUpBaseUrl(serverName);
      this.origins.set(serverName, origin);
    }
    return origin;
  }

  private lookUpBaseUrl(serverName: string): string {
    if (serverName === 'head_server' && isDict(this.globalConfig.head_server)) return originOf(headServerOf(this.globalConfig));
    const inner = getFirstServerConfigDict(this.globalConfig, serverName);
    if (!inner || !inner.host || !inner.port) {
      const names = Object.keys(this.globalConfig).filter((k) => getFirstServerConfigDict(this.globalConfig, k)?.port);
      throw new UnknownServerError(
        `No running server instance named \`${serverName}\` in the config (known: ${names.join(', ') || 'none'}). Check the server ref or the config_paths.`,
      );
    }
    return `http://${String(inner.host)}:${String(inner.port)}`;
  }

  /**
   * The replicas of an instance whose config block lists `replicas` (ng-run writes it for an
   * instance with num_replicas > 1 or one started by another ng-run); null for any other.
   */
  replicaSet(serverName: string): ReplicaSet | null {
    let set = this.replicaSets.get(serverName);
    if (set === undefined) {
      const inner = serverName === 'head_server' ? undefined : getFirstServerConfigDict(this.globalConfig, serverName);
      const listed = inner?.replicas;
      if (Array.isArray(listed)) {
        set = new ReplicaSet(serverName, listed.map(String), {
          headOrigin: isDict(this.globalConfig.head_server) ? originOf(headServerOf(this.globalConfig)) : undefined,
          intervalMs: numberSetting(this.globalConfig, 'replica_health_interval_s') * 1000,
          timeoutMs: numberSetting(this.globalConfig, 'replica_health_timeout_s') * 1000,
        });
        set.start();
      } else set = null;
      this.replicaSets.set(serverName, set);
    }
    return set;
  }

  private sendToInstance(serverName: string, path: string, body: unknown, options: RequestOptions, method: string | undefined): Promise<ServerResponse> {
    const p = path.charCodeAt(0) === 47 /* / */ ? path : `/${path}`;
    const set = this.replicaSets.get(serverName) ?? this.replicaSet(serverName);
    if (set === null) return this.send(this.baseUrl(serverName), p, body, options, method);
    return this.sendRouted(set, p, body, options, method);
  }

  /** A call to a replicated instance: the session's own replica, or the least busy one for a new session. */
  private async sendRouted(set: ReplicaSet, path: string, body: unknown, options: RequestOptions, method: string | undefined): Promise<ServerResponse> {
    const pinned = options.cookies?.[set.cookieName];
    if (pinned !== undefined) {
      const r = set.get(pinned);
      if (!r || !r.healthy) {
        const why = r ? `it is out of service (${r.downReason ?? 'failed its health check'})` : 'it is not a known replica of this instance';
        const failure = new ServerUnreachableError(`http://${pinned}${path}`, `the session is held by replica ${pinned} of \`${set.instance}\` and ${why}; a session never moves to another replica, so this call fails (a rerun starts the rollout afresh)`);
        failures.set(failure, { attempts: 0, sent: false, requestClass: options.requestClass ?? 'once' });
        throw failure;
      }
      return this.viaReplica(r, path, body, options, method);
    }
    if (set.size === 0) await set.checkNow();
    // Made only once a replica turned a new session away (the common path allocates nothing here).
    let tried: Set<Replica> | undefined;
    let waited = false;
    for (;;) {
      let r = set.pick(tried);
      if (!r && !waited) {
        // None healthy right now: replicas just learnt from the head server are not checked yet,
        // or all failed their last check. One health round (shared with any under way) decides.
        waited = true;
        await set.checkNow();
        r = set.pick(tried);
      }
      if (!r) {
        const down = set.replicas.map((x) => `${x.key}: ${x.downReason ?? 'tried'}`).join('; ');
        throw new ServerUnreachableError(
          `${set.instance}${path}`,
          set.size === 0 ? `no replica of \`${set.instance}\` is running or registered with the head server; start it (ng-run) or check ng-status` : `no healthy replica of \`${set.instance}\` (${down}); check ng-status`,
        );
      }
      // While another replica could take it, one attempt here: a new session that provably did
      // not reach this replica (refused, or 429/503) goes to the next one instead of waiting.
      const others = set.hasOther(tried, r);
      const attempt = others && options.retry !== false ? { ...options, retry: { ...options.retry, maxAttempts: 1 } } : options;
      try {
        const res = await this.viaReplica(r, path, body, attempt, method);
        if (!others || !NOT_PROCESSED_STATUSES.has(res.status) || isNoResend(res.headers)) return res;
      } catch (err) {
        const f = requestFailure(err);
        // This process out of open files or ports says nothing about the replica: it stays in service.
        if (!others || !f || f.sent || !(err instanceof ServerUnreachableError) || localResourceFailure(err)) throw err;
        set.markDown(r, err.message);
      }
      (tried ??= new Set()).add(r);
    }
  }

  private async viaReplica(r: Replica, path: string, body: unknown, options: RequestOptions, method: string | undefined): Promise<ServerResponse> {
    r.inFlight++;
    try {
      return await this.send(r.origin, path, body, options, method, r.cookie);
    } finally {
      r.inFlight--;
    }
  }

  request(serverName: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<ServerResponse> {
    return this.dispatchTo(serverName, path, body, options, options.method);
  }

  async requestUrl(url: string, body?: unknown, options: RequestOptions = {}): Promise<ServerResponse> {
    const [origin, path] = splitUrl(url);
    return this.send(origin, path, body, options, options.method);
  }

  private async send(origin: string, path: string, body: unknown, options: RequestOptions, givenMethod: string | undefined, extraCookies?: Readonly<Record<string, string>>): Promise<ServerResponse> {
    const method = givenMethod ?? (body === undefined ? 'GET' : 'POST');
    const requestClass = options.requestClass ?? (method === 'POST' ? 'once' : classifyRequest(method));
    const policy: RetryPolicy = options.retry === false ? { ...this.retry, maxAttempts: 1 } : options.retry ? { ...this.retry, ...options.retry } : this.retry;
    const headers: Record<string, string> = options.headers ? { ...options.headers } : {};
    const cookie = options.cookies ? formatCookieHeader(options.cookies) : '';
    if (cookie) headers.cookie = cookie;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const idempotent = requestClass === 'idempotent';
    const result = await dispatchWithRetries(policy, requestClass, this.dispatcher, origin, path, { method, headers, body: payload, signal: options.signal }, { signal: options.signal });
    const url = `${origin}${path}`;
    if (result.ok) {
      const res = result.response;
      return new ServerResponse(url, res.status, res.headers, res.body.toString('utf8'), result.attempts, extraCookies);
    }
    const err = result.error;
    // Cancelled by the caller: its own reason, not a transport failure to explain.
    if (options.signal?.aborted) throw abortReason(options.signal);
    const code = (err as { code?: string }).code;
    let failure: Error;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      failure = new TimeoutError(
        `${method} ${url} timed out (${code === 'UND_ERR_HEADERS_TIMEOUT' ? `no response headers within ${this.timeouts.headersMs} ms` : `body stalled for ${this.timeouts.bodyMs} ms`}); raise http_headers_timeout_s / http_body_timeout_s if the server is just slow`,
      );
    } else {
      const resend = result.sent && !idempotent ? '; it was not resent because it may have reached the server' : '';
      const local = localResourceFailure(err);
      const hint = local ? `; this process ran out of ${local === 'EADDRNOTAVAIL' ? 'local ports' : local === 'EMFILE' || local === 'ENFILE' ? 'open files (each connection is one; see ulimit -n)' : 'memory for sockets'}: lower the concurrency or raise the limit` : '';
      failure = new ServerUnreachableError(url, `${(err as Error).message}${code ? ` (${code})` : ''} after ${result.attempts} attempt(s)${resend}${hint}`, { cause: err });
    }
    failures.set(failure, { attempts: result.attempts, sent: result.sent, requestClass });
    throw failure;
  }

  post(serverName: string, path: string, body: unknown, options: RequestOptions = {}): Promise<ServerResponse> {
    return this.dispatchTo(serverName, path, body ?? {}, options, 'POST');
  }

  get(serverName: string, path: string, options: RequestOptions = {}): Promise<ServerResponse> {
    return this.dispatchTo(serverName, path, undefined, options, 'GET');
  }

  /**
   * The calls above without an async wrapper of their own (one promise per call, not two): a
   * failure before the request is sent (an unknown server name) still comes as a rejection.
   */
  private dispatchTo(serverName: string, path: string, body: unknown, options: RequestOptions, method: string | undefined): Promise<ServerResponse> {
    try {
      return this.sendToInstance(serverName, path, body, options, method);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  /** POST and return the parsed JSON body; throws ServerResponseError on a non-2xx status. */
  async postJson<T = unknown>(serverName: string, path: string, body: unknown, options: RequestOptions = {}): Promise<T> {
    return (await this.post(serverName, path, body, options)).raiseForStatus().json<T>();
  }

  async close(): Promise<void> {
    for (const set of this.replicaSets.values()) await set?.close();
    await this.dispatcher.close().catch(() => undefined);
  }
}

/** GET /global_config_dict_yaml from the head server (a JSON string holding YAML). */
export async function fetchGlobalConfig(head: { host: string; port: number }): Promise<ConfigDict> {
  const url = `http://${head.host}:${head.port}/global_config_dict_yaml`;
  let text: string;
  // One attempt: a head server that is not up is a usage error to report at once, not to wait out.
  const pool = createPool({ connections: 1, connectTimeoutMs: 10_000, headersTimeoutMs: 60_000, bodyTimeoutMs: 60_000 });
  try {
    const res = await dispatchRequest(pool, `http://${head.host}:${head.port}`, '/global_config_dict_yaml', { method: 'GET' });
    text = res.body.toString('utf8');
    if (res.status !== 200) throw new HeadServerError(url, `HTTP ${res.status}`);
  } catch (err) {
    if (err instanceof HeadServerError) throw err;
    throw new HeadServerError(url, (err as Error).message);
  } finally {
    await pool.close().catch(() => undefined);
  }
  const yamlText = JSON.parse(text) as unknown;
  const parsed: unknown = parseYaml(typeof yamlText === 'string' ? yamlText : '');
  return isDict(parsed) ? parsed : {};
}
