/**
 * Reading the collector's input: rows are streamed line by line (memory follows the concurrency,
 * not the file size), checked, and turned into one job per rollout still to do.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { parseJsonObject, withJsonFields } from '../data/jsonl.js';
import { readLines } from '../data/lines.js';
import { BadRowError } from '../errors.js';

export async function hashFile(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Tasks of `lines` that fall in shard `index` of `count`. */
export function shardSize(lines: number, shard: { index: number; count: number } | null | undefined): number {
  if (!shard) return lines;
  return lines > shard.index ? Math.floor((lines - shard.index - 1) / shard.count) + 1 : 0;
}

/** Lines of the file (a last line without a newline counts), at most `limit`. */
export async function countLines(path: string, limit: number | null): Promise<number> {
  let n = 0;
  let last = 10;
  for await (const chunk of createReadStream(path)) {
    const buf = chunk as Buffer;
    for (let i = 0; i < buf.length; i++) if (buf[i] === 10) n++;
    if (buf.length) last = buf[buf.length - 1]!;
    if (limit && n >= limit) return limit;
  }
  if (last !== 10) n++;
  return limit ? Math.min(n, limit) : n;
}

/** One rollout to run: the row (as the JSON text to POST) and where it goes. */
export interface RolloutJob {
  kind: 'run';
  taskIndex: number;
  rolloutIndex: number;
  /** 1-based line of the input file. */
  line: number;
  agent: string;
  /** The request body for /run: the row with the rollout's identity fields ({@link runBody}). */
  body: string;
}

/** A rollout that cannot run because its row is unusable; it is recorded as failed. */
export interface BadRowJob {
  kind: 'bad';
  taskIndex: number;
  rolloutIndex: number;
  line: number;
  reason: string;
}

export interface ReadJobsOptions {
  inputPath: string;
  limit: number | null;
  numRepeats: number;
  agentName?: string;
  overrides?: Record<string, unknown>;
  /** Whether (task, rollout) is already in the output (resume). */
  isDone: (taskIndex: number, rolloutIndex: number) => boolean;
  /** Called with the number of rollouts skipped because they are done. */
  onSkip: (n: number) => void;
  /** Reading stops when this turns true. */
  stopped: () => boolean;
  /** Only tasks whose index is `index` modulo `count` (static sharding). */
  shard?: { index: number; count: number } | null;
  /** Attempts of (task, rollout) recorded before this run (its `_ng_attempt_index`); default 0. */
  attemptIndex?: (taskIndex: number, rolloutIndex: number) => number;
}

/**
 * The /run body of one rollout: the row with the identity upstream's collector gives every rollout,
 * `_ng_task_index`, `_ng_rollout_index` and `_ng_attempt_index` (earlier attempts of this rollout),
 * set by the collector whatever the row held. An agent that needs a rollout id derives it from them
 * (`rolloutIdFromRunBody`: `<task>-<repeat>`, `-a<n>` for a re-dispatch) unless the row gives an
 * explicit `_ng_rollout_id`, which is left as it is; other agents ignore the fields. The row's own
 * bytes are kept: the fields are spliced in before its closing brace where the text allows.
 */
export function runBody(rowText: string, row: Record<string, unknown>, taskIndex: number, rolloutIndex: number, attemptIndex: number): string {
  return withJsonFields(rowText.trim(), row, { _ng_task_index: taskIndex, _ng_rollout_index: rolloutIndex, _ng_attempt_index: attemptIndex });
}

/**
 * A row as an object with a `responses_create_params` object, or an Error saying what is wrong.
 * Returns the row with the overrides applied and the text to POST.
 */
export function parseRow(line: string, overrides: Record<string, unknown> | undefined): { row: Record<string, unknown>; body: string } | Error {
  try {
    if (!line.trim()) throw new BadRowError('the line is empty');
    const parsed = parseJsonObject(line);
    if (parsed.row === null) throw new BadRowError(`the line is not a JSON object: ${parsed.problem}`);
    let row = parsed.row;
    if (!row.responses_create_params || typeof row.responses_create_params !== 'object') {
      throw new BadRowError('the row has no `responses_create_params` object');
    }
    if (overrides && Object.keys(overrides).length > 0) {
      row = { ...row, responses_create_params: { ...(row.responses_create_params as object), ...structuredClone(overrides) } };
      return { row, body: JSON.stringify(row) };
    }
    // Unchanged rows are sent as read: the line is already the JSON text of the row.
    return { row, body: line };
  } catch (err) {
    return err as Error;
  }
}

/** Jobs for every rollout of the input not done yet, in input order, read as they are consumed. */
export async function* readJobs(opts: ReadJobsOptions): AsyncGenerator<RolloutJob | BadRowJob> {
  const lines = readLines(opts.inputPath);
  try {
    let taskIndex = -1;
    for await (const { text } of lines) {
      taskIndex++;
      if (opts.limit !== null && taskIndex >= opts.limit) break;
      if (opts.stopped()) break;
      if (opts.shard && taskIndex % opts.shard.count !== opts.shard.index) continue;
      const line = taskIndex + 1;
      const pending: number[] = [];
      for (let r = 0; r < opts.numRepeats; r++) if (!opts.isDone(taskIndex, r)) pending.push(r);
      if (pending.length < opts.numRepeats) opts.onSkip(opts.numRepeats - pending.length);
      if (pending.length === 0) continue;
      const parsed = parseRow(text, opts.overrides);
      if (parsed instanceof Error) {
        const reason = `line ${line} of ${opts.inputPath}: ${parsed.message}`;
        for (const r of pending) yield { kind: 'bad', taskIndex, rolloutIndex: r, line, reason };
        continue;
      }
      const ref = parsed.row.agent_ref as { name?: unknown } | undefined;
      const agent = typeof ref?.name === 'string' ? ref.name : opts.agentName;
      if (!agent) {
        const reason = `line ${line}: no agent for this row: give +agent_name=<agent instance> or an agent_ref in the row`;
        for (const r of pending) yield { kind: 'bad', taskIndex, rolloutIndex: r, line, reason };
        continue;
      }
      for (const r of pending) {
        if (opts.stopped()) return;
        yield { kind: 'run', taskIndex, rolloutIndex: r, line, agent, body: runBody(parsed.body, parsed.row, taskIndex, r, opts.attemptIndex?.(taskIndex, r) ?? 0) };
      }
    }
  } finally {
    await lines.return(undefined);
  }
}

const AGENT_REF_RE = /"agent_ref"\s*:\s*\{[^{}]*?"name"\s*:\s*"((?:[^"\\]|\\.)*)"/;

/**
 * The agent names the rows name in their `agent_ref` (read without parsing each row: a quick
 * look for the key, for the checks before a run; a row it misses still runs and fails as usual).
 */
export async function agentRefNames(path: string, limit: number | null): Promise<Set<string>> {
  const names = new Set<string>();
  let n = 0;
  for await (const { text: line } of readLines(path)) {
    if (limit !== null && n++ >= limit) break;
    if (!line.includes('"agent_ref"')) continue;
    const m = AGENT_REF_RE.exec(line);
    if (m) {
      try {
        names.add(JSON.parse(`"${m[1]!}"`) as string);
      } catch {
        // an odd escape: the row fails on its own when it runs
      }
    }
  }
  return names;
}
