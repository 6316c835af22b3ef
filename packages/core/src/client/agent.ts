/**
 * The one place an undici connection pool is built: keep-alive sockets, explicit connect,
 * header and body timeouts, sockets per origin. Retries are not the pool's business (see
 * retry.ts): undici never resends a request on its own here.
 */
import { Agent } from 'undici';

export interface PoolOptions {
  /** Sockets per origin; requests beyond this queue. */
  connections?: number;
  /** Requests in flight per socket (HTTP/1.1 pipelining); 1 = none. */
  pipelining?: number;
  connectTimeoutMs?: number;
  /** Time to the response headers (0 = none). An LLM call can take minutes. */
  headersTimeoutMs?: number;
  /** Time between body chunks (0 = none). */
  bodyTimeoutMs?: number;
  /** How long an idle socket is kept; a server's own Keep-Alive hint wins when shorter. */
  keepAliveTimeoutMs?: number;
}

export const DEFAULT_POOL: Required<PoolOptions> = {
  connections: 1024,
  pipelining: 1,
  connectTimeoutMs: 30_000,
  headersTimeoutMs: 3_600_000,
  bodyTimeoutMs: 3_600_000,
  keepAliveTimeoutMs: 15_000,
};

export function createPool(options: PoolOptions = {}): Agent {
  const o = { ...DEFAULT_POOL, ...withoutUndefined(options) };
  return new Agent({
    connections: o.connections,
    pipelining: o.pipelining,
    keepAliveTimeout: o.keepAliveTimeoutMs,
    keepAliveMaxTimeout: Math.max(o.keepAliveTimeoutMs, 25_000),
    connect: { timeout: o.connectTimeoutMs, keepAlive: true, keepAliveInitialDelay: 60_000 },
    headersTimeout: o.headersTimeoutMs,
    bodyTimeout: o.bodyTimeoutMs,
  });
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

let shared: Agent | null = null;

/** A process-wide pool with the default settings, for callers that do not manage their own. */
export function sharedPool(): Agent {
  shared ??= createPool();
  return shared;
}
