/**
 * Per-session counters. Upstream keeps one entry per session forever; here an entry is dropped
 * when its rollout is verified, when it has been idle longer than the TTL, and (oldest first)
 * when more than `maxSessions` are live, so abandoned rollouts cannot grow memory without bound.
 */

export interface CounterStoreOptions {
  idleTtlMs: number;
  maxSessions: number;
  /** Clock, injectable for tests. */
  now?: () => number;
}

interface Entry {
  count: number;
  touched: number;
}

export class CounterStore {
  /** Insertion order is least-recently-used first: every touch re-inserts the entry. */
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;

  constructor(private readonly options: CounterStoreOptions) {
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  has(sessionId: string): boolean {
    this.sweep();
    return this.entries.has(sessionId);
  }

  /** Python `dict.setdefault`: sets the value only for a session that has none; returns the value. */
  setDefault(sessionId: string, value: number): number {
    this.sweep();
    const e = this.entries.get(sessionId);
    const count = e ? e.count : value;
    this.touch(sessionId, count);
    return count;
  }

  set(sessionId: string, value: number): void {
    this.sweep();
    this.touch(sessionId, value);
  }

  /** Removes the session and returns its counter (undefined when the session is unknown). */
  take(sessionId: string): number | undefined {
    this.sweep();
    const e = this.entries.get(sessionId);
    this.entries.delete(sessionId);
    return e?.count;
  }

  /** Drops idle entries and the oldest ones above the cap. */
  sweep(): void {
    const cutoff = this.now() - this.options.idleTtlMs;
    for (const [id, e] of this.entries) {
      if (e.touched > cutoff && this.entries.size <= this.options.maxSessions) break;
      this.entries.delete(id);
    }
  }

  clear(): void {
    this.entries.clear();
  }

  private touch(sessionId: string, count: number): void {
    this.entries.delete(sessionId);
    this.entries.set(sessionId, { count, touched: this.now() });
    if (this.entries.size > this.options.maxSessions) this.sweep();
  }
}
