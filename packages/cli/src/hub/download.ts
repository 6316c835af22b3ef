/**
 * One file of a Hub dataset repo to a local path, with the official client library
 * (`@huggingface/hub`): `pathsInfo` gives the file's size and checksum (the SHA-256 of an LFS
 * file, the git blob id of a small one), `fileDownloadInfo` the download URL, and the library's
 * range-capable blob (`downloadFile(...).slice(offset).stream()`) the bytes. They go to
 * `<target>.part`; a connection cut mid-body, or a `.part` left by an earlier run, is continued
 * with an HTTP Range request from the bytes already there. The finished file is checked (size,
 * then SHA-256 or the git blob id) before it is renamed to the target; a file that fails the
 * check is deleted. The Xet transfer protocol is not used (its reconstruction download cannot be
 * continued this way); the Hub serves every file over plain HTTP too.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, statSync, truncateSync, unlinkSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { nextRetryDelay, retryPolicy, sleep } from '@nemo-gym/core/client';
import { DataDownloadError } from '@nemo-gym/core/errors';
import { HubError } from '../errors.js';
import { fetchWithLimit, hubFailure, networkCode, type HubContext, type HubSettings } from './hub.js';

export interface DownloadRequest {
  repoId: string;
  /** The file in the repo (`artifact_fpath`). */
  path: string;
  /** Absolute local path of the finished file. */
  target: string;
  settings: HubSettings;
  revision?: string;
  /** Consecutive attempts that bring no new bytes before giving up (default 5). */
  maxAttempts?: number;
  /** Time allowed for the whole download, resumes included (default 6 h). */
  budgetMs?: number;
  /** Time to wait for an answer's headers (default 30 s). */
  headersTimeoutMs?: number;
  /** Time without a byte of body before the connection counts as cut (default 60 s). */
  idleTimeoutMs?: number;
  /** Backoff ceiling before the second attempt, doubled each time up to 10 s (default 500 ms); the pause is drawn below it (the project's retry policy). */
  backoffMs?: number;
  onProgress?: (done: number, total: number) => void;
  /** Lines worth showing (a resume after a cut connection). */
  note?: (line: string) => void;
}

export interface DownloadResult {
  size: number;
  /** Bytes that were already in `<target>.part` when the command started. */
  resumedFrom: number;
  /** Connections that were cut and continued with a Range request. */
  resumes: number;
  sha256: string;
  /** What the file was checked against. */
  checkedBy: 'sha256' | 'git blob id' | 'size';
}

interface Expected {
  size: number;
  sha256?: string;
  gitOid?: string;
}

type Hub = typeof import('@huggingface/hub');

async function fileHashes(path: string): Promise<{ sha256: string; gitOid: string }> {
  const size = statSync(path).size;
  const sha = createHash('sha256');
  const git = createHash('sha1').update(`blob ${size}\0`);
  for await (const chunk of createReadStream(path)) {
    sha.update(chunk as Buffer);
    git.update(chunk as Buffer);
  }
  return { sha256: sha.digest('hex'), gitOid: git.digest('hex') };
}

/** A fetch that remembers the status of the last answer it saw (the blob's stream hides it). */
function recordingFetch(inner: typeof fetch): { fetch: typeof fetch; last: { status: number; ranged: boolean } } {
  const last = { status: 0, ranged: false };
  const f: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    const res = await inner(input, init);
    last.status = res.status;
    last.ranged = headers.has('range');
    return res;
  };
  return { fetch: f, last };
}

/** Why a body stream stopped, in words (the library hands some reasons over as plain strings). */
function reasonText(reason: unknown): string {
  if (typeof reason === 'string') return reason;
  if (reason instanceof Error) {
    const cause = (reason as { cause?: { message?: string; code?: string } }).cause;
    return cause?.code ?? cause?.message ?? reason.message;
  }
  return String(reason);
}

export async function downloadHubFile(req: DownloadRequest): Promise<DownloadResult> {
  const hub: Hub = await import('@huggingface/hub');
  const { hubUrl, token } = req.settings;
  const repo = { type: 'dataset' as const, name: req.repoId };
  const revision = req.revision ?? 'main';
  const ctx: HubContext = { hubUrl, repoId: req.repoId, path: req.path, action: 'download', hasToken: token !== undefined, target: req.target };
  const headersMs = req.headersTimeoutMs ?? 30_000;
  const metaFetch = fetchWithLimit(headersMs);

  // 1. What the Hub says the file is.
  let expected: Expected;
  let info: Awaited<ReturnType<Hub['fileDownloadInfo']>>;
  try {
    const entries = await hub.pathsInfo({ repo, paths: [req.path], revision, hubUrl, accessToken: token, fetch: metaFetch });
    const entry = entries.find((e) => e.path === req.path && e.type === 'file');
    if (!entry) throw new HubError(`${req.repoId}/${req.path} was not found on the Hugging Face Hub at ${hubUrl} (the repo has no such file); check huggingface_identifier.artifact_fpath.`);
    expected = entry.lfs ? { size: entry.lfs.size, sha256: entry.lfs.oid } : { size: entry.size, gitOid: entry.oid };
    info = await hub.fileDownloadInfo({ repo, path: req.path, revision, hubUrl, accessToken: token, fetch: metaFetch });
  } catch (err) {
    throw hubFailure(err, ctx);
  }
  if (!info) throw new HubError(`${req.repoId}/${req.path} was not found on the Hugging Face Hub at ${hubUrl}; check huggingface_identifier.artifact_fpath.`);
  if (info.size !== expected.size) {
    throw new DataDownloadError(`${req.repoId}/${req.path}: the Hub lists ${expected.size} bytes but serves ${info.size}; run the command again later.`);
  }

  // 2. The bytes, into <target>.part, continued where a cut connection left them.
  mkdirSync(dirname(req.target), { recursive: true });
  const part = `${req.target}.part`;
  let have = existsSync(part) ? statSync(part).size : 0;
  if (have > expected.size) {
    truncateSync(part, 0);
    have = 0;
  }
  const resumedFrom = have;
  // Attempts count the failures in a row that brought no new bytes; the time budget covers the whole download.
  const policy = retryPolicy({ maxAttempts: req.maxAttempts ?? 5, maxElapsedMs: req.budgetMs ?? 6 * 3600_000, initialDelayMs: req.backoffMs ?? 500, maxDelayMs: 10_000 });
  const started = Date.now();
  const idleMs = req.idleTimeoutMs ?? 60_000;
  let failures = 0;
  let resumes = 0;
  req.onProgress?.(have, expected.size);
  while (have < expected.size) {
    const attempt = new AbortController();
    const rec = recordingFetch(fetchWithLimit(headersMs, attempt.signal));
    const startedAt = have;
    let idle: NodeJS.Timeout | undefined;
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => attempt.abort(new DOMException(`no data for ${idleMs} ms`, 'TimeoutError')), idleMs);
    };
    let fh: Awaited<ReturnType<typeof open>> | undefined;
    try {
      const blob = await hub.downloadFile({ repo, path: req.path, revision, hubUrl, accessToken: token, xet: false, downloadInfo: info, fetch: rec.fetch });
      if (!blob) throw new HubError(`${req.repoId}/${req.path} is no longer on the Hugging Face Hub at ${hubUrl}.`);
      const reader = (have === 0 ? blob : blob.slice(have)).stream().getReader();
      armIdle();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        armIdle();
        if (!fh) {
          // The answer is in: a server that ignored the Range header sends the file from its start.
          if (have > 0 && rec.last.status === 200) {
            req.note?.(`the Hub ignored the Range request; downloading ${req.path} from the start`);
            have = 0;
            fh = await open(part, 'w');
          } else {
            fh = await open(part, have === 0 ? 'w' : 'a');
          }
        }
        await fh.write(value);
        have += value.length;
        req.onProgress?.(have, expected.size);
      }
      if (have !== expected.size) throw new DataDownloadError(`${req.repoId}/${req.path}: the download ended after ${have} of ${expected.size} bytes.`);
    } catch (err) {
      if (rec.last.status >= 400) throw hubFailure({ statusCode: rec.last.status, message: reasonText(err) }, ctx);
      if (err instanceof HubError || err instanceof DataDownloadError) throw err;
      const why = attempt.signal.aborted ? reasonText(attempt.signal.reason) : reasonText(err);
      const network = attempt.signal.aborted || networkCode(err) !== undefined || typeof err === 'string' || /fetch failed|terminated|socket|closed|reset/i.test(why);
      if (!network) throw hubFailure(err, ctx);
      await fh?.close();
      fh = undefined;
      have = existsSync(part) ? statSync(part).size : 0;
      failures = have > startedAt ? 1 : failures + 1;
      const delay = nextRetryDelay(policy, failures, Date.now() - started);
      if (delay === null) {
        if (have === 0) throw hubFailure(err, ctx);
        throw new DataDownloadError(
          `${req.repoId}/${req.path}: the connection broke (${why}) and ${failures} attempt(s) in a row brought no data; ${have} of ${expected.size} bytes are kept in ${part} — run the command again to continue.`,
        );
      }
      resumes++;
      req.note?.(`connection to the Hub broke after ${have} of ${expected.size} bytes of ${req.path} (${why}); continuing from byte ${have}`);
      await sleep(delay);
    } finally {
      clearTimeout(idle);
      await fh?.close();
    }
  }
  if (!existsSync(part)) await (await open(part, 'w')).close(); // an empty file

  // 3. The checks, then the file takes its place.
  const size = statSync(part).size;
  const hashes = await fileHashes(part);
  const refuse = (why: string) => {
    unlinkSync(part);
    return new DataDownloadError(`${req.repoId}/${req.path}: ${why}; the file was deleted, not kept at ${req.target}. Run the command again; if it repeats, the Hub's copy changed during the download or something on the way alters it.`);
  };
  if (size !== expected.size) throw refuse(`received ${size} bytes, the Hub lists ${expected.size}`);
  if (expected.sha256 && hashes.sha256 !== expected.sha256.toLowerCase()) throw refuse(`SHA-256 ${hashes.sha256} does not match the Hub's ${expected.sha256}`);
  if (!expected.sha256 && expected.gitOid && hashes.gitOid !== expected.gitOid.toLowerCase()) throw refuse(`git blob id ${hashes.gitOid} does not match the Hub's ${expected.gitOid}`);
  await rename(part, req.target);
  return { size, resumedFrom, resumes, sha256: hashes.sha256, checkedBy: expected.sha256 ? 'sha256' : expected.gitOid ? 'git blob id' : 'size' };
}
