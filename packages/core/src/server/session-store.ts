/**
 * Per-session state of a resources server. Upstream keeps an entry per session forever; here an
 * entry is dropped when its rollout is verified (`take`/`delete`), when it has been idle longer
 * than the TTL, and (least recently used first) when more than `maxSessions` are live, so
 * abandoned rollouts cannot grow memory without bound. A session dropped for idleness or the cap
 * is remembered (a bounded list of ids), so a late call is told why (servers answer 410) instead
 * of being treated as a session that was never seeded: `droppedError` is that answer, naming the
 * server setting to raise. `startSweeping` drops idle entries without traffic too; `close` ends it.
 */
import { HttpError } from '../errors.js';

export type SessionDropReason = 'idle' | 'capacity';

export interface SessionStoreOptions<T = unknown> {
  idleTtlMs: number;
  maxSessions: number;
  /** Clock, injectable for tests. */
  now?: () => number;
  /** An entry in use (e.g. a call in flight) is never dropped as idle: its idle clock restarts instead. */
  isBusy?: (value: T) => boolean;
  /** Called for every entry dropped for idleness or the cap (to release what it holds). */
  onDrop?: (id: string, value: T, reason: SessionDropReason) => void;
  /** What a session holds, as the 410 answer names it (default: "The state of this session"). */
  what?: string;
}

export class SessionStore<T> {
  /** Insertion order is least recently used first: every touch re-inserts the entry. */
  private readonly entries = new Map<string, { value: T; touched: number }>();
  /** Sessions dropped before their verify, oldest first. */
  private readonly dropped = new Map<string, SessionDropReason>();
  private readonly now: () => number;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: SessionStoreOptions<T>) {
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The ids of the live sessions, least recently used first. */
  ids(): string[] {
    return [...this.entries.keys()];
  }

  /** Whether the session is live (does not renew its idle clock). */
  has(id: string): boolean {
    this.sweep();
    return this.entries.has(id);
  }

  /** The session's value (renewing its idle clock), or undefined. */
  get(id: string): T | undefined {
    this.sweep();
    const e = this.entries.get(id);
    if (!e) return undefined;
    this.entries.delete(id);
    e.touched = this.now();
    this.entries.set(id, e);
    return e.value;
  }

  /** Sets (or replaces) the session's value; a session set again is no longer reported as dropped. */
  set(id: string, value: T): void {
    this.dropped.delete(id);
    this.sweep();
    this.entries.delete(id);
    this.entries.set(id, { value, touched: this.now() });
    if (this.entries.size > this.options.maxSessions) this.sweep();
  }

  /** Removes the session and returns its value (undefined when the session is unknown). */
  take(id: string): T | undefined {
    this.sweep();
    const e = this.entries.get(id);
    this.entries.delete(id);
    this.dropped.delete(id);
    return e?.value;
  }

  delete(id: string): void {
    this.take(id);
  }

  /** Why the session was dropped before its verify, if it was. */
  droppedReason(id: string): SessionDropReason | undefined {
    this.sweep();
    return this.entries.has(id) ? undefined : this.dropped.get(id);
  }

  /** Drops idle entries and the least recently used ones above the cap. */
  sweep(): void {
    const cutoff = this.now() - this.options.idleTtlMs;
    for (const [id, e] of this.entries) {
      const idle = e.touched <= cutoff;
      if (idle && this.entries.size <= this.options.maxSessions && this.options.isBusy?.(e.value)) {
        // Renewed and moved to the end: met again later in this loop, no longer idle.
        this.entries.delete(id);
        e.touched = this.now();
        this.entries.set(id, e);
        continue;
      }
      if (!idle && this.entries.size <= this.options.maxSessions) break;
      this.entries.delete(id);
      this.dropped.delete(id);
      const reason = idle ? 'idle' : 'capacity';
      this.dropped.set(id, reason);
      if (this.dropped.size > this.options.maxSessions) this.dropped.delete(this.dropped.keys().next().value as string);
      this.options.onDrop?.(id, e.value, reason);
    }
  }

  /**
   * Sweeps every min(maxEveryMs, idle TTL) also when no call comes, so idle sessions release what
   * they hold; the timer never keeps the process alive.
   */
  startSweeping(maxEveryMs = 60_000): this {
    clearInterval(this.sweeper);
    this.sweeper = setInterval(() => this.sweep(), Math.min(maxEveryMs, this.options.idleTtlMs)).unref();
    return this;
  }

  /**
   * The answer to a call for a session dropped before its verify (410, naming the setting of the
   * server config to raise), or undefined for a live or never-seeded session.
   */
  droppedError(id: string): HttpError | undefined {
    const reason = this.droppedReason(id);
    if (reason === undefined) return undefined;
    const why =
      reason === 'idle'
        ? `it was idle longer than session_idle_ttl_s (${this.options.idleTtlMs / 1000} s)`
        : `more sessions were live than max_sessions = ${this.options.maxSessions} allows`;
    return new HttpError(410, `${this.options.what ?? 'The state of this session'} was dropped because ${why}; raise that setting in the server config and run the rollout again.`);
  }

  /** Throws `droppedError` for a session dropped before its verify. */
  assertNotDropped(id: string): void {
    const err = this.droppedError(id);
    if (err) throw err;
  }

  clear(): void {
    this.entries.clear();
    this.dropped.clear();
  }

  /** Stops the sweeping and removes every session; returns their values, for the caller to release. */
  close(): T[] {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    const values = [...this.entries.values()].map((e) => e.value);
    this.clear();
    return values;
  }
}
