/** The server-side aggregates behind the charts, and the chart, breakdown and token endpoints' refusals. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { breakdown, chartData, passRates } from '../src/charts.js';
import { RolloutIndex } from '../src/rollout-index.js';
import { startViewer, type ViewerHandle } from '../src/index.js';
import { latencyOf, summarizeLine } from '../src/rollout-index.js';
import { isToolError } from '../src/tool-errors.js';
import { groupTasks } from '../src/tasks.js';
import { MASKED_PLAN, maskedFacts, PLAN_A, rollout, writeChartFile, writeMaskedFile } from './fixtures.js';

describe('what the charts read of a row', () => {
  it('tells a tool error from a tool answer', () => {
    expect(isToolError('{"error": "unknown city"}')).toBe(true);
    expect(isToolError('{"detail": [{"type": "missing", "loc": ["body", "city"]}]}')).toBe(true);
    expect(isToolError('Traceback (most recent call last):\n  File "x"')).toBe(true);
    expect(isToolError('{"error": null, "result": 3}')).toBe(false);
    expect(isToolError('{"detail": "sunny", "city": "x"}')).toBe(false);
    expect(isToolError('{"temp": 3}')).toBe(false);
    expect(isToolError('The error was in the question.')).toBe(false);
  });

  it('reads a rollout\'s seconds from response timestamps, else from a timing field', () => {
    expect(latencyOf({ response: { created_at: 100, completed_at: 102.5 } })).toBe(2.5);
    expect(latencyOf({ response: { created_at: 100 }, latency_ms: 1500 })).toBe(1.5);
    expect(latencyOf({ response: { created_at: 100, completed_at: 90 }, elapsed_s: 4 })).toBe(4);
    expect(latencyOf({ response: {} })).toBeNull();
  });
});

describe('chart endpoints', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ng-viewer-charts-api-'));
  let viewer: ViewerHandle;
  const get = async (path: string) => {
    const res = await fetch(new URL(path, viewer.url));
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    writeChartFile(join(dir, 'a.jsonl'), PLAN_A);
    writeFileSync(join(dir, 'b.jsonl'), `${JSON.stringify(rollout(0, { reward: 1 }))}\n`);
    viewer = await startViewer({ jsonlPath: join(dir, 'a.jsonl'), compareJsonlPaths: [join(dir, 'b.jsonl')], port: 0 });
  });
  afterAll(async () => {
    await viewer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts tasks by pass rate, the ones between never and always being the signal', () => {
    const p = passRates(groupTasks(viewer.index.rows));
    expect(p).toMatchObject({ tasks: 6, never: 2, signal: 3, always: 1 });
    expect(p.bins.map((b) => b.count)).toEqual([2, 1, 1, 1, 0, 1]);
  });

  it('refuses an unknown run or field, naming the ones there are', async () => {
    expect(await get('/api/charts?file=z')).toMatchObject({ status: 400, body: { detail: 'query parameter file="z" names no run; the runs are a, b' } });
    const bad = await get('/api/breakdown?by=nope');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toBe('query parameter by="nope" is not a field of a.jsonl; group by one of agent, accuracy, category');
  });

  it('gives a row\'s tokens, or says why a rollout has none', async () => {
    expect((await get('/api/rows/0/tokens')).body).toMatchObject({ input_ids: [1, 2, 3, 4, 10, 11, 12, 20, 21, 30, 31], prompt_length: 4, turns: 2 });
    expect((await get('/api/rows/0/tokens?file=b')).body).toEqual({ index: 0, error: 'no output item carries generation_token_ids' });
    expect((await get('/api/rows/9/tokens?file=b')).status).toBe(404);
  });

  it('charts the rows a filter selects, refusing a bad filter; an agent a run lacks selects none of its rows', async () => {
    const all = await get('/api/charts');
    const passed = await get('/api/charts?min_reward=1');
    const rewards = Object.values(PLAN_A).flatMap((p) => p.rewards);
    expect(all.body).toMatchObject({ rows: rewards.length, totalRows: rewards.length, masked: { count: 0, byReason: [] } });
    expect(passed.body).toMatchObject({ rows: rewards.filter((r) => r === 1).length, totalRows: rewards.length });
    expect((passed.body.reward as { bins: { label: string }[] }).bins.map((b) => b.label)).toEqual(['1']);
    expect((await get('/api/charts?file=b&agent=simple_agent')).body).toMatchObject({ rows: 0, totalRows: 1 });
    expect(await get('/api/charts?masked=maybe')).toMatchObject({ status: 400, body: { detail: 'query parameter masked="maybe" is not one of only, exclude' } });
    const byAgent = await get('/api/breakdown?by=agent&min_reward=1');
    expect((byAgent.body.groups as { rows: number }[]).reduce((a, g) => a + g.rows, 0)).toBe(rewards.filter((r) => r === 1).length);
  });

  it('refuses more runs than it shows side by side', async () => {
    const many = Array.from({ length: 8 }, () => join(dir, 'b.jsonl'));
    await expect(startViewer({ jsonlPath: join(dir, 'a.jsonl'), compareJsonlPaths: many, port: 0 })).rejects.toThrow(/9 rollouts files given; the viewer shows at most 8 runs/);
  });
});

describe('training signal of a task', () => {
  it('is a spread of rewards within the task, partial rewards included', () => {
    const rows = [
      [0.5, 0.5],
      [0, 0.5],
      [1, 1],
      [0, 0],
    ].flatMap((rewards, t) => rewards.map((reward, r) => ({ t, r, reward })));
    const summaries = rows.map(({ t, r, reward }, index) => summarizeLine(JSON.stringify(rollout(t, { reward, extra: { _ng_task_index: t, _ng_rollout_index: r } })), index, null));
    expect(passRates(groupTasks(summaries))).toMatchObject({ tasks: 4, signal: 1, never: 2, always: 1 });
  });
});


describe('masked samples and reward components in the aggregates', () => {
  it('leaves masked rows out of every reward figure, counts them per reason, and breaks down by a component', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ng-viewer-masked-api-'));
    try {
      const path = join(dir, 'm.jsonl');
      writeMaskedFile(path);
      const index = await RolloutIndex.build(path);
      const facts = Object.values(MASKED_PLAN).flatMap((p) => p.rollouts.map(maskedFacts));
      const kept = facts.filter((f) => f.reason === null);
      const tasks = groupTasks(index.rows);
      expect(tasks.map((g) => g.k)).toEqual(Object.values(MASKED_PLAN).map((p) => p.rollouts.filter((c) => !c.startsWith('M:')).length));
      const c = chartData(index.rows, tasks, path);
      expect(c.masked).toEqual({ count: 3, byReason: [{ reason: 'capture_incomplete', count: 2 }, { reason: 'max_iteration', count: 1 }] });
      expect(c.reward.count).toBe(kept.length);
      expect(c.reward.mean).toBeCloseTo(kept.reduce((a, f) => a + f.reward, 0) / kept.length, 9);
      expect(c.components.map((x) => [x.name, x.values.count])).toEqual([
        ['correctness', kept.length],
        ['format', kept.length],
      ]);
      // The collector's own metrics over the same rows agree: masked counted apart, components' means, where-present means.
      expect(c.metrics.masked).toEqual({ count: 3, by_reason: { capture_incomplete: 2, max_iteration: 1 } });
      expect((c.metrics.reward_components as Record<string, { mean: number }>).format.mean).toBeCloseTo(kept.reduce((a, f) => a + f.format, 0) / kept.length, 9);
      expect(c.metrics.mean_where_present).toEqual({ used_tool: { mean: 1, rows: 3 } });
      expect(c.groupable).toContain('reward_components.correctness');
      const b = breakdown(index.rows, 'reward_components.correctness');
      expect(b.groups.map((g) => [g.value, g.rows, g.masked, g.rewarded])).toEqual([
        ['0', 8, 0, 8],
        ['0.8', 8, 3, 5],
      ]);
      await index.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
