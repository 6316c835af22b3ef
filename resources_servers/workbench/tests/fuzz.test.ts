/**
 * Seeded fuzzing of the tool route and the reward with arguments of every JSON type: every call
 * ends as a tool answer (never an internal error), and replaying the same calls twice always
 * scores 1.0 (the tools are deterministic).
 */
import { describe, expect, it } from 'vitest';
import { mulberry32 as rng } from '@nemo-gym/core/data';
import { PyException } from '../src/py.js';
import { reward } from '../src/replay.js';
import { callTool, Environment, TOOLS } from '../src/tools.js';
import { HAVE_DATA, realData } from './helpers.js';

const STRINGS = [
  '', 'a', 'Kofi', '00000259', '00000013', '00000149', '00000052', '00000014', '500', 'kofi.mensah@atlas.com', 'nadia.moreau@atlas.com',
  'leila.azizi@atlas.com', 'email_id', 'subject', 'status', 'board', 'list_name', 'duration', 'event_start', 'participant_email',
  'Won', 'Lead', 'Design', 'Backlog', 'Hardware', '2023-11-01', '2023-12-05 09:00:00', '2023-12-01T10:00:00Z', 'Dec 1 2023 3pm',
  'not a date', '(', '[a-', 'a|b', '.*', '60', '-5', 'total_visits', 'bar', 'referral', 'x y', '__proto__', 'constructor',
];

function value(r: () => number, depth = 0): unknown {
  const x = r();
  if (x < 0.55) return STRINGS[Math.floor(r() * STRINGS.length)];
  if (x < 0.65) return Math.floor(r() * 7) - 2;
  if (x < 0.7) return r() * 10 - 3;
  if (x < 0.75) return r() < 0.5;
  if (x < 0.8) return null;
  if (x < 0.9 && depth < 2) return Array.from({ length: Math.floor(r() * 3) }, () => value(r, depth + 1));
  if (depth < 2) return { k: value(r, depth + 1) };
  return 'z';
}

function randomCall(r: () => number): { name: string; args: [string, unknown][] } {
  const names = [...TOOLS.keys()];
  const name = r() < 0.03 ? 'unknown_tool' : names[Math.floor(r() * names.length)]!;
  const params = TOOLS.get(name)?.params.map(([p]) => p) ?? ['x'];
  const args: [string, unknown][] = [];
  for (const p of params) if (r() < 0.7) args.push([p, value(r)]);
  if (r() < 0.05) args.push(['unexpected', 1]);
  return { name, args };
}

describe.skipIf(!HAVE_DATA)('fuzz', () => {
  it('3,000 random calls in 300 sessions: every failure is a Python-level error, and replays are deterministic', () => {
    const r = rng(7);
    const data = realData();
    let pyErrors = 0;
    for (let s = 0; s < 300; s++) {
      const env = new Environment(data);
      const calls: { name: string; arguments: string }[] = [];
      for (let k = 0; k < 10; k++) {
        const { name, args } = randomCall(r);
        try {
          const out = callTool(env, name, args);
          expect(out === null || ['string', 'object'].includes(typeof out), name).toBe(true);
        } catch (e) {
          if (!(e instanceof PyException)) throw new Error(`${name}(${JSON.stringify(args)}) raised a non-Python error: ${(e as Error).stack}`);
          pyErrors++;
        }
        calls.push({ name, arguments: JSON.stringify(Object.fromEntries(args)) });
      }
      const output = calls.map((c, i) => ({ type: 'function_call', call_id: `c${i}`, ...c }));
      expect(reward(data, output, calls)).toBe(1);
    }
    expect(pyErrors).toBeGreaterThan(50);
  });
});
