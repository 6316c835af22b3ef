/**
 * Placement of rollouts on a set of backend endpoints.
 *
 * Every session (one rollout) is pinned to one endpoint so that all of its turns hit the same
 * prefix cache. A new session goes to the healthy endpoint with the fewest requests in flight
 * (ties: fewest pinned sessions, then list order). The pin table is an LRU capped at
 * `maxSessions`: a session evicted from it is simply placed again on its next call, which only
 * costs prefix-cache locality, never correctness. Endpoints that keep failing (requests that
 * cannot connect or time out, or failed health probes) are taken out of placement and come back
 * as soon as a probe succeeds.
 */
import { ConfigError } from '@nemo-gym/core/errors';

export interface Endpoint {
  readonly url: string;
  readonly index: number;
  inFlight: number;
  sessions: number;
  healthy: boolean;
  consecutiveFailures: number;
}

export interface EndpointPoolOptions {
  /** Most sessions remembered; the least recently used pin is dropped beyond this. */
  maxSessions?: number;
  /** Consecutive failures (requests or probes) that take an endpoint out. */
  failureThreshold?: number;
  /** Health probe period in ms; 0 disables periodic probes. */
  healthCheckIntervalMs?: number;
  /** Returns true when the endpoint answers. */
  probe?: (url: string) => Promise<boolean>;
  onChange?: (endpoint: Endpoint, healthy: boolean) => void;
}

export class EndpointPool {
  readonly endpoints: Endpoint[];
  private readonly pins = new Map<string, Endpoint>();
  private readonly maxSessions: number;
  private readonly failureThreshold: number;
  private timer: NodeJS.Timeout | null = null;
  private probing = false;

  constructor(
    urls: string[],
    private readonly options: EndpointPoolOptions = {},
  ) {
    if (urls.length === 0) throw new ConfigError('vllm_model: at least one endpoint URL is required; set base_url to a URL or a list of URLs');
    this.endpoints = urls.map((url, index) => ({ url, index, inFlight: 0, sessions: 0, healthy: true, consecutiveFailures: 0 }));
    this.maxSessions = Math.max(1, options.maxSessions ?? 100_000);
    this.failureThreshold = Math.max(1, options.failureThreshold ?? 2);
  }

  /** Number of sessions currently pinned (bounded by maxSessions). */
  get pinnedSessions(): number {
    return this.pins.size;
  }

  /** The endpoint a session is pinned to, if any (does not refresh its LRU position). */
  pinnedEndpoint(sessionId: string): Endpoint | undefined {
    return this.pins.get(sessionId);
  }

  /**
   * Endpoint for this session's next call; pins a new session, and re-places a session whose
   * endpoint was taken out. `exclude` skips endpoints that just failed for this call.
   */
  select(sessionId: string, exclude: ReadonlySet<Endpoint> = new Set()): Endpoint {
    const pinned = this.pins.get(sessionId);
    if (pinned && pinned.healthy && !exclude.has(pinned)) {
      // Refresh the LRU position.
      this.pins.delete(sessionId);
      this.pins.set(sessionId, pinned);
      return pinned;
    }
    const chosen = this.leastLoaded(exclude);
    this.pin(sessionId, chosen);
    return chosen;
  }

  private leastLoaded(exclude: ReadonlySet<Endpoint>): Endpoint {
    let candidates = this.endpoints.filter((e) => e.healthy && !exclude.has(e));
    // Nothing healthy left: try the rest anyway (a probe may be stale) rather than fail outright.
    if (candidates.length === 0) candidates = this.endpoints.filter((e) => !exclude.has(e));
    if (candidates.length === 0) candidates = this.endpoints;
    let best = candidates[0]!;
    for (const e of candidates) {
      if (e.inFlight < best.inFlight || (e.inFlight === best.inFlight && e.sessions < best.sessions)) best = e;
    }
    return best;
  }

  private pin(sessionId: string, endpoint: Endpoint): void {
    const old = this.pins.get(sessionId);
    if (old) {
      old.sessions--;
      this.pins.delete(sessionId);
    }
    this.pins.set(sessionId, endpoint);
    endpoint.sessions++;
    while (this.pins.size > this.maxSessions) {
      const [oldestId, oldestEp] = this.pins.entries().next().value as [string, Endpoint];
      this.pins.delete(oldestId);
      oldestEp.sessions--;
    }
  }

  /** Runs `fn` against an endpoint while counting it as in flight. */
  async track<T>(endpoint: Endpoint, fn: () => Promise<T>): Promise<T> {
    endpoint.inFlight++;
    try {
      return await fn();
    } finally {
      endpoint.inFlight--;
    }
  }

  reportSuccess(endpoint: Endpoint): void {
    endpoint.consecutiveFailures = 0;
    if (!endpoint.healthy) this.setHealthy(endpoint, true);
  }

  reportFailure(endpoint: Endpoint): void {
    endpoint.consecutiveFailures++;
    if (endpoint.healthy && endpoint.consecutiveFailures >= this.failureThreshold) this.setHealthy(endpoint, false);
  }

  private setHealthy(endpoint: Endpoint, healthy: boolean): void {
    endpoint.healthy = healthy;
    this.options.onChange?.(endpoint, healthy);
  }

  /** Probes every endpoint once (failures count toward taking it out; a success brings it back). */
  async probeAll(): Promise<void> {
    const probe = this.options.probe;
    if (!probe || this.probing) return;
    this.probing = true;
    try {
      await Promise.all(
        this.endpoints.map(async (e) => {
          let ok = false;
          try {
            ok = await probe(e.url);
          } catch {
            ok = false;
          }
          if (ok) this.reportSuccess(e);
          else this.reportFailure(e);
        }),
      );
    } finally {
      this.probing = false;
    }
  }

  startHealthChecks(): void {
    const interval = this.options.healthCheckIntervalMs ?? 0;
    if (interval <= 0 || this.timer || !this.options.probe) return;
    this.timer = setInterval(() => void this.probeAll(), interval);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
