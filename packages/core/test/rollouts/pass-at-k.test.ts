/**
 * pass@k when tasks have different numbers of scored rollouts (masked samples and failed
 * rollouts are left out): each task by its own n, worked out by hand below.
 */
import { describe, expect, it } from 'vitest';
import { MetricsAccumulator, passAtKOf, taskPassAtK } from '../../src/rollouts/metrics.js';

type Json = Record<string, unknown>;
const tasks = (...values: number[][]) => new Map(values.map((vs, i) => [i, vs]));

describe('taskPassAtK', () => {
  it('binary values: 1 - C(n-c, k) / C(n, k) with the task\'s own n', () => {
    // n 4, c 1, k 3: 1 - C(3,3)/C(4,3) = 1 - 1/4.
    expect(taskPassAtK([1, 0, 0, 0], 3)).toBeCloseTo(0.75, 12);
    // n 5, c 2, k 2: 1 - C(3,2)/C(5,2) = 1 - 3/10.
    expect(taskPassAtK([0, 1, 0, 1, 0], 2)).toBeCloseTo(0.7, 12);
    // k 1 is the share of 1s.
    expect(taskPassAtK([1, 0, 0], 1)).toBeCloseTo(1 / 3, 12);
    // Fewer wrong values than k: certain.
    expect(taskPassAtK([1, 1, 0], 2)).toBe(1);
    expect(taskPassAtK([0, 0, 0], 3)).toBe(0);
  });

  it('partial credit: the best of the first k values, as upstream', () => {
    expect(taskPassAtK([0.5, 1, 0], 1)).toBe(0.5);
    expect(taskPassAtK([0.5, 1, 0], 2)).toBe(1);
    expect(taskPassAtK([0.2, 0.1], 2)).toBe(0.2);
  });
});

describe('passAtKOf', () => {
  it('tasks with different n: pass@k over the tasks with n ≥ k, the left-out count, and pass@m for the n every task has', () => {
    // A: n 4, c 2   B: n 3, c 1 (one rollout masked or failed)   C: n 4, c 0   D: n 4, c 1
    const m = passAtKOf(tasks([1, 1, 0, 0], [1, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0]))!;
    // pass@1 = mean of c/n over all four: (1/2 + 1/3 + 0 + 1/4) / 4 = 13/48.
    expect(m['pass@1']).toBeCloseTo(13 / 48, 12);
    // pass@3 (every task has 3): A 1 (2 wrong < 3), B 1, C 0, D 1 - C(3,3)/C(4,3) = 3/4 → 2.75 / 4.
    expect(m['pass@3']).toBeCloseTo(0.6875, 12);
    // pass@4 over A, C, D: (1 + 0 + 1) / 3; B left out.
    expect(m['pass@4']).toBeCloseTo(2 / 3, 12);
    expect(m['pass@k_tasks_left_out']).toBe(1);
    // mean@4: each task's mean over its own n, averaged: same as pass@1 for 0/1 values.
    expect(m['mean@4']).toBeCloseTo(13 / 48, 12);
    expect(Object.keys(m).sort()).toEqual(['mean@4', 'pass@1', 'pass@3', 'pass@4', 'pass@k_tasks_left_out']);
  });

  it('binary or not is decided per task (upstream\'s rule)', () => {
    // T0 partial credit, n 3; T1 binary, n 2; T2 partial, n 1.
    const m = passAtKOf(tasks([0.5, 1, 0], [1, 0], [0.2]))!;
    // pass@1: T0 its first value 0.5, T1 c/n = 0.5, T2 0.2 → 1.2 / 3.
    expect(m['pass@1']).toBeCloseTo(0.4, 12);
    // pass@3: T0 only (best of 3 = 1); T1 and T2 left out. The common n is 1: no extra key.
    expect(m['pass@3']).toBe(1);
    expect(m['pass@k_tasks_left_out']).toBe(2);
    // mean@3: (0.5 + 0.5 + 0.2) / 3.
    expect(m['mean@3']).toBeCloseTo(0.4, 12);
    expect(Object.keys(m).sort()).toEqual(['mean@3', 'pass@1', 'pass@3', 'pass@k_tasks_left_out']);
  });

  it('tasks with the same n: pass@1, pass@n and mean@n only, nothing left out; nothing for one rollout per task', () => {
    expect(passAtKOf(tasks([1, 0], [0, 0], [1, 1]))).toEqual({ 'mean@2': 0.5, 'pass@1': 0.5, 'pass@2': 2 / 3 });
    expect(passAtKOf(tasks([1], [0]))).toBeNull();
    expect(passAtKOf(new Map())).toBeNull();
  });
});

describe('MetricsAccumulator', () => {
  it('masked samples make tasks uneven: pass@k is still reported, for the reward and each component', () => {
    const acc = new MetricsAccumulator(true);
    const row = (reward: number, masked = false) => ({ reward, reward_components: { format: reward === 1 ? 1 : 0.5 }, ...(masked ? { mask_sample: true, failure_reason: 'max_steps' } : {}) });
    // Task 0: 1, 0, 1; task 1: 0, (masked), 0; task 2: 1, 1, (masked).
    for (const [t, r, masked] of [[0, 1], [0, 0], [0, 1], [1, 0], [1, 1, true], [1, 0], [2, 1], [2, 1], [2, 0, true]] as [number, number, boolean?][]) acc.add(row(r, masked), t, 'a');
    const s = acc.summary() as Record<string, any>;
    // pass@1: (2/3 + 0 + 1) / 3; pass@2 (every task has 2): (1 - C(1,2)/C(3,2) = 1, 0, 1) / 3; pass@3: task 0 only.
    expect(s['pass@1']).toBeCloseTo(5 / 9, 12);
    expect(s['pass@2']).toBeCloseTo(2 / 3, 12);
    expect(s['pass@3']).toBe(1);
    expect(s['pass@k_tasks_left_out']).toBe(2);
    expect(s.masked.count).toBe(2);
    // The component: task 0 [1, 0.5, 1], task 1 [0.5, 0.5], task 2 [1, 1] (partial credit except task 2).
    const format = s.reward_components.format as Record<string, number>;
    expect(format['pass@1']).toBeCloseTo((1 + 0.5 + 1) / 3, 12);
    expect(format['pass@3']).toBe(1);
    expect(format['pass@k_tasks_left_out']).toBe(2);
  });

  it("partial credit: the first k are the task's first rollouts, whatever order they finished in", () => {
    const inOrder = new MetricsAccumulator(true);
    const reversed = new MetricsAccumulator(true);
    // Task 0: 0.25, 0.5, 0.75, 1 (rollouts 0..3); task 1: 0.5, 0.25, 0.25, 0.25.
    const rows = [0, 1, 2, 3].flatMap((r) => [[{ reward: 0.25 * (r + 1) }, 0, r], [{ reward: r === 0 ? 0.5 : 0.25 }, 1, r]] as [Json, number, number][]);
    for (const [row, t, r] of rows) inOrder.add(row, t, 'a', r);
    for (const [row, t, r] of [...rows].reverse()) reversed.add(row, t, 'a', r);
    const s = reversed.summary() as Json;
    expect(s).toEqual(inOrder.summary());
    // pass@1: rollout 0 of each task (0.25 and 0.5; in finishing order it would be 1 and 0.25);
    // pass@4: the best of all four (1 and 0.5).
    expect(s['pass@1']).toBeCloseTo(0.375, 12);
    expect(s['pass@4']).toBeCloseTo(0.75, 12);
  });
});
