/**
 * The Redis data of distributed collection, on Redis Streams with a consumer group (ioredis):
 *
 * - `ng:q:<queue>:jobs`: one entry per (task, repeat) of a run; workers read it through the
 *   consumer group `workers`. An entry a worker read stays in the group's pending list until it
 *   is acknowledged; a worker holds its lease by touching its entries (XCLAIM … JUSTID), and an
 *   entry idle longer than the lease (its worker died) is taken over by another (XAUTOCLAIM).
 * - `ng:run:<run>:enqueued`: the (task, repeat) keys of a run ever enqueued; a Lua script adds a
 *   batch of keys and their jobs in one step, so enqueuing again (a rerun, a restarted collector)
 *   adds nothing.
 * - `ng:run:<run>:results`: what workers finished, results and failures; a worker appends the
 *   records of the jobs it finished since its last hand-back as one entry (the output lines of
 *   the results as one text, written by the collector as they are) and acknowledges those jobs in
 *   the same transaction (with `appendfsync always`, one sync for the whole batch). The collector is the
 *   one writer: it reads this stream from its saved position (`ng:run:<run>:pos`), writes each
 *   (task, repeat) once and drops repeats (a job redone after a lease expired, a command resent
 *   after a reconnect).
 * - `ng:run:<run>:live`: set by the collector when it starts; a Redis that comes back without its
 *   data (or evicted the run) has lost it, and the collector then enqueues again every (task,
 *   repeat) it has no result for (collect.ts, recover). Workers that meet `NOGROUP` make the
 *   consumer group again.
 *
 * Why Streams and not BullMQ: the lease (pending list + idle time), the takeover (XAUTOCLAIM) and
 * the acknowledgement are what Redis itself offers, so no job-state machine in Lua is needed, and
 * the one-writer rule (which BullMQ does not give) is a plain stream read.
 */
import type { Redis } from 'ioredis';
import { nextRetryDelay, retryPolicy, sleep, type RetryPolicy } from '@nemo-gym/core/client';
import { redactUrlCredentials } from '@nemo-gym/core/config';
import { QueueError } from './errors.js';

export const GROUP = 'workers';

export interface QueueJob {
  /** `<task>:<repeat>`. */
  key: string;
  run: string;
  taskIndex: number;
  rolloutIndex: number;
  line: number;
  agent: string;
  /** JSON text to POST to the agent's /run. */
  body: string;
}

/** What a worker hands back for one job; the output line of a result travels beside it (see encodeResults). */
export type QueueRecord =
  | {
      kind: 'result';
      key: string;
      agent: string;
      /** What the metrics read of the result (metricsDigest), so the writer need not parse it again. */
      metrics: Record<string, unknown>;
      /** How long the rollout took at the worker, ms. */
      ms?: number;
    }
  | {
      kind: 'failure';
      key: string;
      agent: string;
      line: number;
      reason: string;
      /** The reason class (failures.ts), given by the worker that saw the error. */
      reason_class?: string;
      status: number | null;
      /** The failure's code (NG_ERR_*), from the error or the agent's answer. */
      code?: string;
      delivered: 'no' | 'yes' | 'maybe';
      http_attempts: number;
      started_at: string;
      /** A judge failure: the /verify request, for ng-reverify +judge_failed_only=true. */
      verify_request?: Record<string, unknown>;
    };

export const jobsKey = (queue: string) => `ng:q:${queue}:jobs`;
export const runKey = (run: string, what: 'enqueued' | 'results' | 'pos' | 'live') => `ng:run:${run}:${what}`;

/**
 * Enqueues a batch of jobs in one step: ARGV holds key, job, key, job, …; a key already in the
 * run's set is not added again. Returns how many were new.
 */
const ENQUEUE_LUA = `
local added = 0
for i = 1, #ARGV, 2 do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    redis.call('XADD', KEYS[2], '*', 'job', ARGV[i + 1])
    added = added + 1
  end
end
return added`;

/** A queue URL as it may be shown in a message or a log: credentials masked by the project's one secret rule. */
export const shownUrl = (url: string): string => redactUrlCredentials(url);

/**
 * Checks a queue URL before anything connects: `redis://` or `rediss://`, a host, a port in range
 * and a database number. Returns the database; a malformed URL is a QueueError naming it (masked).
 */
export function parseQueueUrl(url: string): { db: number } {
  const bad = (why: string) =>
    new QueueError(`queue_url ${JSON.stringify(shownUrl(url))} is not a Redis URL: ${why}. Expected redis://host[:port][/database] (with a password: user:password@ before the host), e.g. redis://127.0.0.1:6379 or redis://10.0.0.1:6379/2.`);
  if (!/^rediss?:\/\//i.test(url)) throw bad('it must start with redis:// (or rediss:// for TLS)');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // The part after the credentials: `host:port`, where a port that is no number is the usual slip.
    const hostPort = (url.replace(/^rediss?:\/\//i, '').split('/')[0] ?? '').replace(/^.*@/, '');
    const port = /^[^[\]:]*:(.*)$/.exec(hostPort)?.[1];
    throw bad(port !== undefined && !/^\d{1,5}$/.test(port) ? `the port ${JSON.stringify(port)} is not a number` : 'it cannot be parsed as a URL');
  }
  if (!parsed.hostname) throw bad('it names no host');
  const path = parsed.pathname.replace(/^\//, '');
  if (path !== '' && !/^\d+$/.test(path)) throw bad(`the path ${JSON.stringify(path)} is not a database number`);
  return { db: path === '' ? 0 : Number(path) };
}

/** The longest wait for one Redis command's answer (its BLOCK included). */
export const COMMAND_TIMEOUT_MS = 10_000;

/** Connection-level errors met by each client (ioredis reports them as events, the commands only as "closed"). */
const lastConnectionError = new WeakMap<Redis, Error>();

/**
 * Connection settings: reconnect quickly, queue commands while reconnecting, and fail a command
 * at the first failed reconnect or after COMMAND_TIMEOUT_MS, so that the callers' one retry policy
 * (withRedisRetries) is the only layer that retries. The client library is loaded on first use, so
 * commands that never touch Redis do not pay for it.
 */
export async function connect(url: string, name: string): Promise<Redis> {
  parseQueueUrl(url);
  const { Redis: RedisClient } = await import('ioredis');
  const redis = new RedisClient(url, {
    connectionName: name,
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => Math.min(50 * times, 1000),
    enableOfflineQueue: true,
    lazyConnect: false,
    connectTimeout: 3000,
    // A closed client's socket that never answered is destroyed soon (the default 2 s kept a failed command's process alive).
    disconnectTimeout: 200,
    // Longer than any BLOCK of this module (1 s): a Redis that hangs (stopped, swapping) fails the command.
    commandTimeout: COMMAND_TIMEOUT_MS,
    // RESP2: stream replies arrive as the nested arrays this module reads, without the map
    // decoding and re-flattening of RESP3 (a few µs per job less on both ends).
    protocol: 2,
  });
  // Connection errors reach the commands that were waiting; the client reconnects by itself.
  redis.on('error', (err: Error) => lastConnectionError.set(redis, err));
  redis.on('ready', () => lastConnectionError.delete(redis));
  return redis;
}

/** Redis's error replies that say "try again" (loading its data, a busy script, a failover). */
const TRANSIENT_REPLY_RE = /^(LOADING|BUSY|TRYAGAIN|MASTERDOWN|CLUSTERDOWN|READONLY)\b/;

/** Whether Redis answered with an error reply (a refused command, not a lost connection). */
export function isReplyError(err: unknown): boolean {
  return err instanceof Error && err.name === 'ReplyError';
}

/** Whether `err` is Redis's answer that a stream or its consumer group does not exist. */
export function isNoGroup(err: unknown): boolean {
  return isReplyError(err) && (err as Error).message.startsWith('NOGROUP');
}

/** The reason of a failed command, with the connection's own error when the command only says it was cut. */
export function redisReason(redis: Redis | undefined, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const conn = redis ? lastConnectionError.get(redis) : undefined;
  // "Reached the max retries per request limit", "Connection is closed": the connection's error says why.
  const reason = conn && !isReplyError(err) && !(err instanceof Error && err.message.startsWith('Command timed out')) ? conn.message : message;
  return shownUrl(reason);
}

/** Redis commands while a run goes on: a restart or a failover of a minute or two is waited out. */
export const REDIS_RETRY: RetryPolicy = retryPolicy({ maxAttempts: 200, maxElapsedMs: 120_000, initialDelayMs: 100, maxDelayMs: 2_000 });

/** The first contact: an unreachable Redis is reported within seconds. */
export const REDIS_CONNECT_RETRY: RetryPolicy = retryPolicy({ maxAttempts: 20, maxElapsedMs: 3_000, initialDelayMs: 100, maxDelayMs: 1_000 });

export interface RedisRetryOptions {
  url: string;
  /** The client `fn` uses (its connection error is named when a command fails). */
  redis?: Redis;
  policy?: RetryPolicy;
  /** Stops the retries (the last error is thrown). */
  signal?: AbortSignal;
  /** What to tell the user to do when the budget is spent (default: check Redis, rerun to resume). */
  hint?: string;
}

/**
 * Runs `fn` until it succeeds, with the project's retry policy (client/retry.ts: exponential
 * backoff with full jitter, an attempt and a time budget). A lost connection, a timeout or a
 * "try again" reply is retried; any other error reply (a wrong password, out of memory) is not.
 * Either way the error is a QueueError naming the (masked) URL and the reason.
 */
export async function withRedisRetries<T>(what: string, fn: () => Promise<T>, opts: RedisRetryOptions): Promise<T> {
  const policy = opts.policy ?? REDIS_RETRY;
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const hint = opts.hint ?? 'Check that redis-server runs and answers there (redis-cli -u <url> ping), then run the same command again to resume.';
      if (isReplyError(err) && !TRANSIENT_REPLY_RE.test((err as Error).message)) {
        throw new QueueError(`Redis at ${shownUrl(opts.url)}: ${what} was refused (${shownUrl((err as Error).message).replace(/\.+$/, '')}). ${hint}`, { cause: err });
      }
      const elapsed = Date.now() - started;
      const delay = nextRetryDelay(policy, attempt, elapsed);
      if (delay === null || opts.signal?.aborted) {
        throw new QueueError(
          `Redis at ${shownUrl(opts.url)}: ${what} failed ${attempt} time(s) in ${(elapsed / 1000).toFixed(1)} s (${redisReason(opts.redis, err)}). ${hint}`,
          { cause: err },
        );
      }
      await sleep(delay, opts.signal);
    }
  }
}

/**
 * The first contact with Redis, within REDIS_CONNECT_RETRY's budget (a few seconds): it answers
 * PING, and the database of the URL exists (ioredis only reports a refused SELECT as an event and
 * then works on database 0).
 */
export async function checkRedis(redis: Redis, url: string, options: { policy?: RetryPolicy; signal?: AbortSignal } = {}): Promise<void> {
  const policy = options.policy ?? REDIS_CONNECT_RETRY;
  const signal = options.signal;
  const { db } = parseQueueUrl(url);
  const hint = 'Start redis-server there or fix +queue_url; nothing was enqueued or written.';
  let timer: NodeJS.Timeout | undefined;
  // A hard stop too: a connection attempt to a silent host must not outlast the budget.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new QueueError(`Redis at ${shownUrl(url)} did not answer within ${(policy.maxElapsedMs / 1000).toFixed(0)} s${lastConnectionError.get(redis) ? ` (${redisReason(redis, lastConnectionError.get(redis))})` : ''}. ${hint}`)),
      policy.maxElapsedMs + 1000,
    );
    // Given up by the caller (another check failed first): no timer keeps the process alive.
    signal?.addEventListener('abort', () => clearTimeout(timer), { once: true });
  });
  try {
    await Promise.race([
      deadline,
      withRedisRetries('connecting', () => redis.ping(), { url, redis, policy, hint, signal }).then(async () => {
        if (db === 0) return;
        try {
          await redis.select(db);
        } catch (err) {
          if (!isReplyError(err)) throw err;
          const count = await redis.config('GET', 'databases').then(
            (r) => Number((r as string[])[1]),
            () => NaN,
          );
          const range = Number.isInteger(count) && count > 0 ? `this server has databases 0 to ${count - 1}` : 'databases are numbered from 0 to the server\'s `databases` setting minus one (16 by default)';
          throw new QueueError(`Redis at ${shownUrl(url)} refused database ${db} (${(err as Error).message}): ${range}. Fix the /${db} at the end of +queue_url; nothing was enqueued or written.`);
        }
      }),
    ]);
  } catch (err) {
    if (err instanceof QueueError) throw err;
    throw new QueueError(`Redis at ${shownUrl(url)} refused the connection: ${redisReason(redis, err).replace(/\.+$/, '')}. ${hint}`, { cause: err });
  } finally {
    clearTimeout(timer);
  }
}

/** Creates the consumer group when it does not exist yet. */
export async function ensureGroup(redis: Redis, queue: string): Promise<void> {
  try {
    await redis.xgroup('CREATE', jobsKey(queue), GROUP, '0', 'MKSTREAM');
  } catch (err) {
    if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
  }
}

/**
 * A job as the text of its stream entry: a JSON header `[task, repeat, line, run, agent]`, a line
 * break, then the body as it is (no second JSON encoding of the row; JSON text never holds a raw
 * line break, so the first one ends the header).
 */
export function encodeJob(job: QueueJob): string {
  return `${JSON.stringify([job.taskIndex, job.rolloutIndex, job.line, job.run, job.agent])}\n${job.body}`;
}

/** The job of an entry's text, or null when it is not one (a job in the earlier all-JSON form is read too). */
export function decodeJob(text: string): QueueJob | null {
  try {
    if (text.charCodeAt(0) === 123 /* { */) {
      const j = JSON.parse(text) as QueueJob;
      return typeof j.key === 'string' && typeof j.body === 'string' ? j : null;
    }
    const nl = text.indexOf('\n');
    if (nl < 0) return null;
    const h = JSON.parse(text.slice(0, nl)) as unknown[];
    if (!Array.isArray(h) || h.length < 5 || !Number.isInteger(h[0]) || !Number.isInteger(h[1]) || typeof h[3] !== 'string' || typeof h[4] !== 'string') return null;
    const [taskIndex, rolloutIndex, line, run, agent] = h as [number, number, number, string, string];
    return { key: `${taskIndex}:${rolloutIndex}`, run, taskIndex, rolloutIndex, line: Number(line), agent, body: text.slice(nl + 1) };
  } catch {
    return null;
  }
}

/** Enqueues each job once per run; resolves with how many were new. */
export async function enqueue(redis: Redis, queue: string, run: string, jobs: readonly QueueJob[]): Promise<number> {
  if (jobs.length === 0) return 0;
  const args: string[] = [];
  for (const j of jobs) args.push(j.key, encodeJob(j));
  return Number(await redis.eval(ENQUEUE_LUA, 2, runKey(run, 'enqueued'), jobsKey(queue), ...args));
}

/** Parses stream entries `[id, [field, value, …]]` into [id, job]. */
export function parseEntries(entries: unknown): [string, QueueJob | null][] {
  const out: [string, QueueJob | null][] = [];
  if (!Array.isArray(entries)) return out;
  for (const e of entries as [string, string[] | null][]) {
    const fields = e[1];
    const at = fields ? fields.indexOf('job') : -1;
    out.push([e[0], fields && at >= 0 && typeof fields[at + 1] === 'string' ? decodeJob(fields[at + 1]!) : null]);
  }
  return out;
}

/**
 * The fields of one results entry: `worker`, the worker's name; `meta`, one JSON array of the
 * records; `lines`, the output lines of the results among them, in their order, each ending in a
 * line break, as the writer appends them (the output line of a result is never JSON-encoded a
 * second time, and the writer writes the whole text at once when it keeps every result).
 */
export function encodeResults(worker: string, done: readonly { record: QueueRecord; text?: string }[]): string[] {
  const records: QueueRecord[] = [];
  let lines = '';
  for (const d of done) {
    records.push(d.record);
    if (d.record.kind !== 'result') continue;
    const text = d.text ?? '';
    let line = text.endsWith('\n') ? text.slice(0, -1) : text;
    // Never so for a tagged line; a JSON text with line breaks between its tokens is made one line.
    if (line.includes('\n') || line.includes('\r')) line = JSON.stringify(JSON.parse(line));
    lines += `${line}\n`;
  }
  return ['worker', worker, 'meta', JSON.stringify(records), 'lines', lines];
}

/** One results entry read back: its records, and the output lines of its results in their order. */
export interface ResultsEntry {
  worker: string;
  records: QueueRecord[];
  /** The text of `lines`: as many lines (each ending in a line break) as there are results in `records`. */
  lines: string;
}

/** Reads one results entry's fields; null when they are not one (an unknown format, a count that does not add up). */
export function decodeResults(fields: readonly string[]): ResultsEntry | null {
  let worker = '?';
  let meta: string | undefined;
  let lines = '';
  for (let f = 0; f + 1 < fields.length; f += 2) {
    if (fields[f] === 'meta') meta = fields[f + 1];
    else if (fields[f] === 'lines') lines = fields[f + 1]!;
    else if (fields[f] === 'worker') worker = fields[f + 1]!;
  }
  if (meta === undefined) return null;
  let records: QueueRecord[];
  try {
    records = JSON.parse(meta) as QueueRecord[];
  } catch {
    return null;
  }
  if (!Array.isArray(records)) return null;
  let results = 0;
  for (const r of records) {
    if (!r || typeof r !== 'object' || typeof r.key !== 'string' || (r.kind !== 'result' && r.kind !== 'failure')) return null;
    if (r.kind === 'result') results++;
  }
  let count = 0;
  for (let at = lines.indexOf('\n'); at >= 0; at = lines.indexOf('\n', at + 1)) count++;
  if (count !== results || (lines.length > 0 && !lines.endsWith('\n'))) return null;
  return { worker, records, lines };
}

/** A job a worker finished: its stream id, its run, what to hand back (and a result's output line). */
export interface Finished {
  id: string;
  run: string;
  record: QueueRecord;
  text?: string;
}

/**
 * Hands finished jobs back in one transaction: their records appended to their run's results (one
 * entry per run) and the jobs acknowledged (and deleted from the stream), or none of it. One
 * transaction for many jobs is one append-only-file write and sync on the server, and a few
 * commands, instead of several commands and a sync per job.
 */
export async function complete(redis: Redis, queue: string, worker: string, done: readonly Finished[]): Promise<void> {
  if (done.length === 0) return;
  const m = redis.multi();
  const first = done[0]!.run;
  if (done.every((d) => d.run === first)) m.xadd(runKey(first, 'results'), '*', ...encodeResults(worker, done));
  else {
    const byRun = new Map<string, Finished[]>();
    for (const d of done) {
      const list = byRun.get(d.run);
      if (list) list.push(d);
      else byRun.set(d.run, [d]);
    }
    for (const [run, list] of byRun) m.xadd(runKey(run, 'results'), '*', ...encodeResults(worker, list));
  }
  const ids = done.map((d) => d.id);
  m.xack(jobsKey(queue), GROUP, ...ids).xdel(jobsKey(queue), ...ids);
  const res = await m.exec();
  if (res === null) throw new QueueError('Redis discarded the hand-back transaction');
  for (const [err] of res) if (err) throw err;
}
