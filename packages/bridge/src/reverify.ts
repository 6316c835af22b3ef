/**
 * Re-scoring recorded rollouts: every row goes back through a resources server's /verify (the
 * same request the agent sends after a rollout: the row's task fields, `responses_create_params`
 * and `response`), and the answer becomes the new row. Nothing is sent to a model. Rows are sent
 * with bounded concurrency and written in input order; a row whose /verify fails is recorded as
 * a failure with its reason and is never written with a made-up reward.
 *
 * Before any output is touched, the input (and task) files are checked, the outputs must not be
 * any of them, and the /verify target must be known (a misspelt +resources_server is refused).
 * The output and `<stem>_failures.jsonl` are written atomically (core/files); a run without
 * failures removes an earlier run's failures file, so what is beside the output is this run's.
 */
import { existsSync, rmSync } from 'node:fs';
import { ServerClient } from '@nemo-gym/core/client';
import { checkInputFile, checkOutputFile, commandLock, writeFileAtomic, type FileRef } from '@nemo-gym/core/files';
import { BadRowError, UsageError, type NgError } from '@nemo-gym/core/errors';
import { sidecarPath } from '@nemo-gym/core/rollouts';
import { JsonlSink } from './jsonl.js';
import { isObject, readRows, rewardOf, Tally, type Json } from './rows.js';

export interface VerifyTarget {
  /** The server's base URL (`http://127.0.0.1:PORT`), or… */
  url?: string;
  /** …the instance name of a server running under ng-run (found through the head server). */
  serverName?: string;
  head?: { host: string; port: number };
}

export interface ReverifyOptions {
  input: string;
  output: string;
  target: VerifyTarget;
  /** Rows in flight at once (default 32). */
  concurrency?: number;
  /**
   * The task rows the rollouts were collected from (the collector's input file). Rollout files
   * written by upstream NeMo Gym keep only some task fields, so /verify needs them back: each
   * rollout is matched to its task by `_ng_task_index` (the task's line), or, without it, by the
   * contents of its input messages. The task's fields fill what the rollout lacks, and its
   * `responses_create_params` (the request as the agent sent it) replaces the echoed one.
   * The task file is held in memory.
   */
  tasks?: string;
  /** Rewards closer than this count as unchanged (default 1e-9). */
  tolerance?: number;
  /** An existing client (tests, or a caller that already has one). */
  client?: ServerClient;
  /** How the input is named in messages (default `+input`). */
  inputFlag?: string;
  /** Also write the summary as `<stem>_summary.json` (atomically, before the output is put in place). */
  writeSummary?: boolean;
  /** Take the output's lock as this command (e.g. `ng-reverify`): a second writer of the output is refused. */
  lock?: string;
  /**
   * Score only the rollouts whose failure was `judge_failed` (from the collector's
   * `<input stem>_failures.jsonl`, each with the `verify_request` it recorded): the input's rows are
   * copied to the output as they are, followed by the newly scored ones; nothing else is sent.
   */
  judgeFailedOnly?: boolean;
}

export interface ReverifySummary {
  input: string;
  output: string;
  rows: number;
  verified: number;
  failed: number;
  failuresPath: string | null;
  changed: number;
  unchanged: number;
  /** Rows that had no reward before (counted apart from changed/unchanged). */
  newlyScored: number;
  meanBefore: number | null;
  meanAfter: number | null;
  /** Mean and largest absolute change over the rows that had a reward before. */
  meanAbsDelta: number;
  maxAbsDelta: number;
  /** How many rewards went from each old value to each new one (`"0 -> 1": 3`). */
  transitions: Record<string, number>;
  unreadable: Record<string, { count: number; lines: number[] }>;
  elapsedS: number;
}

/** Keys the collector adds to result rows; they are kept on the new row, not sent to /verify. */
const COLLECTOR_KEYS = ['_ng_task_index', '_ng_rollout_index'];

/** The /verify request of a recorded row: the row without its reward and the collector's tags. */
export function verifyRequestOf(row: Json): Json {
  const body: Json = {};
  for (const [k, v] of Object.entries(row)) if (k !== 'reward' && !COLLECTOR_KEYS.includes(k)) body[k] = v;
  return body;
}

/** A row's identity across files: the contents of its input messages (re-serialized rows add `type`). */
export function inputKey(row: Json): string {
  const params = isObject(row.responses_create_params) ? row.responses_create_params : {};
  const input = params.input;
  return JSON.stringify(Array.isArray(input) ? input.map((m) => (isObject(m) ? m.content : m)) : input);
}

export interface TaskIndex {
  byLine: Map<number, Json>;
  byInput: Map<string, Json>;
}

export async function loadTasks(path: string): Promise<TaskIndex> {
  const byLine = new Map<number, Json>();
  const byInput = new Map<string, Json>();
  for await (const { lineNo, row } of readRows(path)) {
    if (!row) continue;
    byLine.set(lineNo - 1, row);
    byInput.set(inputKey(row), row);
  }
  return { byLine, byInput };
}

/** The /verify request of a rollout joined with its task row. */
export function joinTask(row: Json, tasks: TaskIndex): Json | NgError {
  const idx = row._ng_task_index;
  const task = typeof idx === 'number' ? tasks.byLine.get(idx) : tasks.byInput.get(inputKey(row));
  if (!task) {
    return new BadRowError(typeof idx === 'number' ? `no task row at line ${idx + 1} of the tasks file` : 'no task row has the same input messages');
  }
  const body = { ...task, ...verifyRequestOf(row) };
  if (task.responses_create_params !== undefined) body.responses_create_params = task.responses_create_params;
  delete body.agent_ref;
  return body;
}

export interface VerifyFn {
  (body: Json): Promise<Json>;
}

/**
 * A function that posts one /verify request and returns the answer (throws on failure). A server
 * name the head server does not know is refused here, before anything is written.
 */
export async function verifierFor(target: VerifyTarget, client: ServerClient): Promise<VerifyFn> {
  if (target.url) {
    const url = `${target.url.replace(/\/+$/, '')}/verify`;
    return async (body) => (await client.requestUrl(url, body, { method: 'POST' })).raiseForStatus().json<Json>();
  }
  if (!target.serverName) throw new UsageError('a /verify target needs a URL or a server instance name');
  const name = target.serverName;
  client.baseUrl(name);
  return (body) => client.postJson<Json>(name, '/verify', body);
}

/** The client a /verify target is reached with: given, or made for its URL or from the head server. */
export async function verifyClient(target: VerifyTarget, client?: ServerClient): Promise<ServerClient> {
  return client ?? (target.url ? new ServerClient({}) : await ServerClient.fromHeadServer(target.head));
}

/** The files ng-reverify writes beside its output. */
export function reverifyPaths(output: string): { failures: string; summary: string } {
  const stem = output.replace(/\.jsonl$/, '');
  return { failures: `${stem}_failures.jsonl`, summary: `${stem}_summary.json` };
}

/** Checks the files of a re-verification before anything is written (throws FileError). */
export function checkReverifyFiles(opts: { input: string; output: string; tasks?: string }, inputFlag = '+input'): void {
  const inputs: FileRef[] = [{ path: opts.input, flag: inputFlag }];
  if (opts.tasks) inputs.push({ path: opts.tasks, flag: '+tasks' });
  for (const f of inputs) checkInputFile(f);
  const side = reverifyPaths(opts.output);
  checkOutputFile({ path: opts.output, flag: '+output' }, inputs, [
    { path: side.failures, what: 'failures file' },
    { path: side.summary, what: 'summary file' },
  ]);
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(6)));
}

/** The collector's failures file beside a rollouts file (where judge failures are recorded). */
export function collectorFailuresOf(input: string): string {
  return sidecarPath(input, 'failures.jsonl');
}

/**
 * The rows of a `+judge_failed_only` run: the input's rows are written to `out` as they are (their
 * keys kept in `done`), then each judge failure of the collector's failures file that is not in the
 * input is given once, as the /verify request it recorded with its task and rollout index.
 */
async function* judgeFailureRows(input: string, out: JsonlSink, failuresFile: string): AsyncGenerator<{ lineNo: number; row?: Json; problem?: string }> {
  const done = new Set<string>();
  const key = (r: Json) => `${String(r._ng_task_index)}/${String(r._ng_rollout_index)}`;
  for await (const { row } of readRows(input)) {
    if (!row) continue;
    await out.write(row);
    done.add(key(row));
  }
  for await (const { lineNo, row, problem } of readRows(failuresFile)) {
    if (!row) {
      yield { lineNo, problem };
      continue;
    }
    if (row.reason_class !== 'judge_failed' || done.has(key(row))) continue;
    done.add(key(row));
    const request = isObject(row.verify_request) ? row.verify_request : {};
    yield { lineNo, row: { ...request, _ng_task_index: row._ng_task_index, _ng_rollout_index: row._ng_rollout_index } };
  }
}

export async function reverify(opts: ReverifyOptions): Promise<ReverifySummary> {
  checkReverifyFiles(opts, opts.inputFlag);
  if (opts.judgeFailedOnly && !existsSync(collectorFailuresOf(opts.input))) {
    throw new UsageError(
      `+judge_failed_only=true re-scores the judge failures recorded in ${collectorFailuresOf(opts.input)}, and there is no such file: ` +
        'no rollout of that collection failed (or +input is not a file ng-collect-rollouts wrote).',
    );
  }
  const lock = commandLock(opts.output, opts.lock);
  try {
    return await reverifyChecked(opts);
  } finally {
    lock?.release();
  }
}

async function reverifyChecked(opts: ReverifyOptions): Promise<ReverifySummary> {
  const started = Date.now();
  const client = await verifyClient(opts.target, opts.client);
  let out: JsonlSink;
  let verify: VerifyFn;
  let tasks: TaskIndex | undefined;
  try {
    verify = await verifierFor(opts.target, client);
    tasks = opts.tasks ? await loadTasks(opts.tasks) : undefined;
    out = new JsonlSink(opts.output);
  } catch (err) {
    if (!opts.client) await client.close();
    throw err;
  }
  const tolerance = opts.tolerance ?? 1e-9;
  const concurrency = Math.max(1, opts.concurrency ?? 32);
  const failuresPath = reverifyPaths(opts.output).failures;
  let failures: JsonlSink | undefined;
  const unreadable = new Tally();
  const s = { rows: 0, verified: 0, failed: 0, changed: 0, unchanged: 0, newlyScored: 0, sumBefore: 0, nBefore: 0, sumAfter: 0, nAfter: 0, sumDelta: 0, maxDelta: 0 };
  const transitions: Record<string, number> = {};

  type Pending = Promise<{ lineNo: number; row: Json; answer?: Json; error?: string }>;
  const window: Pending[] = [];

  const settle = async (p: Pending) => {
    const { lineNo, row, answer, error } = await p;
    if (error !== undefined || !answer) {
      s.failed++;
      failures ??= new JsonlSink(failuresPath);
      await failures.write({ line: lineNo, reason: error ?? 'no answer', _ng_task_index: row._ng_task_index ?? null, _ng_rollout_index: row._ng_rollout_index ?? null });
      return;
    }
    s.verified++;
    const before = rewardOf(row);
    const after = rewardOf(answer)!;
    const newRow: Json = { ...answer };
    for (const k of COLLECTOR_KEYS) if (row[k] !== undefined) newRow[k] = row[k];
    // A sample the agent masked (its capture, its sandbox) stays masked: /verify cannot vouch for it.
    if (row.mask_sample === true && !Object.hasOwn(answer, 'mask_sample')) {
      newRow.mask_sample = true;
      if (row.failure_reason !== undefined) newRow.failure_reason = row.failure_reason;
    }
    await out.write(newRow);
    s.sumAfter += after;
    s.nAfter++;
    if (before === undefined) {
      s.newlyScored++;
      return;
    }
    s.sumBefore += before;
    s.nBefore++;
    const d = Math.abs(after - before);
    s.sumDelta += d;
    s.maxDelta = Math.max(s.maxDelta, d);
    if (d > tolerance) {
      s.changed++;
      const key = `${fmt(before)} -> ${fmt(after)}`;
      transitions[key] = (transitions[key] ?? 0) + 1;
    } else s.unchanged++;
  };

  try {
    const rows = opts.judgeFailedOnly ? judgeFailureRows(opts.input, out, collectorFailuresOf(opts.input)) : readRows(opts.input);
    for await (const { lineNo, row, problem } of rows) {
      if (!row) {
        unreadable.add(problem!, lineNo);
        continue;
      }
      s.rows++;
      const p: Pending = (async () => {
        if (!isObject(row.response) || !isObject(row.responses_create_params)) {
          return { lineNo, row, error: 'the row has no `response` / `responses_create_params` object, so there is nothing to verify' };
        }
        const body = tasks ? joinTask(row, tasks) : verifyRequestOf(row);
        if (body instanceof Error) return { lineNo, row, error: body.message };
        try {
          const answer = await verify(body);
          if (rewardOf(answer) === undefined) return { lineNo, row, error: '/verify answered without a numeric `reward`' };
          return { lineNo, row, answer };
        } catch (err) {
          return { lineNo, row, error: (err as Error).message };
        }
      })();
      window.push(p);
      if (window.length >= concurrency) await settle(window.shift()!);
    }
    while (window.length) await settle(window.shift()!);
    // The failures file and the summary first, the output last: an output in place means what is
    // beside it is this run's.
    if (failures) await failures.close();
    else rmSync(failuresPath, { force: true });
    const summary: ReverifySummary = {
      input: opts.input,
      output: opts.output,
      rows: s.rows,
      verified: s.verified,
      failed: s.failed,
      failuresPath: failures ? failuresPath : null,
      changed: s.changed,
      unchanged: s.unchanged,
      newlyScored: s.newlyScored,
      meanBefore: s.nBefore ? s.sumBefore / s.nBefore : null,
      meanAfter: s.nAfter ? s.sumAfter / s.nAfter : null,
      meanAbsDelta: s.nBefore ? s.sumDelta / s.nBefore : 0,
      maxAbsDelta: s.maxDelta,
      transitions,
      unreadable: unreadable.toJSON(),
      elapsedS: (Date.now() - started) / 1000,
    };
    if (opts.writeSummary) writeFileAtomic(reverifyPaths(opts.output).summary, `${JSON.stringify(summary, null, 2)}\n`);
    await out.close();
    return summary;
  } catch (err) {
    out.abort();
    failures?.abort();
    throw err;
  } finally {
    if (!opts.client) await client.close();
  }
}
