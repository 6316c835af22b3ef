/**
 * HTTP server of the rollouts viewer. Binds 127.0.0.1 by default; serves a static page and a
 * small JSON API over an index of the file (rows are read from disk on demand).
 */
import { existsSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, resolve } from 'node:path';
import { NgError } from '@nemo-gym/core/errors';
import { VIEWER_ERRORS } from './errors.js';
import { APP_CSS, appJs, INDEX_HTML } from './page.js';
import { sidecarPath } from '@nemo-gym/core/rollouts';
import { createParamsNote, RolloutIndex, type RowSummary } from './rollout-index.js';
import { tokenSequence } from '@nemo-gym/bridge';
import { breakdown, chartData, maskedCount, type Breakdown, type ChartData } from './charts.js';
import {
  compareTasks,
  groupTasks,
  taskFigures,
  OUTCOMES,
  readCollectionFailures,
  rowOutcome,
  sortBy,
  TASK_OUTCOMES,
  taskKey,
  taskOutcome,
  type CollectionFailure,
  type TaskComparison,
  type TaskGroup,
} from './tasks.js';

export interface ViewerOptions {
  jsonlPath: string;
  /** A second rollouts file to compare with, task by task (reward deltas B − A). */
  compareJsonlPath?: string;
  /** More rollouts files (after `compareJsonlPath`): runs B, C, … shown beside run A, each with every summary and chart. */
  compareJsonlPaths?: string[];
  host?: string;
  port?: number;
  /** Progress output while indexing (default: silent). */
  log?: (text: string) => void;
}

export interface ViewerHandle {
  url: string;
  close: () => Promise<void>;
  index: RolloutIndex;
  /** Index of the file compared with, if any. */
  compareIndex: RolloutIndex | null;
  /** Every run's index, A first. */
  indexes: RolloutIndex[];
}

export class ViewerError extends NgError {
  constructor(message: string) {
    super(VIEWER_ERRORS.NG_ERR_VIEWER, message);
  }
}

class BadRequest extends NgError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(VIEWER_ERRORS.NG_ERR_VIEWER_REQUEST, message);
  }
}

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const MAX_PAGE = 500;
const SEARCH_CACHE = 8;
const CHART_CACHE = 16;

/** `cache.get(key)`, else `make()` stored under `key`, the oldest entry dropped past `limit`. */
function cached<T>(cache: Map<string, T>, key: string, limit: number, make: () => T): T {
  let v = cache.get(key);
  if (v === undefined) {
    v = make();
    cache.set(key, v);
    if (cache.size > limit) cache.delete(cache.keys().next().value!);
  }
  return v;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

function numberParam(params: URLSearchParams, name: string): number | undefined {
  const raw = params.get(name);
  if (raw === null || raw.trim() === '') return undefined;
  const v = Number(raw);
  if (!Number.isFinite(v)) throw new BadRequest(400, `query parameter ${name}=${JSON.stringify(raw)} is not a number; give a decimal number such as ${name}=0.5`);
  return v;
}

function intParam(params: URLSearchParams, name: string, dflt: number, min: number, max: number): number {
  const v = numberParam(params, name);
  if (v === undefined) return dflt;
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new BadRequest(400, `query parameter ${name}=${v} must be an integer from ${min} to ${max}`);
  }
  return v;
}

function choiceParam<T extends string>(params: URLSearchParams, name: string, choices: readonly T[]): T | undefined {
  const raw = params.get(name);
  if (raw === null || raw === '') return undefined;
  if (!(choices as readonly string[]).includes(raw)) {
    throw new BadRequest(400, `query parameter ${name}=${JSON.stringify(raw)} is not one of ${choices.join(', ')}`);
  }
  return raw as T;
}

/** `sort=<column>&order=asc|desc`, the column one of `columns` (default: the first, ascending). */
function sortParams<T extends string>(params: URLSearchParams, columns: readonly T[]): { sort: T; order: 'asc' | 'desc' } {
  return { sort: choiceParam(params, 'sort', columns) ?? columns[0]!, order: choiceParam(params, 'order', ['asc', 'desc'] as const) ?? 'asc' };
}

const ROW_SORTS = ['index', 'task', 'reward', 'agent', 'calls'] as const;
/** `masked=only`: masked samples only; `masked=exclude`: the others. */
const MASKED = ['only', 'exclude'] as const;
const TASK_SORTS = ['task', 'k', 'passed', 'mean', 'pass', 'failures', 'prompt'] as const;
const COMPARE_SORTS = ['delta', 'task', 'a', 'b', 'prompt'] as const;
const CHANGES = ['improved', 'regressed', 'unchanged', 'missing'] as const;

/** At most this many runs side by side (named a, b, c, …). */
export const MAX_RUNS = 8;

/** One rollouts file with its index, task groups and the collector's failure records. */
interface Loaded {
  name: string;
  path: string;
  index: RolloutIndex;
  failures: CollectionFailure[];
  agents: string[];
  /** Task groups per agent filter ('' = every agent), built on first use. */
  tasks: Map<string, TaskGroup[]>;
  searchCache: Map<string, Promise<Set<number>>>;
  summary?: Record<string, unknown>;
  /** Chart data and breakdowns per row filter (`filterKey`; '' = every row), the most recent `CHART_CACHE` kept. */
  charts: Map<string, ChartData>;
  breakdowns: Map<string, Breakdown>;
}

async function load(name: string, jsonlPath: string, flag: string, log: (t: string) => void): Promise<Loaded> {
  const path = resolve(jsonlPath);
  if (!existsSync(path) || !statSync(path).isFile()) {
    throw new ViewerError(`${flag} ${jsonlPath} does not exist or is not a file (resolved to ${path}); pass +${flag}=<rollouts.jsonl>`);
  }
  log(`Indexing ${path} ...`);
  const index = await RolloutIndex.build(path, (n) => log(`  ${n} rows indexed`));
  log(`Indexed ${index.size} rows.`);
  const failures = await readCollectionFailures(sidecarPath(path, 'failures.jsonl'), index.rows);
  if (failures.length) log(`${failures.length} rollouts recorded as failed in ${basename(sidecarPath(path, 'failures.jsonl'))}.`);
  const agents = new Set<string>();
  for (const r of index.rows) if (r.agent !== null) agents.add(r.agent);
  for (const f of failures) if (f.agent !== null) agents.add(f.agent);
  return { name, path, index, failures, agents: [...agents].sort(), tasks: new Map(), searchCache: new Map(), charts: new Map(), breakdowns: new Map() };
}

function tasksOf(file: Loaded, agent: string | undefined): TaskGroup[] {
  const key = agent ?? '';
  let groups = file.tasks.get(key);
  if (!groups) {
    const rows = agent === undefined ? file.index.rows : file.index.rows.filter((r) => r.agent === agent);
    const failures = agent === undefined ? file.failures : file.failures.filter((f) => f.agent === agent);
    groups = groupTasks(rows, failures);
    file.tasks.set(key, groups);
  }
  return groups;
}

function searchFor(file: Loaded, q: string): Promise<Set<number>> {
  return cached(file.searchCache, q, SEARCH_CACHE, () => file.index.search(q));
}

function summaryOf(file: Loaded): Record<string, unknown> {
  if (file.summary) return file.summary;
  const index = file.index;
  let count = 0;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const r of index.rows) {
    // Masked samples are counted apart (`masked`), never in the reward figures.
    if (r.reward === null || r.masked) continue;
    count++;
    sum += r.reward;
    if (r.reward < min) min = r.reward;
    if (r.reward > max) max = r.reward;
  }
  const tasks = tasksOf(file, undefined);
  const figures = taskFigures(tasks);
  const byReason = new Map<string, number>();
  for (const f of file.failures) byReason.set(f.reason, (byReason.get(f.reason) ?? 0) + 1);
  file.summary = {
    file: basename(file.path),
    path: file.path,
    rows: index.size,
    invalidRows: index.rows.filter((r) => r.error !== null).length,
    rewards: { count, mean: count ? sum / count : null, min: count ? min : null, max: count ? max : null },
    histogram: index.histogram(),
    masked: maskedCount(index.rows),
    metricsText: index.metricsText,
    agents: file.agents,
    tasks: {
      ...figures,
      /** Rows carry the collector's task tags (else tasks are grouped by prompt). */
      tagged: index.rows.some((r) => r.taskIndex !== null),
    },
    collectionFailures: {
      count: file.failures.length,
      byReason: [...byReason].sort((x, y) => y[1] - x[1]).map(([reason, n]) => ({ reason, count: n })),
    },
  };
  return file.summary;
}

export async function startViewer(options: ViewerOptions): Promise<ViewerHandle> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 7860;
  const log = options.log ?? (() => {});
  const script = appJs();
  if (script === null) throw new ViewerError('the page script is not built (packages/viewer/dist/src/browser/app.js is missing); run `pnpm build` first');
  const others = [...(options.compareJsonlPath !== undefined ? [options.compareJsonlPath] : []), ...(options.compareJsonlPaths ?? [])];
  if (others.length + 1 > MAX_RUNS) throw new ViewerError(`${others.length + 1} rollouts files given; the viewer shows at most ${MAX_RUNS} runs side by side`);
  const files: Loaded[] = [];
  try {
    files.push(await load('a', options.jsonlPath, 'jsonl_fpath', log));
    for (const [i, path] of others.entries()) files.push(await load(String.fromCharCode(98 + i), path, 'compare_jsonl_fpath', log));
  } catch (err) {
    for (const f of files) await f.index.close();
    throw err;
  }
  const fileA = files[0]!;
  const fileB: Loaded | null = files[1] ?? null;
  const index = fileA.index;
  const names = files.map((f) => f.name);

  const fileParam = (params: URLSearchParams, name = 'file'): Loaded => {
    const which = params.get(name) || 'a';
    const file = files.find((f) => f.name === which);
    if (file) return file;
    if (files.length === 1) throw new BadRequest(400, 'no second file to compare with; start the viewer with +compare_jsonl_fpath=<rollouts.jsonl>');
    throw new BadRequest(400, `query parameter ${name}=${JSON.stringify(which)} names no run; the runs are ${names.join(', ')}`);
  };
  const agentParam = (params: URLSearchParams, file: Loaded): string | undefined => {
    const agent = params.get('agent');
    if (agent === null || agent === '') return undefined;
    if (!file.agents.includes(agent)) {
      throw new BadRequest(400, `query parameter agent=${JSON.stringify(agent)} names no agent of ${basename(file.path)}; its agents: ${file.agents.join(', ') || '(none recorded)'}`);
    }
    return agent;
  };
  const page = <T>(params: URLSearchParams, items: T[]) => {
    const start = intParam(params, 'start', 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = intParam(params, 'limit', 50, 1, MAX_PAGE);
    return { total: items.length, start, limit, items: items.slice(start, start + limit) };
  };
  const textParam = (params: URLSearchParams): string => {
    const q = (params.get('q') ?? '').trim();
    if (q.length > 1000) throw new BadRequest(400, 'query parameter q is longer than 1000 characters; shorten the search text');
    return q;
  };

  /**
   * The rows the list's filters select (reward range, agent, outcome, task, tool errors, masked,
   * text), and a key naming the filter ('' when nothing is filtered). With `anyAgent`, an agent the
   * file does not have selects no row instead of being refused (the charts send one filter to every run).
   */
  const filteredRows = async (file: Loaded, params: URLSearchParams, anyAgent = false): Promise<{ key: string; rows: readonly RowSummary[] }> => {
    const min = numberParam(params, 'min_reward');
    const max = numberParam(params, 'max_reward');
    const agent = anyAgent ? params.get('agent') || undefined : agentParam(params, file);
    const outcome = choiceParam(params, 'outcome', OUTCOMES);
    const task = params.get('task') || undefined;
    const toolErrors = choiceParam(params, 'tool_errors', ['with', 'without'] as const);
    const masked = choiceParam(params, 'masked', MASKED);
    const q = textParam(params);
    const parts = [min, max, agent, outcome, task, toolErrors, masked, q || undefined];
    if (parts.every((x) => x === undefined)) return { key: '', rows: file.index.rows };
    const hits = q ? await searchFor(file, q) : null;
    const matching: RowSummary[] = [];
    for (const r of file.index.rows) {
      if (min !== undefined && (r.reward === null || r.reward < min)) continue;
      if (max !== undefined && (r.reward === null || r.reward > max)) continue;
      if (agent !== undefined && r.agent !== agent) continue;
      if (outcome !== undefined && rowOutcome(r) !== outcome) continue;
      if (task !== undefined && taskKey(r) !== task) continue;
      if (toolErrors !== undefined && (r.toolErrors > 0) !== (toolErrors === 'with')) continue;
      if (masked !== undefined && r.masked !== (masked === 'only')) continue;
      if (hits && !hits.has(r.index)) continue;
      matching.push(r);
    }
    return { key: JSON.stringify(parts), rows: matching };
  };

  const listRows = async (params: URLSearchParams) => {
    const file = fileParam(params);
    const { sort, order } = sortParams(params, ROW_SORTS);
    let matching = [...(await filteredRows(file, params)).rows];
    if (sort !== 'index' || order !== 'asc') {
      const pick = {
        index: (r: RowSummary) => r.index,
        task: (r: RowSummary) => r.taskIndex ?? r.promptHash,
        reward: (r: RowSummary) => r.reward,
        agent: (r: RowSummary) => r.agent,
        calls: (r: RowSummary) => r.toolCalls,
      }[sort];
      matching = sortBy(matching, pick, order);
    }
    const { items, ...rest } = page(params, matching);
    return { ...rest, rows: items };
  };

  const listTasks = async (params: URLSearchParams) => {
    const file = fileParam(params);
    const agent = agentParam(params, file);
    const outcome = choiceParam(params, 'outcome', TASK_OUTCOMES);
    const { sort, order } = sortParams(params, TASK_SORTS);
    const q = textParam(params);
    const hits = q ? await searchFor(file, q) : null;
    let groups = tasksOf(file, agent).filter((g) => (outcome === undefined || taskOutcome(g) === outcome) && (!hits || g.rows.some((i) => hits.has(i))));
    const pick = {
      task: (g: TaskGroup) => g.taskIndex ?? g.promptHash,
      k: (g: TaskGroup) => g.k,
      passed: (g: TaskGroup) => g.passed,
      mean: (g: TaskGroup) => g.mean,
      pass: (g: TaskGroup) => g.passAtK,
      failures: (g: TaskGroup) => g.collectionFailures,
      prompt: (g: TaskGroup) => g.preview,
    }[sort];
    groups = sortBy(groups, pick, order);
    const { items, ...rest } = page(params, groups);
    return { ...rest, tasks: items };
  };

  const comparisons = new Map<string, ReturnType<typeof compareTasks>>();
  const listComparison = (params: URLSearchParams) => {
    if (!fileB) throw new BadRequest(400, 'no second file to compare with; start the viewer with +compare_jsonl_fpath=<rollouts.jsonl>');
    const other = params.get('b') ? fileParam(params, 'b') : fileB;
    let comparison = comparisons.get(other.name);
    if (!comparison) {
      comparison = compareTasks(tasksOf(fileA, undefined), tasksOf(other, undefined));
      comparisons.set(other.name, comparison);
    }
    const change = choiceParam(params, 'change', CHANGES);
    const { sort, order } = sortParams(params, COMPARE_SORTS);
    let tasks = comparison.tasks.filter((t) => {
      if (change === undefined) return true;
      if (change === 'missing') return t.delta === null;
      if (t.delta === null) return false;
      if (change === 'unchanged') return Math.abs(t.delta) < 1e-12;
      return change === 'improved' ? t.delta >= 1e-12 : t.delta <= -1e-12;
    });
    const pick = {
      task: (t: TaskComparison) => t.taskIndex ?? t.key,
      a: (t: TaskComparison) => t.a?.mean ?? null,
      b: (t: TaskComparison) => t.b?.mean ?? null,
      delta: (t: TaskComparison) => t.delta,
      prompt: (t: TaskComparison) => t.preview,
    }[sort];
    tasks = sortBy(tasks, pick, order);
    const { items, ...rest } = page(params, tasks);
    return { ...rest, files: { a: basename(fileA.path), b: basename(other.path) }, summary: comparison.summary, tasks: items };
  };

  const listFailures = (params: URLSearchParams) => {
    const file = fileParam(params);
    const agent = agentParam(params, file);
    const { items, ...rest } = page(params, agent === undefined ? file.failures : file.failures.filter((f) => f.agent === agent));
    return { ...rest, failures: items };
  };

  /** The charts of the rows the list's filters select, computed once per filter (the last `CHART_CACHE` filters kept). */
  const chartsOf = async (file: Loaded, params?: URLSearchParams): Promise<ChartData> => {
    const { key, rows } = params ? await filteredRows(file, params, true) : { key: '', rows: file.index.rows };
    // Unfiltered, the task groups include the collector's failure records; filtered, the selected rows' tasks.
    return cached(file.charts, key, CHART_CACHE, () => chartData(rows, key === '' ? tasksOf(file, undefined) : groupTasks(rows), file.path, file.index.size));
  };
  const breakdownOf = async (params: URLSearchParams) => {
    const file = fileParam(params);
    const by = params.get('by') || 'agent';
    const groupable = (await chartsOf(file)).groupable;
    if (!groupable.includes(by)) throw new BadRequest(400, `query parameter by=${JSON.stringify(by)} is not a field of ${basename(file.path)}; group by one of ${groupable.join(', ')}`);
    const { key, rows } = await filteredRows(file, params, true);
    return cached(file.breakdowns, `${key}\u0000${by}`, CHART_CACHE, () => breakdown(rows, by));
  };

  /** The rollout's tokens exactly as `ng-export +format=rl` writes them (input_ids, loss_mask, logprobs), or why there are none. */
  const getTokens = async (file: Loaded, i: number) => {
    const text = await rowTextOf(file, i);
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch {
      return { index: i, error: 'the row is not valid JSON' };
    }
    if (row === null || typeof row !== 'object' || Array.isArray(row)) return { index: i, error: 'the row is not a JSON object' };
    try {
      const seq = tokenSequence(row as Record<string, unknown>);
      return { index: i, input_ids: seq.input_ids, loss_mask: seq.loss_mask, logprobs: seq.logprobs, prompt_length: seq.prompt_length, turns: seq.turns.length };
    } catch (err) {
      if (err instanceof NgError) return { index: i, error: err.message };
      throw err;
    }
  };

  const rowTextOf = async (file: Loaded, i: number): Promise<string> => {
    const index = file.index;
    if (!Number.isInteger(i) || i < 0 || i >= index.size) {
      throw new BadRequest(404, `row ${i} does not exist; the file has rows 0 to ${index.size - 1}`);
    }
    return index.rowText(i);
  };

  const getRow = async (file: Loaded, i: number) => {
    const index = file.index;
    const text = await rowTextOf(file, i);
    const summaryRow = index.rows[i]!;
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch {
      row = undefined;
    }
    if (row !== undefined) {
      return { index: i, line: i + 1, row, error: summaryRow.error, warning: createParamsNote(row) };
    } else {
      return { index: i, line: i + 1, row: null, raw: text.length > 100_000 ? `${text.slice(0, 100_000)}…` : text, error: summaryRow.error };
    }
  };

  const allowedHosts = new Set<string>();
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    try {
      // Refuse requests addressed to another host name (DNS rebinding).
      const hostHeader = (req.headers.host ?? '').toLowerCase();
      if (!allowedHosts.has(hostHeader)) throw new BadRequest(421, `unexpected Host header ${JSON.stringify(hostHeader)}; open the viewer at its printed URL`);
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new BadRequest(405, `${req.method} is not supported; the viewer only answers GET`);
      const url = new URL(req.url ?? '/', 'http://viewer.local');
      const p = url.pathname;
      if (p === '/' || p === '/index.html') return send(res, 200, 'text/html; charset=utf-8', INDEX_HTML);
      if (p === '/app.js') return send(res, 200, 'text/javascript; charset=utf-8', script);
      if (p === '/app.css') return send(res, 200, 'text/css; charset=utf-8', APP_CSS);
      if (p === '/favicon.ico') {
        res.writeHead(204, SECURITY_HEADERS);
        return res.end();
      }
      if (p === '/api/summary') {
        const file = fileParam(url.searchParams);
        return sendJson(res, 200, {
          ...summaryOf(file),
          compare: fileB ? { a: basename(fileA.path), b: basename(fileB.path) } : null,
          runs: files.map((f) => ({ name: f.name, file: basename(f.path) })),
        });
      }
      if (p === '/api/runs') return sendJson(res, 200, { runs: files.map((f) => ({ name: f.name, ...summaryOf(f) })) });
      if (p === '/api/charts') {
        const file = fileParam(url.searchParams);
        return sendJson(res, 200, { name: file.name, file: basename(file.path), ...(await chartsOf(file, url.searchParams)) });
      }
      if (p === '/api/breakdown') return sendJson(res, 200, await breakdownOf(url.searchParams));
      if (p === '/api/rows') return sendJson(res, 200, await listRows(url.searchParams));
      if (p === '/api/tasks') return sendJson(res, 200, await listTasks(url.searchParams));
      if (p === '/api/compare') return sendJson(res, 200, listComparison(url.searchParams));
      if (p === '/api/failures') return sendJson(res, 200, listFailures(url.searchParams));
      const m = /^\/api\/rows\/([^/]+)(\/tokens)?$/.exec(p);
      if (m) {
        const i = Number(m[1]);
        if (!/^\d+$/.test(m[1]!)) throw new BadRequest(400, `row index ${JSON.stringify(m[1])} is not a non-negative integer`);
        const file = fileParam(url.searchParams);
        return sendJson(res, 200, m[2] ? await getTokens(file, i) : await getRow(file, i));
      }
      throw new BadRequest(
        404,
        `no such page ${p}; the API is /api/summary, /api/runs, /api/charts, /api/breakdown, /api/rows, /api/rows/<index>, /api/rows/<index>/tokens, /api/tasks, /api/compare and /api/failures`,
      );
    } catch (err) {
      if (err instanceof BadRequest) return sendJson(res, err.status, { detail: err.message, code: err.code });
      log(`viewer: internal error: ${err instanceof Error ? err.message : String(err)}`);
      return sendJson(res, 500, { detail: 'internal error while reading the file' });
    }
  };

  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((ok, fail) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      fail(err.code === 'EADDRINUSE' ? new ViewerError(`port ${port} on ${host} is in use; pass +port=<free port> (or 0 for any)`) : err),
    );
    server.listen(port, host, () => ok());
  });
  const actualPort = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  for (const h of [urlHost, 'localhost', '127.0.0.1']) allowedHosts.add(`${h}:${actualPort}`.toLowerCase());
  const url = `http://${urlHost}:${actualPort}/`;
  return {
    url,
    index,
    compareIndex: fileB?.index ?? null,
    indexes: files.map((f) => f.index),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
      for (const f of files) await f.index.close();
    },
  };
}
