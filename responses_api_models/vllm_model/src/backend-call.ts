/**
 * Calls to the vLLM endpoints: one connection pool, the session -> endpoint placement with its
 * health probes, JSON posts with the retry rules, failover of a pinned call, and how a backend
 * error is read (context length, transport failure).
 */
import { request, type Agent } from 'undici';
import { createPool, type RequestClass } from '@nemo-gym/core/client';
import { InternalError } from '@nemo-gym/core/errors';
import { listBackendModels, postJson, UpstreamError } from '@nemo-gym/core/openai';
import type { RawJson } from '@nemo-gym/core/server';
import type { VLLMConfig } from './config.js';
import { EndpointPool, type Endpoint } from './endpoints.js';

/** Where the backend logs. */
export interface BackendLog {
  info(m: string): void;
  warn(m: string): void;
}

/** `http://host:8000/v1` -> `http://host:8000` (vLLM serves /tokenize and /health at the root). */
export function rootUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith('/v1') ? trimmed.slice(0, -3) : trimmed;
}

/** vLLM refused the request because the prompt (with max_tokens) does not fit the context. */
export function isContextLengthError(err: unknown): boolean {
  return (
    err instanceof UpstreamError &&
    err.kind === 'status' &&
    err.upstreamStatus === 400 &&
    typeof err.upstreamBody === 'string' &&
    (err.upstreamBody.includes('context length') || err.upstreamBody.includes('max_tokens'))
  );
}

/** The endpoint could not be reached or did not answer in time (the call may go to another one). */
export function isTransportError(err: unknown): err is UpstreamError {
  return err instanceof UpstreamError && (err.kind === 'connect' || err.kind === 'timeout');
}

export class BackendCaller {
  readonly pool: EndpointPool;
  readonly dispatcher: Agent;
  readonly timeoutMs: number;

  constructor(
    readonly config: VLLMConfig,
    private readonly log: BackendLog,
  ) {
    this.timeoutMs = config.request_timeout_s * 1000;
    this.dispatcher = createPool({ connections: 1024, headersTimeoutMs: this.timeoutMs, bodyTimeoutMs: this.timeoutMs });
    this.pool = new EndpointPool(config.base_url, {
      maxSessions: config.max_pinned_sessions,
      failureThreshold: config.unhealthy_after_failures,
      healthCheckIntervalMs: config.base_url.length > 1 ? config.health_check_interval_s * 1000 : 0,
      probe: (url) => this.probe(url),
      onChange: (e, healthy) =>
        healthy
          ? this.log.info(`endpoint ${e.url} is healthy again; new sessions may be placed on it`)
          : this.log.warn(`endpoint ${e.url} failed ${e.consecutiveFailures} times in a row; no new sessions go there until it recovers`),
    });
    this.pool.startHealthChecks();
  }

  async close(): Promise<void> {
    this.pool.stop();
    await this.dispatcher.close();
  }

  /** The model list of every endpoint (`GET <base_url>/models`): the first failure, or the first list. */
  async models(): Promise<RawJson> {
    const headers: Record<string, string> = { ...this.config.default_headers, ...(this.config.api_key ? { authorization: `Bearer ${this.config.api_key}` } : {}) };
    const answers = await Promise.all(this.config.base_url.map((u) => listBackendModels(u, { headers, apiKey: this.config.api_key, dispatcher: this.dispatcher })));
    return answers.find((a) => a.status < 200 || a.status >= 300) ?? answers[0]!;
  }

  /** Any HTTP answer below 500 from `<root>/health` counts as alive. */
  async probe(url: string): Promise<boolean> {
    try {
      const res = await request(`${rootUrl(url)}/health`, {
        method: 'GET',
        dispatcher: this.dispatcher,
        headersTimeout: 5000,
        bodyTimeout: 5000,
        headers: this.config.api_key ? { authorization: `Bearer ${this.config.api_key}` } : {},
      });
      await res.body.dump();
      return res.statusCode < 500;
    } catch {
      return false;
    }
  }

  /** Headers of a request to vLLM sent without postJson (a stream). */
  headers(): Record<string, string> {
    const h: Record<string, string> = { ...this.config.default_headers, 'content-type': 'application/json' };
    if (this.config.api_key) h.authorization = `Bearer ${this.config.api_key}`;
    return h;
  }

  /** `idempotent`: a call without effects (e.g. /tokenize) may be resent after any transient failure. */
  post(url: string, body: unknown, requestClass?: RequestClass, signal?: AbortSignal): Promise<unknown> {
    return postJson(url, body, {
      apiKey: this.config.api_key,
      timeoutMs: this.timeoutMs,
      // With several endpoints a refused connection fails over to another one (callPinned) instead.
      retry: { maxAttempts: this.config.max_attempts, initialDelayMs: this.config.retry_sleep_s * 1000, retryConnectionErrors: this.config.base_url.length === 1 },
      requestClass,
      signal,
      dispatcher: this.dispatcher,
      headers: this.config.default_headers,
      log: (m) => this.log.warn(m),
    });
  }

  /**
   * Sends one call for this session: to its pinned endpoint, or, when that endpoint cannot be
   * reached or times out, once more to each other endpoint (re-pinning the session).
   */
  async callPinned<T>(sessionId: string, fn: (endpoint: Endpoint) => Promise<T>): Promise<T> {
    const tried = new Set<Endpoint>();
    for (;;) {
      const endpoint = this.pool.select(sessionId, tried);
      if (tried.has(endpoint)) throw new InternalError('the endpoint pool chose an endpoint this call already tried');
      tried.add(endpoint);
      try {
        const out = await this.pool.track(endpoint, () => fn(endpoint));
        this.pool.reportSuccess(endpoint);
        return out;
      } catch (err) {
        const transport = isTransportError(err);
        if (transport) this.pool.reportFailure(endpoint);
        else if (err instanceof UpstreamError) this.pool.reportSuccess(endpoint);
        if (!transport || tried.size >= this.pool.endpoints.length) throw err;
        this.log.warn(`${err.message}; trying another endpoint`);
      }
    }
  }
}
