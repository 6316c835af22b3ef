/**
 * Per-session counters. Upstream keeps one entry per session forever; here an entry is dropped
 * when its rollout is verified, when it has been idle longer than the TTL, and (oldest first)
 * when more than `maxSessions` are live, so abandoned rollouts cannot grow memory without bound.
 *
 * A session dropped for idleness or the cap is remembered (a bounded list of ids), so a late call
 * for it is reported as expired instead of silently starting again from 0 and scoring a wrong 0.0.
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

export type DropReason = 'idle' | 'capacity';

export class CounterStore {
  /** Insertion order is least-recently-used first: every touch re-inserts the entry. */
  private readonly entries = new Map<string, Entry>();
  /** Sessions dropped before their verify, oldest first. */
  private readonly dropped = new Map<string, DropReason>();
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

  /** Why the session's counter was dropped before its verify, if it was. */
  droppedReason(sessionId: string): DropReason | undefined {
    this.sweep();
    return this.entries.has(sessionId) ? undefined : this.dropped.get(sessionId);
  }

  /** Seeds a session: Python `dict.setdefault` (a session that has a counter keeps it). */
  seed(sessionId: string, value: number): void {
    this.dropped.delete(sessionId);
    this.setDefault(sessionId, value);
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
    this.dropped.delete(sessionId);
    return e?.count;
  }

  /** Drops idle entries and the oldest ones above the cap. */
  sweep(): void {
    const cutoff = this.now() - this.options.idleTtlMs;
    for (const [id, e] of this.entries) {
      const idle = e.touched <= cutoff;
      if (!idle && this.entries.size <= this.options.maxSessions) break;
      this.entries.delete(id);
      this.remember(id, idle ? 'idle' : 'capacity');
    }
  }

  clear(): void {
    this.entries.clear();
    this.dropped.clear();
  }

  private remember(id: string, reason: DropReason): void {
    this.dropped.delete(id);
    this.dropped.set(id, reason);
    if (this.dropped.size > this.options.maxSessions) this.dropped.delete(this.dropped.keys().next().value as string);
  }

  private touch(sessionId: string, count: number): void {
    this.entries.delete(sessionId);
    this.entries.set(sessionId, { count, touched: this.now() });
    if (this.entries.size > this.options.maxSessions) this.sweep();
  }
}
