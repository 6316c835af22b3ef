import { describe, expect, it, vi } from 'vitest';
import { HttpError } from '@nemo-gym/core/errors';
import { SessionStore } from '@nemo-gym/core/server';

describe('SessionStore', () => {
  it('drops idle sessions and the least recently used beyond the cap, and says why', () => {
    let now = 0;
    const store = new SessionStore<string>({ idleTtlMs: 1000, maxSessions: 2, now: () => now });
    store.set('a', 'A');
    store.set('b', 'B');
    now = 500;
    expect(store.get('a')).toBe('A'); // a is now the most recently used
    store.set('c', 'C');
    expect(store.get('b')).toBeUndefined();
    expect(store.droppedReason('b')).toBe('capacity');
    now = 1600;
    expect(store.get('a')).toBeUndefined();
    expect(store.droppedReason('a')).toBe('idle');
    store.set('a', 'A2');
    expect(store.droppedReason('a')).toBeUndefined();
    expect(store.get('a')).toBe('A2');
    store.delete('a');
    expect(store.get('a')).toBeUndefined();
    expect(store.droppedReason('a')).toBeUndefined();
    expect(store.droppedReason('never')).toBeUndefined();
  });

  it('hands every dropped entry to onDrop with its reason (not entries taken or deleted); ids lists the live ones', () => {
    let now = 0;
    const dropped: string[] = [];
    const store = new SessionStore<string>({ idleTtlMs: 1000, maxSessions: 2, now: () => now, onDrop: (id, v, why) => dropped.push(`${id}=${v}:${why}`) });
    store.set('a', 'A');
    store.set('b', 'B');
    store.set('c', 'C');
    expect(dropped).toEqual(['a=A:capacity']);
    expect(store.ids()).toEqual(['b', 'c']);
    expect(store.take('b')).toBe('B');
    now = 2000;
    store.sweep();
    expect(dropped).toEqual(['a=A:capacity', 'c=C:idle']);
    expect(store.ids()).toEqual([]);
  });

  it('a busy entry is not dropped as idle (its clock restarts), but still counts against the cap', () => {
    let now = 0;
    const busy = new Set<string>();
    const store = new SessionStore<string>({ idleTtlMs: 1000, maxSessions: 2, now: () => now, isBusy: (v) => busy.has(v) });
    store.set('a', 'A');
    store.set('b', 'B');
    busy.add('A');
    now = 1500;
    store.sweep();
    expect(store.ids()).toEqual(['a']);
    expect(store.droppedReason('b')).toBe('idle');
    busy.delete('A');
    now = 2400;
    store.sweep();
    expect(store.ids()).toEqual(['a']); // renewed at 1500
    now = 2600;
    store.sweep();
    expect(store.droppedReason('a')).toBe('idle');
    busy.add('C');
    busy.add('D');
    busy.add('E');
    store.set('c', 'C');
    store.set('d', 'D');
    store.set('e', 'E');
    expect(store.ids()).toEqual(['d', 'e']);
    expect(store.droppedReason('c')).toBe('capacity');
  });
  it('a dropped session answers 410 naming the setting to raise; a live or never-seeded one has no such answer', () => {
    let now = 0;
    const store = new SessionStore<string>({ idleTtlMs: 1500, maxSessions: 1, now: () => now, what: 'The counter of this session' });
    store.set('a', 'A');
    store.set('b', 'B');
    const cap = store.droppedError('a');
    expect(cap).toBeInstanceOf(HttpError);
    expect(cap!.status).toBe(410);
    expect(cap!.message).toBe('The counter of this session was dropped because more sessions were live than max_sessions = 1 allows; raise that setting in the server config and run the rollout again.');
    now = 2000;
    expect(() => store.assertNotDropped('b')).toThrow(/^The counter of this session was dropped because it was idle longer than session_idle_ttl_s \(1\.5 s\)/);
    expect(store.droppedError('never')).toBeUndefined();
    store.set('c', 'C');
    expect(() => store.assertNotDropped('c')).not.toThrow();
    expect(new SessionStore<string>({ idleTtlMs: 1000, maxSessions: 0 }).droppedError('x')).toBeUndefined();
  });

  it('startSweeping drops idle sessions without any call; close stops it and hands back the live values', () => {
    vi.useFakeTimers();
    try {
      const dropped: string[] = [];
      const store = new SessionStore<string>({ idleTtlMs: 5000, maxSessions: 10, onDrop: (id) => dropped.push(id) }).startSweeping(60_000);
      store.set('a', 'A');
      vi.advanceTimersByTime(5000); // the sweep at 5 s (the TTL is below 60 s): a is idle
      expect(dropped).toEqual(['a']);
      vi.advanceTimersByTime(1000);
      store.set('b', 'B');
      vi.advanceTimersByTime(4000); // the sweep at 10 s: b is not idle yet
      expect(dropped).toEqual(['a']);
      expect(store.close()).toEqual(['B']);
      expect(store.size).toBe(0);
      store.set('c', 'C');
      vi.advanceTimersByTime(60_000);
      expect(dropped).toEqual(['a']); // no sweep after close
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
