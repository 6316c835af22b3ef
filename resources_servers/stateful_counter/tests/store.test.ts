import { describe, expect, it } from 'vitest';
import { CounterStore } from '../src/store.js';

function clockStore(idleTtlMs: number, maxSessions: number) {
  let t = 1_000;
  const store = new CounterStore({ idleTtlMs, maxSessions, now: () => t });
  return { store, advance: (ms: number) => (t += ms) };
}

describe('CounterStore', () => {
  it('setDefault keeps an existing value, like dict.setdefault', () => {
    const { store } = clockStore(1000, 10);
    expect(store.setDefault('a', 3)).toBe(3);
    expect(store.setDefault('a', 9)).toBe(3);
  });

  it('take returns the counter once and frees it', () => {
    const { store } = clockStore(1000, 10);
    store.set('a', 5);
    expect(store.take('a')).toBe(5);
    expect(store.take('a')).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('drops sessions idle longer than the TTL, keeps recently used ones', () => {
    const { store, advance } = clockStore(1000, 10);
    store.set('old', 1);
    advance(600);
    store.set('recent', 2);
    advance(500); // old idle 1100 ms, recent idle 500 ms
    expect(store.has('old')).toBe(false);
    expect(store.has('recent')).toBe(true);
  });

  it('a touch renews the TTL', () => {
    const { store, advance } = clockStore(1000, 10);
    store.set('a', 1);
    advance(900);
    store.setDefault('a', 0);
    advance(900);
    expect(store.take('a')).toBe(1);
  });

  it('caps live sessions, dropping the least recently used', () => {
    const { store } = clockStore(60_000, 3);
    for (const id of ['a', 'b', 'c']) store.set(id, 1);
    store.setDefault('a', 0); // a is now the most recent
    store.set('d', 1);
    expect(store.size).toBe(3);
    expect(store.has('b')).toBe(false);
    expect(store.has('a')).toBe(true);
    expect(store.has('d')).toBe(true);
  });
});

describe('CounterStore remembers sessions dropped before their verify', () => {
  it('reports idle and capacity drops, forgets them on take or a new seed', () => {
    let t = 0;
    const store = new CounterStore({ idleTtlMs: 100, maxSessions: 2, now: () => t });
    store.seed('idle', 1);
    t = 200;
    expect(store.droppedReason('idle')).toBe('idle');
    store.seed('a', 1);
    store.seed('b', 1);
    store.seed('c', 1);
    expect(store.droppedReason('a')).toBe('capacity');
    expect(store.droppedReason('c')).toBeUndefined();
    expect(store.take('a')).toBeUndefined();
    expect(store.droppedReason('a')).toBeUndefined();
    store.seed('idle', 5);
    expect(store.droppedReason('idle')).toBeUndefined();
    expect(store.take('idle')).toBe(5);
  });

  it('never-seen sessions are not reported as dropped', () => {
    const store = new CounterStore({ idleTtlMs: 100, maxSessions: 2 });
    expect(store.droppedReason('unknown')).toBeUndefined();
  });
});
