/**
 * The collector with masked samples and named reward components: a masked row stays in the output
 * but is counted apart (never in a mean or pass@k), in `_metrics.json` and in the terminal summary;
 * each reward component gets its mean and pass@k.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { collectRollouts } from '@nemo-gym/core/rollouts';
import { globalConfigFor, startStubServer, type StubServer } from '@nemo-gym/core/testing';
import { metricsTable } from '../packages/cli/src/commands/collect-rollouts.js';
import { exportCommand } from '../packages/cli/src/commands/export.js';
import { runInProcess } from './helpers/cli.js';

type Json = Record<string, any>;
const calls = new Map<string, number>();

/** The agent's answer: by the row's `plan`, one entry per call for its task. */
function answer(row: Json): Json {
  const key = `${row.set}/${row.task}`;
  const i = calls.get(key) ?? 0;
  calls.set(key, i + 1);
  const step = (row.plan as Json[])[i]!;
  return { responses_create_params: row.responses_create_params, response: { id: 'r', output: [] }, task: row.task, ...step };
}

let agent: StubServer;
let globalConfig: Record<string, unknown>;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ng-masked-'));
  agent = await startStubServer({ '/run': (req) => ({ json: answer(req.body as Json) }) });
  globalConfig = globalConfigFor({ agent: { kind: 'responses_api_agents', impl: 'stub', port: agent.port } });
});
afterAll(async () => {
  await agent?.close();
});

async function collect(set: string, plans: Json[][], numRepeats: number) {
  const input = join(dir, `${set}.jsonl`);
  writeFileSync(input, plans.map((plan, task) => JSON.stringify({ responses_create_params: { input: 'hi' }, set, task, plan })).join('\n') + '\n');
  const output = join(dir, `${set}_out.jsonl`);
  const client = new ServerClient({ globalConfig, retry: { maxAttempts: 1 } });
  try {
    const summary = await collectRollouts({ client, inputPath: input, outputPath: output, agentName: 'agent', numRepeats, concurrency: 1 });
    return { summary, rows: readFileSync(output, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json), metrics: JSON.parse(readFileSync(join(dir, `${set}_out_metrics.json`), 'utf8')) as Json };
  } finally {
    await client.close();
  }
}

describe('masked samples', () => {
  it('stay in the output, are counted apart by reason, and are left out of the means and the task stats', async () => {
    const { summary, rows, metrics } = await collect(
      'masked',
      [
        [{ reward: 1 }, { reward: 1, mask_sample: true, failure_reason: 'max_iteration' }],
        [{ reward: 0 }, { reward: 1, mask_sample: true, failure_reason: 'capture_incomplete' }],
        [{ reward: 0 }, { reward: 1, mask_sample: true, failure_reason: 'max_iteration' }],
      ],
      2,
    );
    expect(rows).toHaveLength(6);
    expect(rows.filter((r) => r.mask_sample === true).map((r) => r.failure_reason).sort()).toEqual(['capture_incomplete', 'max_iteration', 'max_iteration']);
    expect(summary.written).toBe(6);
    expect(summary.failed).toBe(0);
    expect(metrics.rows).toBe(3);
    expect(metrics.masked).toEqual({ count: 3, by_reason: { max_iteration: 2, capture_incomplete: 1 } });
    // With the masked rows the mean would be 4/6; without them it is 1/3.
    expect(metrics.mean.reward).toBeCloseTo(1 / 3);
    expect(metrics.mean.mask_sample).toBeUndefined();
    const table = metricsTable(summary.metrics, summary);
    expect(table).toContain('6 in the output (6 new, 0 from earlier runs), 0 failed');
    expect(table).toMatch(/masked\s+3 \(in the output, flagged mask_sample; not in the means\): max_iteration 2, capture_incomplete 1/);
    expect(table).toMatch(/reward\s+mean 0\.333/);

    // ng-export leaves them out and says how many.
    const exported = await runInProcess(exportCommand, [`+input=${join(dir, 'masked_out.jsonl')}`, `+output=${join(dir, 'masked_sft.jsonl')}`, '+format=sft']);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain('Left out:');
    expect(exported.stdout).toMatch(/ {2}3 masked samples \(mask_sample: true; kept in the rollouts, never trained on\) \(first lines: \d, \d, \d\)/);
  });
});

describe('pass@k with masked samples', () => {
  it('tasks left with different numbers of scored rollouts still get pass@k, each by its own n, and the summary says how many were left out', async () => {
    const masked = { reward: 1, mask_sample: true, failure_reason: 'max_steps' };
    const { summary, metrics } = await collect(
      'uneven',
      [
        [{ reward: 1 }, { reward: 0 }, { reward: 0 }],
        [{ reward: 1 }, masked, { reward: 1 }],
        [{ reward: 0 }, { reward: 0 }, masked],
      ],
      3,
    );
    expect(metrics.rows).toBe(7);
    // pass@1: (1/3 + 1 + 0) / 3; pass@2 over all three: (1 - C(2,2)/C(3,2) = 2/3, 1, 0) / 3; pass@3: task 0 only.
    expect(metrics['pass@1']).toBeCloseTo(4 / 9, 12);
    expect(metrics['pass@2']).toBeCloseTo(5 / 9, 12);
    expect(metrics['pass@3']).toBe(1);
    expect(metrics['pass@k_tasks_left_out']).toBe(2);
    expect(metrics['mean@3']).toBeCloseTo(4 / 9, 12);
    expect(metricsTable(summary.metrics, summary)).toMatch(/reward\s+mean 0\.429 {2}mean@3 0\.444 {2}pass@1 0\.444 {2}pass@2 0\.556 {2}pass@3 1 \(pass@3 leaves out 2 tasks with fewer scored rollouts\)/);
  });
});

describe("upstream's failed row", () => {
  it('a 200 row marked _ng_failure_class: judge_failed (upstream HEAD) is recorded as a judge failure with its request, not written with reward 0', async () => {
    const { summary, rows, metrics } = await collect(
      'upstream',
      [[{ reward: 1 }], [{ reward: 0.0, _ng_failure_class: 'judge_failed', _ng_failure_judge_error: 'TimeoutError: judge' }]],
      1,
    );
    expect(rows.map((r) => [r._ng_task_index, r.reward])).toEqual([[0, 1]]);
    expect(summary.failuresByReason).toEqual({ 'judge failed': 1 });
    expect(metrics.mean.reward).toBe(1);
    const [rec] = readFileSync(join(dir, 'upstream_out_failures.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
    expect(rec).toMatchObject({ _ng_task_index: 1, reason_class: 'judge_failed' });
    expect(rec!.reason).toContain('TimeoutError: judge');
    expect(Object.keys(rec!.verify_request).sort()).toEqual(['response', 'responses_create_params', 'task']);
  });
});

describe('reward components', () => {
  it('get a mean and pass@k each, beside the reward', async () => {
    const step = (schema: number, content: number) => ({ reward: schema + content, reward_components: { schema, content } });
    const { metrics, summary } = await collect(
      'components',
      [
        [step(0.5, 0.5), step(0.5, 0)],
        [step(0, 0), step(0.5, 0.5)],
        [step(0.5, 0), step(0.5, 0)],
      ],
      2,
    );
    expect(metrics.rows).toBe(6);
    expect(metrics.mean.reward).toBeCloseTo(3.5 / 6);
    expect(metrics.reward_components.schema.rows).toBe(6);
    expect(metrics.reward_components.schema.mean).toBeCloseTo(2.5 / 6);
    expect(metrics.reward_components.schema['mean@2']).toBeCloseTo(2.5 / 6);
    // Not binary: pass@k is the best of the first k per task, averaged over tasks.
    expect(metrics.reward_components.schema['pass@2']).toBeCloseTo(0.5);
    const content = metrics.reward_components.content as Record<string, number>;
    expect([content.rows, content.mean, content['pass@1'], content['pass@2']].map((x) => Number(x!.toFixed(6)))).toEqual([6, 0.166667, 0.166667, 0.333333]);
    expect(metricsTable(summary.metrics, summary)).toMatch(/components\s+content 0\.167 pass@1 0\.167 pass@2 0\.333 {2}schema 0\.417 pass@1 0\.333 pass@2 0\.5/);
  });
});
