import { describe, expect, it } from 'vitest';
import { nextRetryDelay, retryPolicy } from '@nemo-gym/core/client';

describe('nextRetryDelay: the retry policy for loops that are not HTTP requests', () => {
  const p = retryPolicy({ maxAttempts: 4, maxElapsedMs: 10_000, initialDelayMs: 500, maxDelayMs: 1_500 });

  it('backs off with full jitter under a doubling ceiling', () => {
    expect(nextRetryDelay(p, 1, 0, () => 1)).toBe(500);
    expect(nextRetryDelay(p, 2, 0, () => 1)).toBe(1_000);
    expect(nextRetryDelay(p, 3, 0, () => 1)).toBe(1_500);
    expect(nextRetryDelay(p, 3, 0, () => 0.5)).toBe(750);
    expect(nextRetryDelay(p, 1, 0, () => 0)).toBe(0);
  });

  it('stops when the attempt budget or the time budget is spent', () => {
    expect(nextRetryDelay(p, 4, 0, () => 0)).toBeNull();
    expect(nextRetryDelay(p, 2, 9_500, () => 1)).toBeNull();
    expect(nextRetryDelay(p, 2, 9_000, () => 1)).toBe(1_000);
  });
});
