import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatMessageSchema } from '@nemo-gym/core/openai';
import { exportRollouts, type ExportOptions } from '@nemo-gym/bridge';
import { EXPECTED_SEQUENCE, quickstartRows, tokenRollout } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'ng-export-'));
const jsonl = (rows: unknown[], name: string) => {
  const p = join(dir, name);
  writeFileSync(p, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return p;
};
const readOut = (p: string) => readFileSync(p, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));

let db: DuckDBInstance;
beforeAll(async () => {
  db = await DuckDBInstance.create(':memory:');
});
afterAll(() => db?.closeSync?.());

/** Rows of a Parquet file as DuckDB (an independent C++ reader) sees them. */
async function readParquet(path: string): Promise<Record<string, any>[]> {
  const conn = await db.connect();
  try {
    const res = await conn.runAndReadAll(`select * from read_parquet('${path.replace(/'/g, "''")}')`);
    return res.getRowObjectsJson() as Record<string, any>[];
  } finally {
    conn.closeSync();
  }
}

async function both(opts: Omit<ExportOptions, 'output'>, name: string) {
  const j = await exportRollouts({ ...opts, output: join(dir, `${name}.jsonl`) });
  const p = await exportRollouts({ ...opts, output: join(dir, `${name}.parquet`), parquetRowGroup: { maxRows: 2 } });
  return { j, p, rows: readOut(join(dir, `${name}.jsonl`)), parquet: await readParquet(join(dir, `${name}.parquet`)) };
}

/** A JSONL record as the Parquet columns hold it (tools as JSON text, absent struct fields null). */
function asParquetMessage(m: Record<string, any>) {
  return {
    role: m.role,
    content: m.content ?? null,
    tool_calls: m.tool_calls ? m.tool_calls.map((c: any) => ({ id: c.id, type: c.type, function: { name: c.function.name, arguments: c.function.arguments } })) : null,
    tool_call_id: m.tool_call_id ?? null,
  };
}

describe('sft', () => {
  const rows = quickstartRows();
  rows[2]!.reward = 0;
  const input = jsonl(rows, 'quickstart.jsonl');

  it('writes every rollout as valid OpenAI chat messages with tool calls and results, in order', async () => {
    const s = await exportRollouts({ input, output: join(dir, 'sft.jsonl'), format: 'sft' });
    expect(s).toMatchObject({ rowsRead: 5, written: 5, skipped: {}, unusable: {} });
    const out = readOut(join(dir, 'sft.jsonl'));
    for (const r of out) for (const m of r.messages) expect(ChatMessageSchema.safeParse(m).success, JSON.stringify(m)).toBe(true);
    const first = out[0];
    expect(first.messages.map((m: any) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(first.messages[2].tool_calls[0]).toMatchObject({ id: 'call_sw00', function: { name: 'get_weather', arguments: '{"city":"Boston"}' } });
    expect(first.messages[3]).toMatchObject({ role: 'tool', tool_call_id: 'call_sw00' });
    expect(first.messages[4].content).toBe("It's cold in Boston today, so yes, bring a coat.");
    expect(first.tools[0]).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(out.map((r) => [r._ng_task_index, r.reward])).toEqual([[0, 1], [1, 1], [2, 0], [3, 1], [4, 1]]);
  });

  it('+min_reward keeps only rollouts at or above it and counts the rest', async () => {
    const s = await exportRollouts({ input, output: join(dir, 'sft-min.jsonl'), format: 'sft', minReward: 1 });
    expect(s.written).toBe(4);
    expect(s.skipped).toEqual({ 'below +min_reward=1': { count: 1, lines: [3] } });
    expect(readOut(join(dir, 'sft-min.jsonl')).map((r) => r._ng_task_index)).toEqual([0, 1, 3, 4]);
  });

  it('Parquet holds the same records (read back by DuckDB), for each trainer layout', async () => {
    for (const trainer of [undefined, 'nemo_rl', 'verl', 'openrlhf'] as const) {
      const { rows: out, parquet } = await both({ input, format: 'sft', trainer }, `sft-${trainer ?? 'ours'}`);
      const key = trainer === 'openrlhf' ? 'input' : 'messages';
      expect(parquet).toHaveLength(out.length);
      parquet.forEach((p, i) => {
        expect(p[key]).toEqual(out[i][key].map(asParquetMessage));
        expect(JSON.parse(p.tools)).toEqual(out[i].tools);
        expect(p.reward).toBe(out[i].reward);
        expect(p._ng_task_index).toBe(i);
      });
    }
  });
});

describe('rl', () => {
  const rows = [
    tokenRollout({ task: 0, rollout: 0, reward: 1 }),
    quickstartRows()[0], // an API-model rollout: no token ids
    tokenRollout({ task: 1, rollout: 0, reward: 0, contiguous: false }),
    tokenRollout({ task: 2, rollout: 1, reward: 0.5 }),
  ];
  const input = jsonl(rows, 'tokens.jsonl');

  it('concatenates every turn into one sequence whose loss mask is 1 exactly on generated tokens', async () => {
    const s = await exportRollouts({ input, output: join(dir, 'rl.jsonl'), format: 'rl' });
    expect(s.written).toBe(2);
    expect(s.skipped).toEqual({ 'without token ids (collected from a model server that does not return them)': { count: 1, lines: [2] } });
    expect(Object.values(s.unusable)).toEqual([{ count: 1, lines: [3] }]);
    expect(Object.keys(s.unusable)[0]).toMatch(/does not extend the tokens before it/);
    const [r0, r2] = readOut(join(dir, 'rl.jsonl'));
    expect(r0).toEqual({ ...EXPECTED_SEQUENCE, reward: 1, _ng_task_index: 0, _ng_rollout_index: 0 });
    expect(r2).toMatchObject({ reward: 0.5, _ng_task_index: 2, _ng_rollout_index: 1 });
    // The last call's prompt + generation is the whole sequence; masked positions are its generations.
    const items = (rows[0] as any).response.output.filter((i: any) => i.generation_token_ids);
    const last = items.at(-1);
    expect(r0.input_ids).toEqual([...last.prompt_token_ids, ...last.generation_token_ids]);
    const generated = r0.input_ids.filter((_: number, k: number) => r0.loss_mask[k] === 1);
    expect(generated).toEqual(items.flatMap((i: any) => i.generation_token_ids));
    expect(r0.logprobs.filter((_: number, k: number) => r0.loss_mask[k] === 1)).toEqual(items.flatMap((i: any) => i.generation_log_probs));
    expect(r0.loss_mask).toHaveLength(r0.input_ids.length);
  });

  it('refuses an input with no token ids at all, writing no file, instead of an empty one', async () => {
    const noIds = jsonl(quickstartRows().slice(0, 3), 'no-ids.jsonl');
    for (const name of ['rl-none.parquet', 'rl-none.jsonl']) {
      const output = join(dir, name);
      await expect(exportRollouts({ input: noIds, output, format: 'rl' })).rejects.toThrow(
        expect.objectContaining({
          code: 'NG_ERR_EXPORT_NO_TOKEN_IDS',
          message: expect.stringContaining(`none of the 3 rollout(s) in ${noIds} carries token ids (3 were collected from a model server that does not return them), so ${output} was not written.`),
        }),
      );
      expect(existsSync(output)).toBe(false);
    }
  });

  it('renames and reshapes for each trainer, and Parquet round-trips through DuckDB', async () => {
    const ours = await both({ input, format: 'rl' }, 'rl-ours');
    expect(ours.parquet).toEqual(ours.rows);

    const nemo = await both({ input, format: 'rl', trainer: 'nemo_rl' }, 'rl-nemo');
    expect(nemo.rows[0].message_log).toEqual([
      { role: 'user', token_ids: [1, 2, 3, 4] },
      { role: 'assistant', token_ids: [10, 11, 12], generation_logprobs: [-0.1, -0.2, -0.3] },
      { role: 'user', token_ids: [20, 21] },
      { role: 'assistant', token_ids: [30, 31], generation_logprobs: [-0.4, -0.5] },
    ]);
    expect(nemo.parquet[0].message_log.map((m: any) => ({ ...m, generation_logprobs: m.generation_logprobs ?? undefined }))).toEqual(
      nemo.rows[0].message_log.map((m: any) => ({ ...m, generation_logprobs: m.generation_logprobs ?? undefined })),
    );

    const verl = await both({ input, format: 'rl', trainer: 'verl' }, 'rl-verl');
    expect(verl.rows[0]).toEqual({
      prompt_ids: [1, 2, 3, 4],
      response_ids: [10, 11, 12, 20, 21, 30, 31],
      response_mask: [1, 1, 1, 0, 0, 1, 1],
      response_logprobs: [-0.1, -0.2, -0.3, 0, 0, -0.4, -0.5],
      reward_score: 1,
      num_turns: 2,
      _ng_task_index: 0,
      _ng_rollout_index: 0,
    });
    expect(verl.parquet).toEqual(verl.rows);

    const orl = await both({ input, format: 'rl', trainer: 'openrlhf' }, 'rl-openrlhf');
    expect(orl.rows[0]).toEqual({
      sequences: EXPECTED_SEQUENCE.input_ids,
      action_mask: EXPECTED_SEQUENCE.loss_mask,
      rollout_log_probs: EXPECTED_SEQUENCE.logprobs,
      rewards: 1,
      _ng_task_index: 0,
      _ng_rollout_index: 0,
    });
    expect(orl.parquet).toEqual(orl.rows);
  });
});

describe('dpo', () => {
  const rows = [
    tokenRollout({ task: 0, rollout: 0, reward: 0.5 }),
    tokenRollout({ task: 0, rollout: 1, reward: 1 }),
    tokenRollout({ task: 0, rollout: 2, reward: 0 }),
    tokenRollout({ task: 0, rollout: 3, reward: 1 }), // ties with rollout 1: the lower index is chosen
    tokenRollout({ task: 1, rollout: 0, reward: 1 }), // single rollout: no pair
    tokenRollout({ task: 2, rollout: 0, reward: 0 }),
    tokenRollout({ task: 2, rollout: 1, reward: 0 }), // all equal: no pair
    tokenRollout({ task: 3, rollout: 1, reward: 0.2 }),
    tokenRollout({ task: 3, rollout: 0, reward: 0.4 }),
  ];
  const input = jsonl(rows, 'dpo-in.jsonl');

  it('pairs the best and worst rollout of each task and counts tasks without a pair', async () => {
    const s = await exportRollouts({ input, output: join(dir, 'dpo.jsonl'), format: 'dpo' });
    expect(s.tasks).toBe(4);
    expect(s.written).toBe(2);
    expect(s.skipped).toEqual({
      'tasks with a single rollout (no pair)': { count: 1, lines: [1] },
      'tasks whose rollouts all have the same reward (no pair)': { count: 1, lines: [2] },
    });
    const [t0, t3] = readOut(join(dir, 'dpo.jsonl'));
    expect(t0).toMatchObject({ _ng_task_index: 0, chosen_reward: 1, rejected_reward: 0, chosen_rollout_index: 1, rejected_rollout_index: 2 });
    expect(t0.prompt).toEqual([{ role: 'user', content: 'Weather in Oslo?' }]);
    expect(t0.chosen.map((m: any) => m.role)).toEqual(['assistant', 'tool', 'assistant']);
    expect(t0.chosen.at(-1).content).toBe('Oslo is cold (1).');
    expect(t0.rejected.at(-1).content).toBe('Oslo is cold (2).');
    expect(t3).toMatchObject({ _ng_task_index: 3, chosen_rollout_index: 0, rejected_rollout_index: 1 });
  });

  it('+min_reward drops tasks whose best rollout is below it (and rl rows below it)', async () => {
    const s = await exportRollouts({ input, output: join(dir, 'dpo-min.jsonl'), format: 'dpo', minReward: 0.5 });
    expect(s.written).toBe(1);
    expect(s.skipped['tasks whose best reward is below +min_reward=0.5']).toEqual({ count: 1, lines: [3] });
    const rl = await exportRollouts({ input, output: join(dir, 'rl-min.jsonl'), format: 'rl', minReward: 0.5 });
    expect(rl.written).toBe(4);
    expect(rl.skipped['below +min_reward=0.5']!.count).toBe(5);
  });

  it('NeMo-RL gets ranked completions; Parquet matches', async () => {
    const { rows: out, parquet } = await both({ input, format: 'dpo', trainer: 'nemo_rl' }, 'dpo-nemo');
    expect(out[0].context).toEqual([{ role: 'user', content: 'Weather in Oslo?' }]);
    expect(out[0].completions.map((c: any) => [c.rank, c.completion.at(-1).content])).toEqual([
      [0, 'Oslo is cold (1).'],
      [1, 'Oslo is cold (2).'],
    ]);
    expect(parquet.map((p) => p.completions.map((c: any) => c.completion.map((m: any) => m.content)))).toEqual(
      out.map((o) => o.completions.map((c: any) => c.completion.map((m: any) => m.content ?? null))),
    );
    expect(parquet.map((p) => p.chosen_reward)).toEqual([1, 0.4]);
  });
});

describe('unreadable input', () => {
  it('reports lines that are not JSON objects by number', async () => {
    const p = join(dir, 'bad.jsonl');
    writeFileSync(p, `${JSON.stringify(quickstartRows()[0])}\nnot json\n[1]\n`);
    const s = await exportRollouts({ input: p, output: join(dir, 'bad-out.jsonl'), format: 'sft' });
    expect(s.written).toBe(1);
    expect(Object.values(s.unusable).map((v) => v.lines)).toEqual([[2], [3]]);
  });
});
