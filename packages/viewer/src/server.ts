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
import {
  compareTasks,
  groupTasks,
  meanOver,
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
const TASK_SORTS = ['task', 'k', 'passed', 'mean', 'pass', 'failures', 'prompt'] as const;
const COMPARE_SORTS = ['delta', 'task', 'a', 'b', 'prompt'] as const;
const CHANGES = ['improved', 'regressed', 'unchanged', 'missing'] as const;

/** One rollouts file with its index, task groups and the collector's failure records. */
interface Loaded {
  name: 'a' | 'b';
  path: string;
  index: RolloutIndex;
  failures: CollectionFailure[];
  agents: string[];
  /** Task groups per agent filter ('' = every agent), built on first use. */
  tasks: Map<string, TaskGroup[]>;
  searchCache: Map<string, Promise<Set<number>>>;
  summary?: Record<string, unknown>;
}

async function load(name: 'a' | 'b', jsonlPath: string, flag: string, log: (t: string) => void): Promise<Loaded> {
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
  return { name, path, index, failures, agents: [...agents].sort(), tasks: new Map(), searchCache: new Map() };
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
  let hit = file.searchCache.get(q);
  if (!hit) {
    hit = file.index.search(q);
    file.searchCache.set(q, hit);
    if (file.searchCache.size > SEARCH_CACHE) file.searchCache.delete(file.searchCache.keys().next().value!);
  }
  return hit;
}

function summaryOf(file: Loaded): Record<string, unknown> {
  if (file.summary) return file.summary;
  const index = file.index;
  let count = 0;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const r of index.rows) {
    if (r.reward === null) continue;
    count++;
    sum += r.reward;
    if (r.reward < min) min = r.reward;
    if (r.reward > max) max = r.reward;
  }
  const tasks = tasksOf(file, undefined);
  const ks = new Set(tasks.filter((g) => g.k > 0).map((g) => g.k));
  const byReason = new Map<string, number>();
  for (const f of file.failures) byReason.set(f.reason, (byReason.get(f.reason) ?? 0) + 1);
  file.summary = {
    file: basename(file.path),
    path: file.path,
    rows: index.size,
    invalidRows: index.rows.filter((r) => r.error !== null).length,
    rewards: { count, mean: count ? sum / count : null, min: count ? min : null, max: count ? max : null },
    histogram: index.histogram(),
    metricsText: index.metricsText,
    agents: file.agents,
    tasks: {
      count: tasks.length,
      /** Rows carry the collector's task tags (else tasks are grouped by prompt). */
      tagged: index.rows.some((r) => r.taskIndex !== null),
      /** Rollouts per task when every task has the same number, else null. */
      k: ks.size === 1 ? [...ks][0]! : null,
      passAtK: meanOver(tasks, (g) => g.passAtK),
      passAt1: meanOver(tasks, (g) => g.passAt1),
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
  const fileA = await load('a', options.jsonlPath, 'jsonl_fpath', log);
  let fileB: Loaded | null = null;
  try {
    if (options.compareJsonlPath !== undefined) fileB = await load('b', options.compareJsonlPath, 'compare_jsonl_fpath', log);
  } catch (err) {
    await fileA.index.close();
    throw err;
  }
  const index = fileA.index;

  const fileParam = (params: URLSearchParams): Loaded => {
    const which = choiceParam(params, 'file', ['a', 'b'] as const) ?? 'a';
    if (which === 'a') return fileA;
    if (!fileB) throw new BadRequest(400, 'no second file to compare with; start the viewer with +compare_jsonl_fpath=<rollouts.jsonl>');
    return fileB;
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

  const listRows = async (params: URLSearchParams) => {
    const file = fileParam(params);
    const min = numberParam(params, 'min_reward');
    const max = numberParam(params, 'max_reward');
    const agent = agentParam(params, file);
    const outcome = choiceParam(params, 'outcome', OUTCOMES);
    const task = params.get('task') || undefined;
    const { sort, order } = sortParams(params, ROW_SORTS);
    const q = textParam(params);
    const hits = q ? await searchFor(file, q) : null;
    let matching: RowSummary[] = [];
    for (const r of file.index.rows) {
      if (min !== undefined && (r.reward === null || r.reward < min)) continue;
      if (max !== undefined && (r.reward === null || r.reward > max)) continue;
      if (agent !== undefined && r.agent !== agent) continue;
      if (outcome !== undefined && rowOutcome(r) !== outcome) continue;
      if (task !== undefined && taskKey(r) !== task) continue;
      if (hits && !hits.has(r.index)) continue;
      matching.push(r);
    }
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

  let comparison: ReturnType<typeof compareTasks> | undefined;
  const listComparison = (params: URLSearchParams) => {
    if (!fileB) throw new BadRequest(400, 'no second file to compare with; start the viewer with +compare_jsonl_fpath=<rollouts.jsonl>');
    comparison ??= compareTasks(tasksOf(fileA, undefined), tasksOf(fileB, undefined));
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
    return { ...rest, files: { a: basename(fileA.path), b: basename(fileB.path) }, summary: comparison.summary, tasks: items };
  };

  const listFailures = (params: URLSearchParams) => {
    const file = fileParam(params);
    const agent = agentParam(params, file);
    const { items, ...rest } = page(params, agent === undefined ? file.failures : file.failures.filter((f) => f.agent === agent));
    return { ...rest, failures: items };
  };

  const getRow = async (file: Loaded, i: number) => {
    const index = file.index;
    if (!Number.isInteger(i) || i < 0 || i >= index.size) {
      throw new BadRequest(404, `row ${i} does not exist; the file has rows 0 to ${index.size - 1}`);
    }
    const text = await index.rowText(i);
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
        return sendJson(res, 200, { ...summaryOf(file), compare: fileB ? { a: basename(fileA.path), b: basename(fileB.path) } : null });
      }
      if (p === '/api/rows') return sendJson(res, 200, await listRows(url.searchParams));
      if (p === '/api/tasks') return sendJson(res, 200, await listTasks(url.searchParams));
      if (p === '/api/compare') return sendJson(res, 200, listComparison(url.searchParams));
      if (p === '/api/failures') return sendJson(res, 200, listFailures(url.searchParams));
      const m = /^\/api\/rows\/([^/]+)$/.exec(p);
      if (m) {
        const i = Number(m[1]);
        if (!/^\d+$/.test(m[1]!)) throw new BadRequest(400, `row index ${JSON.stringify(m[1])} is not a non-negative integer`);
        return sendJson(res, 200, await getRow(fileParam(url.searchParams), i));
      }
      throw new BadRequest(404, `no such page ${p}; the API is /api/summary, /api/rows, /api/rows/<index>, /api/tasks, /api/compare and /api/failures`);
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
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
      await index.close();
      await fileB?.index.close();
    },
  };
}
