// Reference behaviour of the math_with_judge library check, grouped by feature. The inputs were
// written for this package; the expected reward and extracted answer of each case were produced
// by math-verify 0.8.0 itself (see fixtures/reference-cases.json "source").
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { verifyAnswerWithLibrary } from '../src/index.js';

type Case = { gold: string; pred: string; reward: number; extracted: string | null };
const fixture = JSON.parse(readFileSync(new URL('./fixtures/reference-cases.json', import.meta.url), 'utf8')) as { groups: Record<string, Case[]> };

for (const [feature, cases] of Object.entries(fixture.groups)) {
  describe(feature, () => {
    it.each(cases.map((c) => [c.gold, c.pred, c] as const))('expected %j, answer %j', (_g, _p, c) => {
      const r = verifyAnswerWithLibrary(c.gold, c.pred);
      expect({ reward: r.reward, extracted: r.extracted }).toEqual({ reward: c.reward, extracted: c.extracted });
    });
  });
}
