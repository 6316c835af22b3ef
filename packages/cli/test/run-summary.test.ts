/**
 * The terminal summary of a collection adds up: a field only some rows carry is averaged over
 * those rows (and says how many), and a mixed-environment run gets one line per agent.
 */
import { describe, expect, it } from 'vitest';
import { MetricsAccumulator } from '@nemo-gym/core/rollouts';
import { metricsTable } from '../src/commands/collect-rollouts.js';

/** 6 weather rollouts (reward 1, no used_tool) and 3 math rollouts (reward 0, used_tool true), 3 tasks each at 3 repeats. */
function mixedRun(): Record<string, unknown> {
  const acc = new MetricsAccumulator(true);
  for (let i = 0; i < 6; i++) acc.add({ reward: 1 }, Math.floor(i / 3), 'weather_agent');
  for (let i = 0; i < 3; i++) acc.add({ reward: 0, used_tool: true }, 2, 'math_agent');
  return acc.summary();
}

describe('the run summary', () => {
  it('keeps upstream’s mean over every row and adds the mean over the rows that have the field', () => {
    const m = mixedRun();
    expect((m.mean as Record<string, number>).used_tool).toBeCloseTo(1 / 3);
    expect(m.mean_where_present).toEqual({ used_tool: { mean: 1, rows: 3 } });
    expect((m.per_agent as Record<string, unknown>).math_agent).toEqual({ rows: 3, mean: { reward: 0, used_tool: 1 }, 'mean@3': 0, 'pass@1': 0, 'pass@3': 0 });
  });

  it('prints field means over the rows that have them, and one line per agent', () => {
    const table = metricsTable(mixedRun(), { written: 9, failed: 0, skipped: 0 });
    expect(table).toMatch(/other means +used_tool 1 \(3 of 9 rows\)\n/);
    expect(table).toContain('agent weather_agent  6 rollouts, reward mean 1  mean@3 1  pass@1 1  pass@3 1');
    expect(table).toContain('agent math_agent     3 rollouts, reward mean 0  mean@3 0  pass@1 0  pass@3 0  used_tool 1');
  });

  it('a single-agent run has no agent lines and plain means', () => {
    const acc = new MetricsAccumulator(false);
    acc.add({ reward: 1, used_tool: true }, 0, 'a');
    acc.add({ reward: 0, used_tool: false }, 1, 'a');
    const table = metricsTable(acc.summary(), { written: 2, failed: 0, skipped: 0 });
    expect(table).toContain('used_tool 0.5');
    expect(table).not.toMatch(/agent a|of 2 rows/);
  });
});
