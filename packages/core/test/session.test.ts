import { describe, expect, it } from 'vitest';
import { formatCookieHeader, parseCookieHeader, parseSetCookies } from '../src/http/cookies.js';
import { encodeSession } from '../src/server/session.js';
import { sessionCookies } from '@nemo-gym/core/internal';

describe('cookie headers', () => {
  it('parses a Cookie header, keeping values as sent and skipping malformed parts', () => {
    expect(parseCookieHeader('a=1; b = x=y ;=bad; novalue; c=')).toEqual({ a: '1', b: 'x=y', c: '' });
    expect(parseCookieHeader(undefined)).toEqual({});
  });

  it('parses Set-Cookie lines and formats a Cookie header', () => {
    expect(parseSetCookies(['s=1.sig; Path=/; HttpOnly', 't=2'])).toEqual({ s: '1.sig', t: '2' });
    expect(parseSetCookies('u=3; Max-Age=5')).toEqual({ u: '3' });
    expect(formatCookieHeader({ a: '1', b: '2' })).toBe('a=1; b=2');
    expect(formatCookieHeader({})).toBeUndefined();
    expect(formatCookieHeader(null)).toBeUndefined();
  });
});

describe('session cookies of one server instance', () => {
  const name = 'Srv___one';

  it('opens a new session without a cookie and re-sends it signed', () => {
    const s = sessionCookies(name, undefined);
    const session = s.open('other=1');
    expect(session.cookies).toEqual({ other: '1' });
    const [line] = s.setCookieValues(session);
    expect(line).toBe(`${name}=${encodeSession(session.id, name)}; Path=/; Max-Age=1209600; HttpOnly; SameSite=Lax`);
  });

  it('keeps the id of a signed cookie, from its cache and from a fresh instance alike', () => {
    const a = sessionCookies(name, undefined);
    const first = a.open(undefined);
    const cookie = parseSetCookies(a.setCookieValues(first))[name]!;
    expect(a.open(`${name}=${cookie}`).id).toBe(first.id);
    expect(sessionCookies(name, undefined).open(`${name}=${cookie}`).id).toBe(first.id);
  });

  it('replaces a forged or foreign-secret cookie with a new session', () => {
    const s = sessionCookies(name, 'secret');
    expect(s.open(`${name}=abc.${'x'.repeat(43)}`).id).not.toBe('abc');
    const unsigned = encodeSession('abc', name);
    expect(s.open(`${name}=${unsigned}`).id).not.toBe('abc');
    expect(s.open(`${name}=${encodeSession('abc', `secret:${name}`)}`).id).toBe('abc');
  });

  it('puts cookies a handler added before its own, never overriding its own', () => {
    const s = sessionCookies(name, undefined);
    const session = s.open(undefined);
    session.extra = { Model___m: 'v1', [name]: 'spoof' };
    const lines = s.setCookieValues(session);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^Model___m=v1; /);
    expect(parseSetCookies(lines[1]!)[name]).toBe(encodeSession(session.id, name));
  });
});
