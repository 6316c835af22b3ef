/**
 * Masked samples and named reward components through every ng-export format and trainer layout,
 * against golden files (test/fixtures/rewards/<format>-<layout>.jsonl; `UPDATE_GOLDEN=1` rewrites
 * them). A masked sample is never exported and is counted; components land in each trainer's keys.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportRollouts, type ExportFormat, type Trainer } from '@nemo-gym/bridge';
import { MASKED_REASON } from '../src/export.js';
import { tokenRollout } from './fixtures.js';

const GOLDEN = fileURLToPath(new URL('./fixtures/rewards/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ng-rewards-export-'));

/**
 * Three tasks, two rollouts each. Task 1's second rollout is a masked sample (its capture was
 * incomplete) that scored 1: exported, it would be the DPO "chosen" one and an RL sample.
 */
function rows(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let task = 0; task < 3; task++) {
    for (let rollout = 0; rollout < 2; rollout++) {
      const reward = (task + rollout) % 2;
      const row = tokenRollout({ task, rollout, reward });
      row.reward_components = { schema_valid: reward === 1 ? 0.5 : 0.25, content: reward === 1 ? 0.5 : -0.25 };
      if (task === 1 && rollout === 1) Object.assign(row, { reward: 1, mask_sample: true, failure_reason: 'capture_incomplete' });
      out.push(row);
    }
  }
  return out;
}

const input = join(dir, 'rollouts.jsonl');
let db: DuckDBInstance;
beforeAll(async () => {
  writeFileSync(input, rows().map((r) => JSON.stringify(r)).join('\n') + '\n');
  db = await DuckDBInstance.create(':memory:');
});
afterAll(() => db?.closeSync?.());

async function readParquet(path: string): Promise<Record<string, any>[]> {
  const conn = await db.connect();
  try {
    return (await conn.runAndReadAll(`select * from read_parquet('${path}')`)).getRowObjectsJson() as Record<string, any>[];
  } finally {
    conn.closeSync();
  }
}

const CASES: [ExportFormat, Trainer | undefined][] = [];
for (const format of ['sft', 'dpo', 'rl'] as const) {
  for (const trainer of [undefined, 'nemo_rl', 'verl', 'openrlhf'] as const) if (!(format === 'dpo' && trainer === 'verl')) CASES.push([format, trainer]);
}

describe.each(CASES)('ng-export +format=%s +trainer=%s', (format, trainer) => {
  it('leaves the masked sample out, says so, and matches its golden file', async () => {
    const name = `${format}-${trainer ?? 'default'}`;
    const output = join(dir, `${name}.jsonl`);
    const s = await exportRollouts({ input, output, format, trainer });
    expect(s.rowsRead).toBe(6);
    // Line 4 is the masked sample.
    expect(s.skipped[MASKED_REASON]).toEqual({ count: 1, lines: [4] });
    expect(s.written).toBe(format === 'dpo' ? 2 : 5);
    const text = readFileSync(output, 'utf8');
    const records = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    if (format === 'dpo') expect(records.map((r) => r._ng_task_index)).toEqual([0, 2]);
    else expect(records.map((r) => `${String(r._ng_task_index)}/${String(r._ng_rollout_index)}`)).toEqual(['0/0', '0/1', '1/0', '2/0', '2/1']);
    const golden = join(GOLDEN, `${name}.jsonl`);
    if (process.env.UPDATE_GOLDEN === '1') {
      mkdirSync(GOLDEN, { recursive: true });
      writeFileSync(golden, text);
    }
    expect(text).toBe(readFileSync(golden, 'utf8'));
  });
});

describe('reward components in each trainer key', () => {
  it('JSONL: NeMo-RL reward/<name>, VeRL extra_fields.reward_extra_info, others reward_components; DPO pairs leave the masked sample out', async () => {
    const read = async (format: ExportFormat, trainer?: Trainer) => {
      const output = join(dir, `keys-${format}-${trainer ?? 'default'}.jsonl`);
      await exportRollouts({ input, output, format, trainer });
      return readFileSync(output, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    };
    const nemo = await read('rl', 'nemo_rl');
    expect(nemo[0]).toMatchObject({ reward: 0, 'reward/schema_valid': 0.25, 'reward/content': -0.25 });
    expect((await read('rl', 'verl'))[1]).toMatchObject({ reward_score: 1, extra_fields: { reward_extra_info: { schema_valid: 0.5, content: 0.5 } } });
    expect((await read('rl', 'openrlhf'))[1]).toMatchObject({ rewards: 1, reward_components: { schema_valid: 0.5, content: 0.5 } });
    expect((await read('sft'))[1]).toMatchObject({ reward: 1, reward_components: { schema_valid: 0.5, content: 0.5 } });
    // Task 1: only its unmasked rollout is left, so it gives no pair.
    expect((await read('dpo')).map((p) => p._ng_task_index)).toEqual([0, 2]);
  });

  it('Parquet, NeMo-RL: a row without one of the run\'s components has 0.0 for it, as NeMo-RL\'s batch builder fills it', async () => {
    const uneven = join(dir, 'uneven.jsonl');
    const a = tokenRollout({ task: 0, rollout: 0, reward: 1 });
    a.reward_components = { format: 0.25, correctness: 0.75 };
    const b = tokenRollout({ task: 0, rollout: 1, reward: 0.5 });
    b.reward_components = { correctness: 0.5 };
    writeFileSync(uneven, `${JSON.stringify(a)}\n${JSON.stringify(b)}\n`);
    const out = join(dir, 'uneven-nemo.parquet');
    await exportRollouts({ input: uneven, output: out, format: 'rl', trainer: 'nemo_rl' });
    expect((await readParquet(out)).map((r) => [r['reward/correctness'], r['reward/format']])).toEqual([
      [0.75, 0.25],
      [0.5, 0],
    ]);
  });

  it('Parquet: the same keys as columns (read back by DuckDB), masked sample left out', async () => {
    const nemo = join(dir, 'rl-nemo.parquet');
    await exportRollouts({ input, output: nemo, format: 'rl', trainer: 'nemo_rl' });
    const n = await readParquet(nemo);
    expect(n.map((r) => [r._ng_task_index, r._ng_rollout_index, r['reward/content'], r['reward/schema_valid']])).toEqual([
      [0, 0, -0.25, 0.25],
      [0, 1, 0.5, 0.5],
      [1, 0, 0.5, 0.5],
      [2, 0, -0.25, 0.25],
      [2, 1, 0.5, 0.5],
    ]);
    const verl = join(dir, 'rl-verl.parquet');
    await exportRollouts({ input, output: verl, format: 'rl', trainer: 'verl' });
    expect((await readParquet(verl))[1]!.extra_fields).toEqual({ reward_extra_info: { content: 0.5, schema_valid: 0.5 } });
    const sft = join(dir, 'sft.parquet');
    await exportRollouts({ input, output: sft, format: 'sft' });
    expect((await readParquet(sft)).map((r) => r.reward_components)).toEqual([
      { content: -0.25, schema_valid: 0.25 },
      { content: 0.5, schema_valid: 0.5 },
      { content: 0.5, schema_valid: 0.5 },
      { content: -0.25, schema_valid: 0.25 },
      { content: 0.5, schema_valid: 0.5 },
    ]);
  });
});
