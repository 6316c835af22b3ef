/**
 * The search tool's backends. Google's Custom Search JSON API is the reference one: its JSON
 * answer is handed to the model re-encoded with Python's `json.dumps` (", " and ": " separators,
 * ASCII escapes, Python float repr, key order kept). A self-hosted SearXNG instance is the other:
 * its results are put into the same shape (items with title, link, displayLink, snippet).
 *
 * Failures become the reference's model-visible text, "Error: Unexpected error - <message>",
 * with messages worded like the Python requests library's; the API key is never part of them.
 */
import { STATUS_CODES } from 'node:http';
import { request, type Agent } from 'undici';
import { createPool } from '@nemo-gym/core/client';
import { MASK } from '@nemo-gym/core/config';
import { pyDumps } from '@nemo-gym/core/data';
import { PyJsonDecodeError, pyJsonLoads, type PyValue } from '@nemo-gym/core/py';

export interface SearchTimeouts {
  /** Connect, response-headers and body-idle limit in seconds (the reference's `timeout=10`). */
  timeoutS: number;
  /** Limit for the whole call in seconds. */
  totalTimeoutS: number;
}

export type SearchBackendConfig =
  | { backend: 'google'; url: string; apiKey: string; cx: string }
  | { backend: 'searxng'; url: string; extraParams: Record<string, string> };

export const ERROR_PREFIX = 'Error: Unexpected error - ';

/** A parsed answer, or the text that follows the error prefix. */
type Fetched = { ok: true; value: PyValue } | { ok: false; message: string };

function redactedUrl(url: URL): string {
  const u = new URL(url);
  if (u.searchParams.has('key')) u.searchParams.set('key', MASK);
  return u.href;
}

function poolName(url: URL): string {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return `${url.protocol === 'https:' ? 'HTTPS' : 'HTTP'}ConnectionPool(host='${url.hostname}', port=${port})`;
}

const ERRNO: Record<string, string> = {
  ECONNREFUSED: '[Errno 111] Connection refused',
  ECONNRESET: '[Errno 104] Connection reset by peer',
  EHOSTUNREACH: '[Errno 113] No route to host',
  ENETUNREACH: '[Errno 101] Network is unreachable',
};

/** The requests-style message of a transport failure. */
function transportMessage(err: unknown, url: URL, t: SearchTimeouts, deadline: AbortSignal): string {
  const pool = poolName(url);
  const path = redactedUrl(url).slice(url.origin.length);
  const code = (err as { code?: string }).code ?? '';
  if (deadline.aborted) return `${pool}: Read timed out. (read timeout=${t.totalTimeoutS})`;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return `${pool}: Read timed out. (read timeout=${t.timeoutS})`;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `${pool}: Max retries exceeded with url: ${path} (Caused by ConnectTimeoutError('Connection to ${url.hostname} timed out. (connect timeout=${t.timeoutS})'))`;
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return `${pool}: Max retries exceeded with url: ${path} (Caused by NameResolutionError("Failed to resolve '${url.hostname}' ([Errno -2] Name or service not known)"))`;
  }
  const errno = ERRNO[code];
  if (errno) return `${pool}: Max retries exceeded with url: ${path} (Caused by NewConnectionError('Failed to establish a new connection: ${errno}'))`;
  if (code === 'UND_ERR_SOCKET') return `('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))`;
  return `${pool}: ${(err as Error).message ?? String(err)}`;
}

/** Python's `json.JSONDecodeError` text: "<msg>: line L column C (char P)". */
function jsonErrorMessage(err: PyJsonDecodeError, text: string): string {
  const before = text.slice(0, err.pos);
  const line = before.split('\n').length;
  const col = err.pos - (before.lastIndexOf('\n') + 1) + 1;
  return `${err.reason}: line ${line} column ${col} (char ${err.pos})`;
}

export class SearchClient {
  private readonly agent: Agent;

  constructor(
    private readonly config: SearchBackendConfig,
    private readonly timeouts: SearchTimeouts,
  ) {
    const ms = timeouts.timeoutS * 1000;
    this.agent = createPool({ connections: 64, connectTimeoutMs: ms, headersTimeoutMs: ms, bodyTimeoutMs: ms });
  }

  /** The tool's `search_results` text for `query`. */
  async search(query: string): Promise<string> {
    try {
      if (this.config.backend === 'google') {
        const url = new URL(this.config.url);
        url.searchParams.set('key', this.config.apiKey);
        url.searchParams.set('cx', this.config.cx);
        url.searchParams.set('q', query);
        const got = await this.getJson(url);
        return got.ok ? pyDumps(got.value) : ERROR_PREFIX + got.message;
      }
      const url = new URL('search', this.config.url.endsWith('/') ? this.config.url : `${this.config.url}/`);
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      for (const [k, v] of Object.entries(this.config.extraParams)) url.searchParams.set(k, v);
      const got = await this.getJson(url);
      return got.ok ? pyDumps(searxngAsCustomSearch(query, got.value)) : ERROR_PREFIX + got.message;
    } catch (err) {
      return ERROR_PREFIX + String((err as Error).message ?? err);
    }
  }

  private async getJson(url: URL): Promise<Fetched> {
    const deadline = AbortSignal.timeout(this.timeouts.totalTimeoutS * 1000);
    let status: number;
    let text: string;
    try {
      const res = await request(url, {
        method: 'GET',
        dispatcher: this.agent,
        signal: deadline,
        headers: { accept: 'application/json', 'user-agent': 'nemo-gym-google-search' },
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      return { ok: false, message: transportMessage(err, url, this.timeouts, deadline) };
    }
    if (status >= 400 && status < 600) {
      const kind = status < 500 ? 'Client' : 'Server';
      return { ok: false, message: `${status} ${kind} Error: ${STATUS_CODES[status] ?? ''} for url: ${redactedUrl(url)}` };
    }
    try {
      return { ok: true, value: pyJsonLoads(text) };
    } catch (err) {
      if (err instanceof PyJsonDecodeError) return { ok: false, message: jsonErrorMessage(err, text) };
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function str(v: PyValue | undefined): string | null {
  return typeof v === 'string' ? v : null;
}

/**
 * SearXNG's `{"results": [{"url", "title", "content", ...}], ...}` as a Custom Search answer with
 * up to 10 items, so the model sees one format whichever backend runs.
 */
export function searxngAsCustomSearch(query: string, answer: PyValue): PyValue {
  const results = answer instanceof Map ? answer.get('results') : undefined;
  const items: PyValue[] = [];
  if (Array.isArray(results)) {
    for (const r of results) {
      if (!(r instanceof Map)) continue;
      const link = str(r.get('url'));
      if (!link) continue;
      let displayLink = '';
      try {
        displayLink = new URL(link).host;
      } catch {
        displayLink = '';
      }
      items.push(
        new Map<string, PyValue>([
          ['kind', 'customsearch#result'],
          ['title', str(r.get('title')) ?? ''],
          ['link', link],
          ['displayLink', displayLink],
          ['snippet', str(r.get('content')) ?? ''],
        ]),
      );
      if (items.length === 10) break;
    }
  }
  const total = answer instanceof Map ? answer.get('number_of_results') : undefined;
  const totalResults = typeof total === 'bigint' || typeof total === 'number' ? String(total) : String(items.length);
  return new Map<string, PyValue>([
    ['kind', 'customsearch#search'],
    ['queries', new Map([['request', [new Map<string, PyValue>([['searchTerms', query], ['count', BigInt(items.length)], ['startIndex', 1n]])]]])],
    ['searchInformation', new Map<string, PyValue>([['totalResults', totalResults]])],
    ['items', items],
  ]);
}
