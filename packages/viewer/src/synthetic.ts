/**
 * Synthetic collector-style rows for measuring the viewer on large files (its 200,000-row browser
 * test and `pnpm bench` section R): one compact rollout per line, tasks repeated, rewards 0 / 0.5
 * / 1 in a fixed pattern, a tool error on every 13th row, usage, timing and a `category` field.
 */
import { open } from 'node:fs/promises';

/** Tasks the synthetic rows cycle through (row i is task i % SYNTHETIC_TASKS). */
export const SYNTHETIC_TASKS = 25_000;

/** The reward of synthetic row `i`. */
export function syntheticReward(i: number): number {
  const t = i % SYNTHETIC_TASKS;
  const r = Math.floor(i / SYNTHETIC_TASKS);
  return (t * 7 + r * 3) % 5 === 0 ? 1 : (t + r) % 3 === 0 ? 0.5 : 0;
}

/** Line `i` of a synthetic rollouts file (about 590 bytes). */
export function syntheticRow(i: number): string {
  const t = i % SYNTHETIC_TASKS;
  const r = Math.floor(i / SYNTHETIC_TASKS);
  const out = i % 13 === 0 ? '{\\"error\\": \\"unknown city\\"}' : '{\\"temp\\": 3}';
  return (
    `{"responses_create_params":{"input":[{"role":"user","content":"Weather in city ${t}?"}]},` +
    `"response":{"id":"resp_${i}","created_at":${1_757_000_000 + i},"completed_at":${1_757_000_000 + i + 1 + (i % 40) / 4},` +
    `"output":[{"type":"function_call","name":"get_weather","call_id":"c${i}","arguments":"{}"},{"type":"function_call_output","call_id":"c${i}","output":"${out}"},` +
    `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Cold in city ${t}."}]}],` +
    `"usage":{"input_tokens":${50 + (t % 200)},"output_tokens":${10 + (i % 300)}}},` +
    `"reward":${syntheticReward(i)},"category":"${['math', 'code', 'chat', 'tools'][t % 4]}","_ng_task_index":${t},"_ng_rollout_index":${r},"_ng_agent":"${t % 2 ? 'agent_b' : 'agent_a'}"}`
  );
}

/** Writes `rows` synthetic lines to `path` in chunks (never the whole file in one string). */
export async function writeSyntheticFile(path: string, rows: number): Promise<void> {
  const fh = await open(path, 'w');
  try {
    for (let start = 0; start < rows; start += 10_000) {
      const lines: string[] = [];
      for (let i = start; i < Math.min(rows, start + 10_000); i++) lines.push(syntheticRow(i));
      await fh.write(`${lines.join('\n')}\n`);
    }
  } finally {
    await fh.close();
  }
}
