/**
 * Per-session counters: the core SessionStore (idle TTL, cap, dropped sessions remembered so a
 * late call is reported as expired instead of silently starting again from 0 and scoring a wrong
 * 0.0) with upstream's `dict.setdefault` reads.
 */
import { SessionStore } from '@nemo-gym/core/server';

export class CounterStore extends SessionStore<number> {
  /** Seeds a session: Python `dict.setdefault` (a session that has a counter keeps it). */
  seed(sessionId: string, value: number): void {
    this.setDefault(sessionId, value);
  }

  /** Python `dict.setdefault`: sets the value only for a session that has none; returns the value. */
  setDefault(sessionId: string, value: number): number {
    const count = this.get(sessionId) ?? value;
    this.set(sessionId, count);
    return count;
  }
}
