/**
 * Rollouts -> trainer data. The input is streamed line by line and every record is written as it
 * is made (JSONL with back-pressure, Parquet one bounded row group at a time); only DPO keeps
 * state across rows, and then just the best and worst rollout of each task.
 *
 * DPO pairs: per task (`_ng_task_index`), the rollout with the highest reward is "chosen" and the
 * one with the lowest "rejected" (on equal rewards, the lower `_ng_rollout_index` wins the
 * place). A task with a single rollout, or whose rollouts all have the same reward, gives no
 * pair; both are counted in the summary.
 *
 * The input is checked before the output is touched (it exists, it is a file, it is not the
 * output: by real path, so `./a.jsonl` or a link to the input is refused too), and the output is
 * written atomically: an error, Ctrl-C or `kill -9` leaves it as it was.
 */
import { checkInputFile, checkOutputFile, commandLock } from '@nemo-gym/core/files';
import { isMasked, rewardComponentsOf } from '@nemo-gym/core/rollouts';
import { rolloutToChat, splitAtFirstAssistant, type ChatConversation } from './chat.js';
import { JsonlSink } from './jsonl.js';
import { ParquetSink, type ParquetColumns } from './parquet.js';
import { indexOf, readRows, rewardOf, Tally, type Json } from './rows.js';
import { NoTokensError, tokenSequence } from './tokens.js';
import { NoTokenIdsExportError } from './errors.js';
import {
  dpoColumns,
  dpoForParquet,
  dpoRecord,
  rlColumns,
  rlRecord,
  sftColumns,
  sftForParquet,
  sftRecord,
  type ExportFormat,
  type PreferencePair,
  type RewardComponents,
  type Trainer,
} from './trainers.js';

/** Why a masked sample is left out (shown with its count by ng-export). */
export const MASKED_REASON = 'masked samples (mask_sample: true; kept in the rollouts, never trained on)';

/** A row's reward components as a plain record, or null. */
function componentsOf(row: Json): RewardComponents {
  const c = rewardComponentsOf(row);
  return c ? Object.fromEntries(c) : null;
}

/** The names of the reward components of the rows a Parquet file will hold (its columns), sorted. */
async function componentNames(input: string): Promise<string[]> {
  const names = new Set<string>();
  for await (const { row } of readRows(input)) {
    if (!row || isMasked(row)) continue;
    for (const n of rewardComponentsOf(row)?.keys() ?? []) names.add(n);
  }
  return [...names].sort();
}

export type FileFormat = 'jsonl' | 'parquet';

export interface ExportOptions {
  input: string;
  output: string;
  format: ExportFormat;
  trainer?: Trainer;
  /** Keep only rollouts whose reward is at least this (sft, rl; for dpo, the chosen rollout). */
  minReward?: number;
  /** Default: from the output's extension (.parquet -> parquet, anything else -> jsonl). */
  fileFormat?: FileFormat;
  /** Parquet row-group limits (tests use small ones). */
  parquetRowGroup?: { maxRows?: number; maxBytes?: number };
  /** Take the output's lock as this command (e.g. `ng-export`): a second writer of the output is refused. */
  lock?: string;
}

export interface ExportSummary {
  format: ExportFormat;
  trainer: Trainer | null;
  fileFormat: FileFormat;
  input: string;
  output: string;
  rowsRead: number;
  written: number;
  /** Rows left out on purpose (reward below the threshold, no token ids, no pair), by reason. */
  skipped: Record<string, { count: number; lines: number[] }>;
  /** Rows that could not be read or converted, by reason. */
  unusable: Record<string, { count: number; lines: number[] }>;
  /** DPO only: tasks seen and pairs made. */
  tasks?: number;
  elapsedS: number;
}

export function fileFormatOf(output: string, given?: FileFormat): FileFormat {
  if (given) return given;
  return output.toLowerCase().endsWith('.parquet') ? 'parquet' : 'jsonl';
}

interface Sink {
  write(record: Json): Promise<void>;
  close(): Promise<void>;
  abort(): void;
  rows: number;
}

async function openSink(opts: ExportOptions, fileFormat: FileFormat): Promise<Sink> {
  if (fileFormat === 'jsonl') return new JsonlSink(opts.output);
  let columns: ParquetColumns;
  let shape: (r: Json) => Json = (r) => r;
  // A Parquet file's columns are fixed up front: the component names are read first.
  const components = opts.format === 'dpo' ? [] : await componentNames(opts.input);
  if (opts.format === 'sft') {
    columns = sftColumns(opts.trainer, components);
    shape = sftForParquet;
  } else if (opts.format === 'dpo') {
    columns = dpoColumns(opts.trainer);
    shape = dpoForParquet;
  } else {
    columns = rlColumns(opts.trainer, components);
    // NeMo-RL's batch gives a sample without one of the run's components 0.0 for it
    // (build_reward_component_columns, nemo_rl/environments/nemo_gym.py), never a null.
    if (opts.trainer === 'nemo_rl' && components.length) {
      const keys = components.map((n) => `reward/${n}`);
      shape = (r) => {
        for (const k of keys) r[k] ??= 0;
        return r;
      };
    }
  }
  const sink = new ParquetSink(opts.output, columns, opts.parquetRowGroup);
  return {
    write: (r) => sink.write(shape(r)),
    close: () => sink.close(),
    abort: () => sink.abort(),
    get rows() {
      return sink.rows;
    },
  };
}

interface Candidate {
  reward: number;
  rolloutIndex: number | null;
  chat: ChatConversation;
  count: number;
}

function better(a: { reward: number; rolloutIndex: number | null }, b: { reward: number; rolloutIndex: number | null }, sign: 1 | -1): boolean {
  if (a.reward !== b.reward) return sign * (a.reward - b.reward) > 0;
  return (a.rolloutIndex ?? Infinity) < (b.rolloutIndex ?? Infinity);
}

const NO_TOKEN_IDS = 'without token ids (collected from a model server that does not return them)';

export async function exportRollouts(opts: ExportOptions): Promise<ExportSummary> {
  checkInputFile({ path: opts.input, flag: '+input' });
  checkOutputFile({ path: opts.output, flag: '+output' }, [{ path: opts.input, flag: '+input' }]);
  const lock = commandLock(opts.output, opts.lock);
  try {
    return await exportChecked(opts);
  } finally {
    lock?.release();
  }
}

async function exportChecked(opts: ExportOptions): Promise<ExportSummary> {
  const started = Date.now();
  const fileFormat = fileFormatOf(opts.output, opts.fileFormat);
  const skipped = new Tally();
  const unusable = new Tally();
  const sink = await openSink(opts, fileFormat);
  let rowsRead = 0;
  const best = new Map<number, Candidate>();
  const worst = new Map<number, Candidate>();
  const seenPerTask = new Map<number, number>();
  try {
    for await (const { lineNo, row, problem } of readRows(opts.input)) {
      rowsRead++;
      if (!row) {
        unusable.add(problem!, lineNo);
        continue;
      }
      // Every format leaves a masked sample out (the agent or verifier could not vouch for it).
      if (isMasked(row)) {
        skipped.add(MASKED_REASON, lineNo);
        continue;
      }
      const reward = rewardOf(row);
      const ids = { _ng_task_index: indexOf(row, '_ng_task_index'), _ng_rollout_index: indexOf(row, '_ng_rollout_index') };
      if (opts.format === 'rl') {
        if (opts.minReward !== undefined && (reward === undefined || reward < opts.minReward)) {
          skipped.add(`below +min_reward=${opts.minReward}`, lineNo);
          continue;
        }
        let seq;
        try {
          seq = tokenSequence(row);
        } catch (err) {
          if (err instanceof NoTokensError) skipped.add(NO_TOKEN_IDS, lineNo);
          else unusable.add(`with inconsistent token ids: ${(err as Error).message.replace(/ \([^()]*\)$/, '')}`, lineNo);
          continue;
        }
        await sink.write(rlRecord(seq, reward, ids, opts.trainer, componentsOf(row)));
        continue;
      }
      const chat = rolloutToChat(row);
      if (chat instanceof Error) {
        unusable.add(chat.message, lineNo);
        continue;
      }
      if (opts.format === 'sft') {
        if (opts.minReward !== undefined && (reward === undefined || reward < opts.minReward)) {
          skipped.add(`below +min_reward=${opts.minReward}`, lineNo);
          continue;
        }
        await sink.write(sftRecord(chat, reward, ids, opts.trainer, componentsOf(row)));
        continue;
      }
      // dpo
      if (reward === undefined) {
        unusable.add('without a numeric reward', lineNo);
        continue;
      }
      if (ids._ng_task_index === null) {
        unusable.add('without _ng_task_index (not written by ng-collect-rollouts)', lineNo);
        continue;
      }
      const task = ids._ng_task_index;
      seenPerTask.set(task, (seenPerTask.get(task) ?? 0) + 1);
      const cand: Candidate = { reward, rolloutIndex: ids._ng_rollout_index, chat, count: 1 };
      const b = best.get(task);
      if (!b || better(cand, b, 1)) best.set(task, cand);
      const w = worst.get(task);
      if (!w || better(cand, w, -1)) worst.set(task, cand);
    }
    if (opts.format === 'dpo') {
      for (const task of [...best.keys()].sort((a, b) => a - b)) {
        const c = best.get(task)!;
        const r = worst.get(task)!;
        if (seenPerTask.get(task)! < 2) {
          skipped.add('tasks with a single rollout (no pair)', task);
          continue;
        }
        if (c.reward === r.reward) {
          skipped.add('tasks whose rollouts all have the same reward (no pair)', task);
          continue;
        }
        if (opts.minReward !== undefined && c.reward < opts.minReward) {
          skipped.add(`tasks whose best reward is below +min_reward=${opts.minReward}`, task);
          continue;
        }
        const cs = splitAtFirstAssistant(c.chat.messages);
        const rs = splitAtFirstAssistant(r.chat.messages);
        const pair: PreferencePair = {
          taskIndex: task,
          prompt: cs.prompt,
          tools: c.chat.tools,
          chosen: cs.completion,
          rejected: rs.completion,
          chosenReward: c.reward,
          rejectedReward: r.reward,
          chosenRolloutIndex: c.rolloutIndex,
          rejectedRolloutIndex: r.rolloutIndex,
        };
        await sink.write(dpoRecord(pair, opts.trainer));
      }
    }
    const noIds = skipped.counts.get(NO_TOKEN_IDS) ?? 0;
    if (opts.format === 'rl' && sink.rows === 0 && noIds > 0) {
      throw new NoTokenIdsExportError(
        `none of the ${rowsRead} rollout(s) in ${opts.input} carries token ids (${noIds} were collected from a model server that does not return them), so ${opts.output} was not written. ` +
          'Collect with a model server that records them (responses_api_models/vllm_model/configs/vllm_model_for_training.yaml), or export +format=sft.',
      );
    }
  } catch (err) {
    sink.abort();
    throw err;
  }
  await sink.close();
  return {
    format: opts.format,
    trainer: opts.trainer ?? null,
    fileFormat,
    input: opts.input,
    output: opts.output,
    rowsRead,
    written: sink.rows,
    skipped: skipped.toJSON(),
    unusable: unusable.toJSON(),
    ...(opts.format === 'dpo' ? { tasks: best.size } : {}),
    elapsedS: (Date.now() - started) / 1000,
  };
}
