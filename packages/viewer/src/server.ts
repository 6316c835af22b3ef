/**
 * HTTP server of the rollouts viewer. Binds 127.0.0.1 by default; serves a static page and a
 * small JSON API over an index of the file (rows are read from disk on demand).
 */
import { existsSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, resolve } from 'node:path';
import { NgError } from '@nemo-gym/core/errors';
import { APP_CSS, APP_JS, INDEX_HTML } from './page.js';
import { createParamsNote, RolloutIndex, type RowSummary } from './rollout-index.js';

export interface ViewerOptions {
  jsonlPath: string;
  host?: string;
  port?: number;
  /** Progress output while indexing (default: silent). */
  log?: (text: string) => void;
}

export interface ViewerHandle {
  url: string;
  close: () => Promise<void>;
  index: RolloutIndex;
}

export class ViewerError extends NgError {
  constructor(message: string) {
    super('NG_ERR_VIEWER', message);
  }
}

class BadRequest extends NgError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super('NG_ERR_VIEWER_REQUEST', message);
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

export async function startViewer(options: ViewerOptions): Promise<ViewerHandle> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 7860;
  const path = resolve(options.jsonlPath);
  if (!existsSync(path) || !statSync(path).isFile()) {
    throw new ViewerError(`jsonl_fpath ${options.jsonlPath} does not exist or is not a file (resolved to ${path}); pass +jsonl_fpath=<rollouts.jsonl>`);
  }
  const log = options.log ?? (() => {});
  log(`Indexing ${path} ...`);
  const index = await RolloutIndex.build(path, (n) => log(`  ${n} rows indexed`));
  log(`Indexed ${index.size} rows.`);

  const searchCache = new Map<string, Promise<Set<number>>>();
  const searchFor = (q: string): Promise<Set<number>> => {
    let hit = searchCache.get(q);
    if (!hit) {
      hit = index.search(q);
      searchCache.set(q, hit);
      if (searchCache.size > SEARCH_CACHE) searchCache.delete(searchCache.keys().next().value!);
    }
    return hit;
  };

  let summaryCache: Record<string, unknown> | undefined;
  const summary = () => {
    if (summaryCache) return summaryCache;
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
    summaryCache = {
      file: basename(path),
      path,
      rows: index.size,
      invalidRows: index.rows.filter((r) => r.error !== null).length,
      rewards: { count, mean: count ? sum / count : null, min: count ? min : null, max: count ? max : null },
      histogram: index.histogram(),
      metricsText: index.metricsText,
    };
    return summaryCache;
  };

  const listRows = async (params: URLSearchParams) => {
    const start = intParam(params, 'start', 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = intParam(params, 'limit', 50, 1, MAX_PAGE);
    const min = numberParam(params, 'min_reward');
    const max = numberParam(params, 'max_reward');
    const q = (params.get('q') ?? '').trim();
    if (q.length > 1000) throw new BadRequest(400, 'query parameter q is longer than 1000 characters; shorten the search text');
    const hits = q ? await searchFor(q) : null;
    const matching: RowSummary[] = [];
    for (const r of index.rows) {
      if (min !== undefined && (r.reward === null || r.reward < min)) continue;
      if (max !== undefined && (r.reward === null || r.reward > max)) continue;
      if (hits && !hits.has(r.index)) continue;
      matching.push(r);
    }
    return { total: matching.length, start, limit, rows: matching.slice(start, start + limit) };
  };

  const getRow = async (i: number) => {
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
      if (p === '/app.js') return send(res, 200, 'text/javascript; charset=utf-8', APP_JS);
      if (p === '/app.css') return send(res, 200, 'text/css; charset=utf-8', APP_CSS);
      if (p === '/favicon.ico') {
        res.writeHead(204, SECURITY_HEADERS);
        return res.end();
      }
      if (p === '/api/summary') return sendJson(res, 200, summary());
      if (p === '/api/rows') return sendJson(res, 200, await listRows(url.searchParams));
      const m = /^\/api\/rows\/([^/]+)$/.exec(p);
      if (m) {
        const i = Number(m[1]);
        if (!/^\d+$/.test(m[1]!)) throw new BadRequest(400, `row index ${JSON.stringify(m[1])} is not a non-negative integer`);
        return sendJson(res, 200, await getRow(i));
      }
      throw new BadRequest(404, `no such page ${p}; the API is /api/summary, /api/rows and /api/rows/<index>`);
    } catch (err) {
      if (err instanceof BadRequest) return sendJson(res, err.status, { detail: err.message });
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
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
      await index.close();
    },
  };
}
