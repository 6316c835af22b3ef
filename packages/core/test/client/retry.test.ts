import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY, retryPolicy, type RetryPolicy } from '@nemo-gym/core/client';
import { passOnHeaders } from '../../src/client/retry.js';
import { backoffDelay, classifyRequest, isConnectFailure, parseRetryAfter, retryAfterMs, retryDecision, withRetries } from '@nemo-gym/core/internal';

const err = (code: string) => Object.assign(new Error(code), { code });
const wrapped = (code: string) => new Error('fetch failed', { cause: err(code) });
const policy: RetryPolicy = { ...DEFAULT_RETRY, maxAttempts: 4, maxElapsedMs: 10_000, initialDelayMs: 100, maxDelayMs: 1000 };
const half = () => 0.5;

describe('classifyRequest', () => {
  it('lets reads be resent and sends everything else once', () => {
    expect(classifyRequest('GET')).toBe('idempotent');
    expect(classifyRequest('head')).toBe('idempotent');
    expect(classifyRequest('OPTIONS')).toBe('idempotent');
    expect(classifyRequest('POST')).toBe('once');
    expect(classifyRequest('put')).toBe('once');
    expect(classifyRequest('DELETE')).toBe('once');
  });
});

describe('retryDecision: a request that may have been delivered (once)', () => {
  it('is resent after a failure before any byte was written', () => {
    expect(retryDecision(policy, 'once', { error: err('ECONNREFUSED'), sent: false }, 1, 0, half)).toEqual({ retry: true, delayMs: 50 });
    expect(retryDecision(policy, 'once', { error: err('UND_ERR_CONNECT_TIMEOUT'), sent: false }, 1, 0, half).retry).toBe(true);
    // A socket that died before our request was written to it.
    expect(retryDecision(policy, 'once', { error: err('ECONNRESET'), sent: false }, 1, 0, half).retry).toBe(true);
  });

  it('is not resent after a timeout or a dropped connection once it was sent', () => {
    for (const code of ['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED']) {
      const d = retryDecision(policy, 'once', { error: err(code), sent: true }, 1, 0, half);
      expect(d.retry, code).toBe(false);
    }
    expect(retryDecision(policy, 'once', { error: err('UND_ERR_SOCKET'), sent: true }, 1, 0, half)).toMatchObject({ why: expect.stringMatching(/may have reached the server/) });
  });

  it('judges from the error code when the sender cannot tell whether it wrote anything', () => {
    expect(retryDecision(policy, 'once', { error: wrapped('ECONNREFUSED') }, 1, 0, half).retry).toBe(true);
    expect(retryDecision(policy, 'once', { error: wrapped('ECONNRESET') }, 1, 0, half).retry).toBe(false);
    expect(isConnectFailure(wrapped('ENOTFOUND'))).toBe(true);
    expect(isConnectFailure(wrapped('UND_ERR_SOCKET'))).toBe(false);
  });

  it('is resent on 429 and 503 (refused before processing) but not on 500, 502, 504 or 408', () => {
    expect(retryDecision(policy, 'once', { status: 429 }, 1, 0, half).retry).toBe(true);
    expect(retryDecision(policy, 'once', { status: 503 }, 1, 0, half).retry).toBe(true);
    for (const s of [500, 502, 504, 408, 400, 404, 422]) expect(retryDecision(policy, 'once', { status: s }, 1, 0, half).retry, String(s)).toBe(false);
  });

  it('is not resent on a 429/503 passed on with the no-resend header, whatever the request class', () => {
    const headers = passOnHeaders({ get: (n: string) => (n === 'retry-after' ? '0' : null) });
    expect(headers).toEqual({ 'retry-after': '0', 'x-nemo-gym-no-resend': '1' });
    for (const cls of ['once', 'idempotent'] as const) {
      for (const status of [429, 503]) {
        const d = retryDecision(policy, cls, { status, headers }, 1, 0, half);
        expect(d).toEqual({ retry: false, why: expect.stringContaining('already acted on the request or spent its own retries') });
      }
    }
  });
});

describe('retryDecision: idempotent requests', () => {
  it('are resent after any transient transport failure and on 408/429/502/503/504, never on 500', () => {
    for (const code of ['ECONNRESET', 'UND_ERR_SOCKET', 'ECONNREFUSED', 'EPIPE']) {
      expect(retryDecision(policy, 'idempotent', { error: err(code), sent: true }, 1, 0, half).retry, code).toBe(true);
    }
    for (const s of [408, 429, 502, 503, 504]) expect(retryDecision(policy, 'idempotent', { status: s }, 1, 0, half).retry, String(s)).toBe(true);
    expect(retryDecision(policy, 'idempotent', { status: 500 }, 1, 0, half).retry).toBe(false);
    expect(retryDecision(policy, 'idempotent', { error: new Error('no code'), sent: false }, 1, 0, half).retry).toBe(false);
    expect(retryDecision(policy, 'idempotent', { error: err('UND_ERR_HEADERS_TIMEOUT'), sent: true }, 1, 0, half).retry).toBe(false);
  });

  it('follow a policy that turns statuses or connection retries off', () => {
    expect(retryDecision({ ...policy, retryStatuses: [] }, 'idempotent', { status: 503 }, 1, 0, half).retry).toBe(false);
    expect(retryDecision({ ...policy, retryStatuses: [] }, 'once', { status: 429 }, 1, 0, half).retry).toBe(false);
    expect(retryDecision({ ...policy, retryConnectionErrors: false }, 'once', { error: err('ECONNREFUSED'), sent: false }, 1, 0, half).retry).toBe(false);
  });
});

describe('retryDecision: budgets, backoff and Retry-After', () => {
  it('stops at the attempt budget', () => {
    expect(retryDecision(policy, 'idempotent', { status: 503 }, 3, 0, half).retry).toBe(true);
    expect(retryDecision(policy, 'idempotent', { status: 503 }, 4, 0, half)).toEqual({ retry: false, why: 'the retry budget of 4 attempt(s) is used up' });
  });

  it('never schedules an attempt past the time budget', () => {
    expect(retryDecision(policy, 'once', { status: 429 }, 1, 9_900, () => 1).retry).toBe(true); // 100 ms pause ends at 10 s
    expect(retryDecision(policy, 'once', { status: 429 }, 1, 9_901, () => 1)).toMatchObject({ retry: false, why: expect.stringMatching(/time budget/) });
    expect(retryDecision(policy, 'once', { status: 429, headers: { 'retry-after': '5' } }, 1, 6_000, () => 0)).toMatchObject({ retry: false });
  });

  it('backs off exponentially with full jitter, capped', () => {
    const p = { ...DEFAULT_RETRY, initialDelayMs: 500, maxDelayMs: 8000 };
    expect(backoffDelay(p, 1, () => 0)).toBe(0);
    expect(backoffDelay(p, 1, () => 1)).toBe(500);
    expect(backoffDelay(p, 3, () => 1)).toBe(2000);
    expect(backoffDelay(p, 3, () => 0.25)).toBe(500);
    expect(backoffDelay(p, 10, () => 1)).toBe(8000);
  });

  it('waits at least what Retry-After / retry-after-ms ask, and gives up when they ask too much', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThan(3000);
    expect(retryAfterMs({ 'retry-after-ms': '120', 'retry-after': '9' })).toBe(120);
    expect(retryAfterMs({ 'retry-after': ['2', '7'] })).toBe(2000);
    expect(retryAfterMs({})).toBeNull();
    expect(retryDecision(policy, 'once', { status: 429, headers: { 'retry-after': '2' } }, 1, 0, () => 0)).toEqual({ retry: true, delayMs: 2000 });
    expect(retryDecision(policy, 'once', { status: 503, headers: { 'retry-after-ms': '10' } }, 1, 0, () => 1)).toEqual({ retry: true, delayMs: 100 });
    const long = retryDecision({ ...policy, maxElapsedMs: 1e9 }, 'once', { status: 429, headers: { 'retry-after': '3600' } }, 1, 0, half);
    expect(long).toMatchObject({ retry: false, why: expect.stringMatching(/asks to wait 3600 s/) });
  });

  it('rejects a policy without attempts', () => {
    expect(() => retryPolicy({ maxAttempts: 0 })).toThrow(/at least 1/);
  });
});

describe('withRetries', () => {
  const fast = { ...policy, initialDelayMs: 1, maxDelayMs: 2 };

  it('resends a POST that never left, and reports the attempts', async () => {
    let n = 0;
    const r = await withRetries(fast, 'once', async () => {
      if (++n < 3) throw err('ECONNREFUSED');
      return { status: 200 };
    });
    expect(r).toEqual({ ok: true, response: { status: 200 }, attempts: 3 });
  });

  it('does not resend a POST whose bytes went out', async () => {
    let n = 0;
    const r = await withRetries(fast, 'once', async (attempt) => {
      n++;
      attempt.sent = true;
      throw err('ECONNRESET');
    });
    expect(n).toBe(1);
    expect(r).toMatchObject({ ok: false, sent: true, attempts: 1, why: expect.stringMatching(/may have reached/) });
  });

  it('returns the last answer when the budget ends on a retried status', async () => {
    let n = 0;
    const r = await withRetries(fast, 'once', async () => ({ status: 429, n: ++n }));
    expect(r).toMatchObject({ ok: true, attempts: 4, response: { status: 429, n: 4 } });
  });

  it('stops waiting when the signal aborts', async () => {
    const ac = new AbortController();
    const started = Date.now();
    setTimeout(() => ac.abort(), 20);
    const r = await withRetries({ ...policy, initialDelayMs: 5000, maxDelayMs: 5000 }, 'once', async () => ({ status: 503, headers: { 'retry-after': '5' } }), { signal: ac.signal });
    expect(r).toMatchObject({ ok: true, attempts: 1 });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
