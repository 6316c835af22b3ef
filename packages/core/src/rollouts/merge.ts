/**
 * Merging the outputs of a sharded collection (`+shard=i/N`, one output file per shard): every
 * (task, repeat) once in the merged output (the first file that has it wins; later copies are
 * counted and dropped), the failures of the shards for the (task, repeat) pairs no shard wrote,
 * and the metrics recomputed over the merged rows.
 *
 * Every input is checked (a file, readable, not the output) before anything is written. The output,
 * its `_failures.jsonl` and `_metrics.json` are written atomically (core/files): an error or a kill
 * leaves no merged output, so the same command can simply be run again. A line of a shard that is
 * not a JSON object (a torn write) is reported with its file and line and its rollout recorded as
 * failed (identified by the tags left in the text, when they survived the tear).
 */
import { existsSync, rmSync } from 'node:fs';
import { readJsonl } from '../data/jsonl.js';
import { UsageError } from '../errors.js';
import { AtomicFile, checkInputFile, checkOutputFile, commandLock, writeFileAtomic, type FileRef } from '../files/index.js';
import { MetricsAccumulator } from './metrics.js';
import { rolloutKey } from './resume.js';
import { RolloutSink, sidecarPath, type FailureRecord } from './sink.js';

/** A line of a shard output that is not a JSON object. */
export interface TornLine {
  path: string;
  line: number;
  /** Why it could not be read. */
  reason: string;
  /** The (task, repeat) the line held, when its tags survived the tear. */
  taskIndex: number | null;
  rolloutIndex: number | null;
}

export interface MergeSummary {
  written: number;
  duplicates: number;
  /** Lines that were JSON objects without _ng_task_index / _ng_rollout_index (not collector rows), dropped. */
  untagged: number;
  /** Lines that were not JSON objects (torn writes); each is also a failure record. */
  torn: TornLine[];
  failed: number;
  outputPath: string;
  failuresPath: string;
  metricsPath: string;
  metrics: Record<string, unknown>;
}

export interface MergeOptions {
  /** Take the output's lock as this command (e.g. `ng-merge-rollouts`): a second writer of the output is refused. */
  lock?: string;
}

/** The collector's tags in the text of a line that could not be parsed (they are written last, so a cut loses them first). */
function tagsInText(text: string): { t: number; r: number } | null {
  const t = /"_ng_task_index"\s*:\s*(\d+)\s*[,}]/.exec(text);
  const r = /"_ng_rollout_index"\s*:\s*(\d+)\s*[,}]/.exec(text);
  return t && r ? { t: Number(t[1]), r: Number(r[1]) } : null;
}

/** Checks the shard outputs and the merged output's paths; throws before anything is written. */
function checkMergeFiles(inputPaths: readonly string[], outputPath: string): void {
  if (inputPaths.length === 0) throw new UsageError('ng-merge-rollouts needs the shard outputs: +input_jsonl_fpaths=[out_0.jsonl,out_1.jsonl,...].');
  const inputs: FileRef[] = inputPaths.map((path, i) => ({ path, flag: `+input_jsonl_fpaths[${i}]` }));
  const missing = inputPaths.filter((p) => !existsSync(p));
  if (missing.length) throw new UsageError(`Shard output(s) not found: ${missing.join(', ')}. Check +input_jsonl_fpaths (one output file per shard).`);
  for (const input of inputs) checkInputFile(input);
  // A shard's failures file is read too: the merged files must not be any of those either.
  const read = [...inputs, ...inputs.map((f) => ({ path: sidecarPath(f.path, 'failures.jsonl'), flag: `the failures file of ${f.flag}` }))];
  checkOutputFile({ path: outputPath, flag: '+output_jsonl_fpath' }, read, [
    { path: sidecarPath(outputPath, 'failures.jsonl'), what: 'failures file' },
    { path: sidecarPath(outputPath, 'metrics.json'), what: 'metrics file' },
  ]);
  if (existsSync(outputPath)) {
    throw new UsageError(`The merged output ${outputPath} already exists; choose a new +output_jsonl_fpath (merging never overwrites).`);
  }
}

export async function mergeRollouts(inputPaths: readonly string[], outputPath: string, options: MergeOptions = {}): Promise<MergeSummary> {
  checkMergeFiles(inputPaths, outputPath);
  const lock = commandLock(outputPath, options.lock);
  try {
    // Checked again under the lock: another merge may have finished meanwhile.
    if (existsSync(outputPath)) checkMergeFiles(inputPaths, outputPath);
    return await mergeChecked(inputPaths, outputPath);
  } finally {
    lock?.release();
  }
}

async function mergeChecked(inputPaths: readonly string[], outputPath: string): Promise<MergeSummary> {
  const failuresPath = sidecarPath(outputPath, 'failures.jsonl');
  const metricsPath = sidecarPath(outputPath, 'metrics.json');
  const out = new AtomicFile(outputPath);
  let failuresOut: AtomicFile;
  try {
    failuresOut = new AtomicFile(failuresPath);
  } catch (err) {
    out.discard();
    throw err;
  }
  const sink = new RolloutSink(out.tmpPath, failuresOut.tmpPath);
  const metrics = new MetricsAccumulator(true);
  const seen = new Set<string>();
  const torn: TornLine[] = [];
  let duplicates = 0;
  let untagged = 0;
  try {
    for (const path of inputPaths) {
      for await (const line of readJsonl(path)) {
        const { lineNo, text, row } = line;
        if (!row) {
          const tags = tagsInText(text);
          torn.push({ path, line: lineNo, reason: line.problem, taskIndex: tags?.t ?? null, rolloutIndex: tags?.r ?? null });
          continue;
        }
        const t = row._ng_task_index;
        const r = row._ng_rollout_index;
        if (typeof t !== 'number' || typeof r !== 'number') {
          untagged++;
          continue;
        }
        const key = rolloutKey(t, r);
        if (seen.has(key)) {
          duplicates++;
          continue;
        }
        seen.add(key);
        await sink.result(`${text}\n`);
        metrics.add(row, t, typeof row._ng_agent === 'string' ? row._ng_agent : undefined, r);
      }
    }
    // Failures: a pair no shard wrote, once (the last attempt recorded wins over earlier ones).
    const failures = new Map<string, FailureRecord>();
    const unidentified: Record<string, unknown>[] = [];
    for (const tl of torn) {
      const reason = `line ${tl.line} of ${tl.path} is torn (${tl.reason}); the rollout it held is lost and must be run again`;
      const rec = { line: tl.line, agent: null, attempts: 1, reason, status: null, reason_class: 'torn_line', history: [], file: tl.path, file_line: tl.line };
      if (tl.taskIndex === null || tl.rolloutIndex === null) unidentified.push({ _ng_task_index: null, _ng_rollout_index: null, ...rec });
      else if (!seen.has(rolloutKey(tl.taskIndex, tl.rolloutIndex))) {
        failures.set(rolloutKey(tl.taskIndex, tl.rolloutIndex), { _ng_task_index: tl.taskIndex, _ng_rollout_index: tl.rolloutIndex, ...rec } as FailureRecord);
      }
    }
    for (const path of inputPaths) {
      const fp = sidecarPath(path, 'failures.jsonl');
      if (!existsSync(fp)) continue;
      for await (const { row: rec } of readJsonl(fp)) {
        const t = rec?._ng_task_index;
        const r = rec?._ng_rollout_index;
        if (!rec || typeof t !== 'number' || typeof r !== 'number') continue;
        const key = rolloutKey(t, r);
        if (!seen.has(key)) failures.set(key, rec as unknown as FailureRecord);
      }
    }
    for (const rec of failures.values()) await sink.failure(rec);
    for (const rec of unidentified) await sink.failure(rec as unknown as FailureRecord);
    await sink.close();
    if (sink.error) throw sink.error;
    // The sidecars first, the output last: a merged output in place means what is beside it is this merge's.
    if (sink.failed) failuresOut.commit();
    else {
      failuresOut.discard();
      rmSync(failuresPath, { force: true });
    }
    const summary = metrics.summary();
    summary.failed = sink.failed;
    writeFileAtomic(metricsPath, `${JSON.stringify(summary, null, 2)}\n`);
    out.commit();
    return { written: sink.written, duplicates, untagged, torn, failed: sink.failed, outputPath, failuresPath, metricsPath, metrics: summary };
  } catch (err) {
    await sink.close();
    out.discard();
    failuresOut.discard();
    throw err;
  }
}

/** Parses `i/N` (0 ≤ i < N). */
export function parseShard(value: unknown): { index: number; count: number } | null {
  if (value === undefined || value === null) return null;
  const m = /^(\d+)\/(\d+)$/.exec(String(value).trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index >= count) {
    throw new UsageError(`+shard must be i/N with 0 ≤ i < N (e.g. +shard=3/16 for the 4th of 16 shards), got ${JSON.stringify(value)}. With a Slurm array: +shard=\${SLURM_ARRAY_TASK_ID}/\${SLURM_ARRAY_TASK_COUNT}.`);
  }
  return { index, count };
}
