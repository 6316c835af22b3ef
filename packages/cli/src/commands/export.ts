/**
 * ng-export: rollouts -> trainer data (SFT chat, DPO pairs, RL token sequences), as JSONL or
 * Parquet, optionally in the keys one trainer reads (+trainer=nemo_rl|verl|openrlhf).
 */
import { exportRollouts, FORMATS, TRAINERS, Tally, type ExportFormat, type Trainer } from '@nemo-gym/bridge';
import { UsageError } from '@nemo-gym/core/errors';
import type { CommandSpec } from '../runtime.js';

function oneOf<T extends string>(value: unknown, allowed: readonly T[], flag: string): T | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw new UsageError(`+${flag}=${String(value)} is not one of ${allowed.join(', ')}.`);
  }
  return value as T;
}

export function numberFlag(value: unknown, flag: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new UsageError(`+${flag} must be a number, got ${JSON.stringify(value)}.`);
  return value;
}

/** The per-reason lines of a summary's skipped / unusable counts. */
export function reasonLines(counts: Record<string, { count: number; lines: number[] }>): string[] {
  const t = new Tally();
  for (const [k, v] of Object.entries(counts)) {
    t.counts.set(k, v.count);
    t.examples.set(k, v.lines);
  }
  return t.lines();
}

export const exportCommand: CommandSpec = {
  name: 'export',
  summary: 'Turn a rollouts file into SFT, DPO or RL training data (JSONL or Parquet)',
  description:
    'Example: pnpm ng-export +input=results/quickstart/simple_weather_rollouts.jsonl +output=results/sft.jsonl +format=sft +min_reward=1\n' +
    'The output is Parquet when its name ends in .parquet. docs/06-training-data.md describes every record and trainer mapping.\n' +
    'The output is written atomically (a temporary file beside it, renamed into place at the end): an interrupted export leaves it as it was. ' +
    'An output that is the input is refused; so is a second export to an output another process is writing (<output>.lock names it).',
  flags: [
    { name: 'input', type: 'str', description: 'rollouts JSONL (as ng-collect-rollouts writes it)', required: true },
    { name: 'output', type: 'str', description: 'file to write (.parquet for Parquet, otherwise JSONL); replaced atomically, never the input', required: true },
    { name: 'format', type: FORMATS.join(' | '), description: 'sft: chat messages; dpo: chosen/rejected pairs per task; rl: token ids, loss mask, log-probs', required: true },
    { name: 'trainer', type: TRAINERS.join(' | '), description: "rename and reshape records to the keys that trainer's data loader reads" },
    { name: 'min_reward', type: 'float', description: 'keep only rollouts with reward >= this (dpo: the chosen rollout)' },
    { name: 'file_format', type: 'jsonl | parquet', description: 'override the choice made from the output name' },
  ],
  main: async (config) => {
    const format = oneOf<ExportFormat>(config.format, FORMATS, 'format')!;
    const trainer = oneOf<Trainer>(config.trainer, TRAINERS, 'trainer');
    if (trainer === 'verl' && format === 'dpo') {
      throw new UsageError('VeRL reads no offline preference pairs (it trains with rewards online); use +format=rl or +format=sft for VeRL, or +trainer=nemo_rl / openrlhf for DPO.');
    }
    const fileFormat = oneOf<'jsonl' | 'parquet'>(config.file_format, ['jsonl', 'parquet'], 'file_format');
    const s = await exportRollouts({
      input: String(config.input),
      output: String(config.output),
      format,
      trainer,
      minReward: numberFlag(config.min_reward, 'min_reward'),
      fileFormat,
      lock: 'ng-export',
    });
    const unusable = Object.values(s.unusable).reduce((n, v) => n + v.count, 0);
    const lines = [
      `Read ${s.rowsRead} row(s) from ${s.input}${s.tasks !== undefined ? ` (${s.tasks} task(s))` : ''}.`,
      `Wrote ${s.written} ${format}${trainer ? ` (${trainer})` : ''} record(s) to ${s.output} as ${s.fileFormat} in ${s.elapsedS.toFixed(1)} s.`,
    ];
    if (Object.keys(s.skipped).length) lines.push('Left out:', ...reasonLines(s.skipped));
    if (unusable) lines.push('Could not use:', ...reasonLines(s.unusable));
    process.stdout.write(`${lines.join('\n')}\n`);
    return unusable ? 1 : 0;
  },
};
