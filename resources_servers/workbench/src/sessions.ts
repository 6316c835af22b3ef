/**
 * Per-session environments. Upstream keeps one per session forever; here an entry is dropped when
 * its rollout is verified, when it has been idle longer than the TTL, and (least recently used
 * first) when more than `maxSessions` are live. A dropped session is remembered (a bounded list),
 * so a late tool call is told why instead of being treated as never seeded.
 */

export type DropReason = 'idle' | 'capacity';

export interface SessionStoreOptions {
  idleTtlMs: number;
  maxSessions: number;
  now?: () => number;
}

export class SessionStore<T> {
  /** Least recently used first: every touch re-inserts the entry. */
  private readonly entries = new Map<string, { value: T; touched: number }>();
  private readonly dropped = new Map<string, DropReason>();
  private readonly now: () => number;

  constructor(private readonly options: SessionStoreOptions) {
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Replaces the session's value (upstream's seed_session overwrites). */
  set(id: string, value: T): void {
    this.dropped.delete(id);
    this.entries.delete(id);
    this.entries.set(id, { value, touched: this.now() });
    this.sweep();
  }

  /** The session's value (refreshing its idle clock), or undefined. */
  get(id: string): T | undefined {
    this.sweep();
    const e = this.entries.get(id);
    if (!e) return undefined;
    this.entries.delete(id);
    e.touched = this.now();
    this.entries.set(id, e);
    return e.value;
  }

  delete(id: string): void {
    this.entries.delete(id);
    this.dropped.delete(id);
  }

  droppedReason(id: string): DropReason | undefined {
    return this.entries.has(id) ? undefined : this.dropped.get(id);
  }

  sweep(): void {
    const cutoff = this.now() - this.options.idleTtlMs;
    for (const [id, e] of this.entries) {
      const idle = e.touched <= cutoff;
      if (!idle && this.entries.size <= this.options.maxSessions) break;
      this.entries.delete(id);
      this.dropped.delete(id);
      this.dropped.set(id, idle ? 'idle' : 'capacity');
      if (this.dropped.size > this.options.maxSessions) this.dropped.delete(this.dropped.keys().next().value as string);
    }
  }

  clear(): void {
    this.entries.clear();
    this.dropped.clear();
  }
}
