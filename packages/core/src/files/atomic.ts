/**
 * Atomic file output: a file is written to a temporary file beside its final path (same folder,
 * so the same file system), flushed to disk, then renamed over the final path, and the folder is
 * flushed too. Whatever happens meanwhile — an error, Ctrl-C, a full disk, `kill -9`, a power cut —
 * the final path holds either its previous file or the complete new one, never a torn one.
 *
 * The temporary file is `<name>.<pid>@<host>.tmp` (or `<name>.<tag>.<pid>@<host>.tmp`). It is
 * removed when the write fails or the process exits without committing; one left by a process
 * killed outright is removed by the next writer of the same path on the same host once that pid is
 * gone, so a rerun needs no clean-up. (The host is in the name because a folder may be shared by
 * several machines: a pid says nothing about another host's processes.)
 */
import { chmodSync, closeSync, createWriteStream, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, realpathSync, renameSync, rmSync, statSync, writeFileSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { InternalError } from '../errors.js';
import { fileError } from './problems.js';
import { isProcessAlive, onProcessExit } from './process.js';

/** This host's name as it appears in temporary file names. */
function hostTag(): string {
  return hostname().replace(/[^A-Za-z0-9.-]/g, '_');
}

/** The temporary file of `path` for process `pid` of this host. */
export function tempPathOf(path: string, tag = '', pid = process.pid): string {
  return join(dirname(path), `${basename(path)}.${tag ? `${tag}.` : ''}${pid}@${hostTag()}.tmp`);
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Removes the temporary files of `path` left by processes of this host that no longer run (killed
 * while they wrote it). Returns the paths removed.
 */
export function removeStaleTemps(path: string): string[] {
  const dir = dirname(path);
  const pattern = new RegExp(`^${escapeRe(basename(path))}\\.(?:[a-z]+\\.)?(\\d+)@${escapeRe(hostTag())}\\.tmp$`);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = pattern.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || isProcessAlive(pid)) continue;
    try {
      rmSync(join(dir, name), { force: true });
      removed.push(join(dir, name));
    } catch {
      // Not ours to remove (permissions): it is ignored, as the final path never depends on it.
    }
  }
  return removed;
}

/**
 * The file an output path stands for: the path itself, or the file a symbolic link at it points to
 * (so writing `link.jsonl` replaces what the link points to, and the link stays).
 */
export function resolveOutputPath(path: string): string {
  const abs = resolve(path);
  let st;
  try {
    st = lstatSync(abs);
  } catch {
    // Not there yet: its folder may be reached through links.
    try {
      return join(realpathSync(dirname(abs)), basename(abs));
    } catch {
      return abs;
    }
  }
  if (!st.isSymbolicLink()) return abs;
  try {
    return realpathSync(abs);
  } catch {
    // A link to a file not made yet.
    return resolveOutputPath(resolve(dirname(abs), readlinkSync(abs)));
  }
}

function fsyncPath(path: string, flags: string): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } catch (err) {
    // Some file systems cannot flush a folder; the rename is still atomic there.
    const code = (err as NodeJS.ErrnoException).code;
    if (!(flags === 'r' && (code === 'EINVAL' || code === 'EISDIR' || code === 'EBADF'))) throw err;
  } finally {
    closeSync(fd);
  }
}

export interface AtomicFileOptions {
  /** A word in the temporary file's name, for a second temporary file of the same path. */
  tag?: string;
}

/**
 * One atomic output. The constructor makes the folder and an empty temporary file (so a path that
 * cannot be written fails here, before any work); write to `tmpPath`, then `commit()`, or
 * `discard()` on failure.
 */
export class AtomicFile {
  /** The final path (a symbolic link at the given path resolved). */
  readonly path: string;
  readonly tmpPath: string;
  private offExit: (() => void) | null;
  /** The permissions of the file being replaced, given to the new one. */
  private mode: number | null = null;

  constructor(path: string, options: AtomicFileOptions = {}) {
    this.path = resolveOutputPath(path);
    try {
      mkdirSync(dirname(this.path), { recursive: true });
    } catch (err) {
      throw fileError('create the folder of', path, err);
    }
    removeStaleTemps(this.path);
    this.tmpPath = tempPathOf(this.path, options.tag);
    const tmp = this.tmpPath;
    this.offExit = onProcessExit(() => rmSync(tmp, { force: true }));
    try {
      this.mode = statSync(this.path).mode & 0o7777;
    } catch {
      // No previous file: the default mode.
    }
    try {
      closeSync(openSync(tmp, 'w'));
    } catch (err) {
      this.discard();
      throw fileError('create', tmp, err, `It is the temporary file of ${path}, which keeps what it held before.`);
    }
  }

  /** Whether the file was committed or discarded. */
  get closed(): boolean {
    return this.offExit === null;
  }

  /** Flushes the temporary file, renames it over the final path and flushes the folder. */
  commit(): void {
    if (this.offExit === null) throw new InternalError(`${this.path} was already committed or discarded`);
    try {
      fsyncPath(this.tmpPath, 'r+');
      // A replaced file keeps its permissions (set now: a read-only mode would have kept the writer out).
      if (this.mode !== null) chmodSync(this.tmpPath, this.mode);
      renameSync(this.tmpPath, this.path);
    } catch (err) {
      this.discard();
      throw fileError('write', this.path, err, 'It keeps what it held before.');
    }
    this.offExit();
    this.offExit = null;
    try {
      fsyncPath(dirname(this.path), 'r');
    } catch {
      // The file is in place; a folder that cannot be opened for reading (mode -wx) is not flushed.
    }
  }

  /** Removes the temporary file; the final path keeps what it had. */
  discard(): void {
    rmSync(this.tmpPath, { force: true });
    this.offExit?.();
    this.offExit = null;
  }
}

/** Writes a whole file atomically. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const file = new AtomicFile(path);
  try {
    writeFileSync(file.tmpPath, data);
  } catch (err) {
    file.discard();
    throw fileError('write', path, err, 'It keeps what it held before.');
  }
  file.commit();
}

/**
 * Writes a file atomically through a stream: `write` gets a stream on the temporary file (wait for
 * 'drain' when `write()` returns false); when it resolves the stream is ended and the file put in
 * place; when it throws (or the stream fails) the temporary file is removed and the final path keeps
 * what it had.
 */
export async function writeStreamAtomic(path: string, write: (out: WriteStream) => Promise<void>): Promise<void> {
  const file = new AtomicFile(path);
  let out: WriteStream;
  try {
    out = createWriteStream(file.tmpPath, { fd: openSync(file.tmpPath, 'w') });
  } catch (err) {
    file.discard();
    throw fileError('write', path, err);
  }
  let failure: unknown;
  out.on('error', (err) => (failure ??= err));
  try {
    await write(out);
    if (failure) throw failure;
    out.end();
    await once(out, 'close');
    if (failure) throw failure;
  } catch (err) {
    out.destroy();
    file.discard();
    if (err === failure) throw fileError('write', path, err, 'It keeps what it held before.');
    throw err;
  }
  file.commit();
}
