/**
 * Resuming a collection: which input produced the output (fingerprint in `<stem>_state.json`),
 * which (task, rollout) pairs are already written, and the attempt history of the rollouts
 * that failed in earlier runs (they run again as new attempts).
 */
import { appendFileSync, closeSync, createWriteStream, existsSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, truncateSync } from 'node:fs';
import { basename } from 'node:path';
import { readJsonl } from '../data/jsonl.js';
import { readLines } from '../data/lines.js';
import { CollectFileError, NgError } from '../errors.js';
import { writeFileAtomic } from '../files/atomic.js';
import { fileProblem } from './files.js';
import { hashFile } from './input.js';
import type { MetricsAccumulator } from './metrics.js';
import { sidecarPath, type AttemptRecord, type FailureRecord } from './sink.js';

export interface Fingerprint {
  input: string;
  input_sha256: string;
  input_bytes: number;
  limit: number | null;
  num_repeats: number;
  agent_name: string | null;
  overrides: Record<string, unknown>;
}

export async function fingerprintOf(inputPath: string, limit: number | null, numRepeats: number, agentName: string | null, overrides: Record<string, unknown>): Promise<Fingerprint> {
  return {
    input: inputPath,
    input_sha256: await hashFile(inputPath),
    input_bytes: statSync(inputPath).size,
    limit,
    num_repeats: numRepeats,
    agent_name: agentName,
    overrides,
  };
}

/** Drops a partial last line left by an interrupted write, so appends start on a clean line. */
export function repairTail(path: string): void {
  const size = statSync(path).size;
  if (size === 0) return;
  const fd = openSync(path, 'r');
  try {
    const window = Math.min(size, 1 << 20);
    let pos = size;
    const buf = Buffer.alloc(window);
    while (pos > 0) {
      const start = Math.max(0, pos - window);
      const len = pos - start;
      readSync(fd, buf, 0, len, start);
      const idx = buf.subarray(0, len).lastIndexOf(10);
      if (idx >= 0) {
        const cut = start + idx + 1;
        if (cut !== size) truncateSync(path, cut);
        return;
      }
      pos = start;
    }
    truncateSync(path, 0);
  } finally {
    closeSync(fd);
  }
}

export const rolloutKey = (taskIndex: number, rolloutIndex: number) => `${taskIndex}:${rolloutIndex}`;

export interface ResumeState {
  /** Keys (rolloutKey) of the rollouts already in the output. */
  done: Set<string>;
  /** Attempt history of rollouts that failed in earlier runs, by key. */
  history: Map<string, AttemptRecord[]>;
  /** The earlier failure records themselves (kept for rollouts this run does not attempt). */
  previous: Map<string, FailureRecord>;
}

export interface ResumePaths {
  outputPath: string;
  failuresPath: string;
  metricsPath: string;
  statePath: string;
}

/**
 * Prepares the output for this run: starts over (`restart`), or checks that the earlier output
 * came from the same input and settings and loads what it holds (its rows also feed `metrics`).
 * Writes the fingerprint and empties the failures file (earlier failures are retried now; their
 * history is carried into this run's records).
 */
export async function prepareResume(
  paths: ResumePaths,
  fingerprint: Fingerprint,
  restart: boolean,
  metrics: MetricsAccumulator,
  log: (msg: string) => void,
  /** Called with every row of the earlier output (group.ts learns which groups were scored). */
  onRow?: (row: Record<string, unknown>) => void,
): Promise<ResumeState> {
  const state: ResumeState = { done: new Set(), history: new Map(), previous: new Map() };
  const previous = existsSync(paths.statePath) && !restart ? readFingerprint(paths.statePath) : null;
  const sameRun = previous !== null && sameFingerprint(previous, fingerprint);
  if (restart) {
    for (const p of [paths.outputPath, paths.failuresPath, paths.metricsPath, paths.statePath]) rmSync(p, { force: true });
  } else if (existsSync(paths.outputPath) && statSync(paths.outputPath).size > 0) {
    if (!sameRun) throw resumeMismatch(paths, previous, fingerprint);
    repairTail(paths.outputPath);
    const corrupt: { line: number; text: string; why: string }[] = [];
    for await (const line of readJsonl(paths.outputPath)) {
      if (line.row === null) {
        corrupt.push({ line: line.lineNo, text: line.text, why: line.parseError ?? line.problem });
        continue;
      }
      const row = line.row;
      const t = row._ng_task_index;
      const r = row._ng_rollout_index;
      if (typeof t === 'number' && typeof r === 'number') {
        state.done.add(rolloutKey(t, r));
        metrics.add(row, t, typeof row._ng_agent === 'string' ? row._ng_agent : undefined, r);
        onRow?.(row);
      }
    }
    if (corrupt.length > 0) await setAsideCorruptLines(paths.outputPath, corrupt, log);
    log(`Resuming: ${state.done.size} rollout(s) already in ${paths.outputPath} are skipped.`);
  }
  if (sameRun && existsSync(paths.failuresPath)) await loadHistory(paths.failuresPath, state);
  // Atomically: a torn state file would make the next run refuse to resume.
  writeFileAtomic(paths.statePath, `${JSON.stringify(fingerprint, null, 2)}\n`);
  rmSync(paths.failuresPath, { force: true });
  return state;
}

function readFingerprint(path: string): Fingerprint | null {
  try {
    const fp = JSON.parse(readFileSync(path, 'utf8')) as Fingerprint;
    return fp && typeof fp === 'object' && typeof fp.input_sha256 === 'string' ? fp : null;
  } catch {
    // A damaged state file says nothing about the output: the output is then refused as of an unknown run.
    return null;
  }
}

/**
 * Lines of the output that are not JSON objects (a torn write in the middle, a stray edit) are
 * moved, as they were, to `<stem>_corrupt.jsonl`, and the output is rewritten without them (through
 * a temporary file and a rename, so a crash leaves one of the two whole). Their rollouts are not
 * counted as done, so this run does them again; every good row stays.
 */
async function setAsideCorruptLines(outputPath: string, corrupt: { line: number; text: string; why: string }[], log: (msg: string) => void): Promise<void> {
  const asidePath = sidecarPath(outputPath, 'corrupt.jsonl');
  const tmpPath = `${outputPath}.rewrite-${process.pid}`;
  const skip = new Set(corrupt.map((c) => c.line));
  try {
    appendFileSync(asidePath, corrupt.map((c) => `${c.text}\n`).join(''));
    const out = createWriteStream(tmpPath);
    const failed = new Promise<never>((_, reject) => out.once('error', reject));
    for await (const { lineNo, text } of readLines(outputPath)) {
      if (skip.has(lineNo)) continue;
      if (!out.write(`${text}\n`)) await Promise.race([new Promise<void>((r) => out.once('drain', () => r())), failed]);
    }
    await Promise.race([new Promise<void>((r) => out.end(() => r())), failed]);
    renameSync(tmpPath, outputPath);
  } catch (err) {
    rmSync(tmpPath, { force: true });
    throw new CollectFileError(`${fileProblem('set aside the corrupted lines of', outputPath, err)}; the output is unchanged.`);
  }
  for (const c of corrupt.slice(0, 5)) {
    log(`Line ${c.line} of ${outputPath} is not a JSON object (${c.why}); it was moved to ${asidePath} and the rollout it held runs again.`);
  }
  if (corrupt.length > 5) log(`… and ${corrupt.length - 5} more corrupted line(s), also moved to ${asidePath}.`);
}

function sameFingerprint(previous: Fingerprint, current: Fingerprint): boolean {
  return (
    previous.input_sha256 === current.input_sha256 &&
    previous.limit === current.limit &&
    previous.num_repeats === current.num_repeats &&
    previous.agent_name === current.agent_name &&
    JSON.stringify(previous.overrides) === JSON.stringify(current.overrides)
  );
}

function resumeMismatch(paths: ResumePaths, previous: Fingerprint | null, current: Fingerprint): NgError {
  const why = !previous
    ? `it has no ${basename(paths.statePath)} recording which input produced it`
    : previous.input_sha256 !== current.input_sha256
      ? `the input file changed since it was written`
      : 'the limit, num_repeats, agent_name or responses_create_params overrides differ from the earlier run';
  return new NgError(
    'NG_ERR_RESUME_MISMATCH',
    `The output file ${paths.outputPath} already holds rollouts, but ${why}. ` +
      `Resuming would mix rollouts of different runs. Rerun with +restart=true to delete it and start over, or choose another +output_jsonl_fpath.`,
  );
}

/** Earlier failure records (a torn last line or a foreign line is ignored). */
async function loadHistory(failuresPath: string, state: ResumeState): Promise<void> {
  for await (const { row: rec } of readJsonl(failuresPath)) {
    if (rec === null) continue;
    if (typeof rec._ng_task_index !== 'number' || typeof rec._ng_rollout_index !== 'number' || !Array.isArray(rec.history)) continue;
    const key = rolloutKey(rec._ng_task_index, rec._ng_rollout_index);
    if (!state.done.has(key)) {
      state.history.set(key, rec.history as AttemptRecord[]);
      state.previous.set(key, rec as unknown as FailureRecord);
    }
  }
}
