/**
 * A dataset split to one JSONL file, for dataset entries whose huggingface_identifier names a
 * repo but no artifact_fpath (upstream loads those by split with Python's `datasets` library).
 *
 * The split's data files are found in the repo listing by the Hub's own layout conventions:
 * `data/<split>-00000-of-00002.parquet` (what `push_to_hub` writes), `data/<split>.jsonl`,
 * `<split>.jsonl` / `<split>.json` / `<split>.parquet` at the top, or the files under a
 * `<split>/` folder. Each file is fetched with the same checked, resumable download as an
 * artifact (into `<jsonl_fpath>.shards/`), then the files are converted in name order into a
 * temporary file beside `jsonl_fpath` (core/files writeStreamAtomic), renamed over it only when
 * every row was written: a failed or killed conversion leaves no partial file behind.
 *
 * Parquet rows become one JSON object a line, keys in column order, with the values
 * `datasets`' `to_json` writes: integers as numbers (a 64-bit integer beyond 2^53 is refused,
 * since a JSON reader would change it), nested lists and structs as JSON arrays and objects,
 * nulls as null, timestamps as epoch milliseconds, NaN as null. JSONL files are copied line by
 * line; a `.json` file holding one JSON array gives one line per element.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { once } from 'node:events';
import { writeStreamAtomic } from '@nemo-gym/core/files';
import { basename, dirname, join } from 'node:path';
import * as zlib from 'node:zlib';
import { readJsonl } from '@nemo-gym/core/data';
import { DatasetRowsError, HubError } from '../errors.js';
import { datasetPageUrl, fetchWithLimit, hubFailure, type HubContext, type HubSettings } from './hub.js';
import { downloadHubFile, type DownloadResult } from './download.js';

/** Names the Hub's loader accepts for a split besides its own (as its split-name keywords do). */
const SPLIT_ALIASES: Record<string, string[]> = {
  train: ['train', 'training'],
  validation: ['validation', 'valid', 'val', 'dev'],
  test: ['test', 'testing', 'eval', 'evaluation'],
};

const DATA_EXT = /\.(parquet|jsonl|json)$/;

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The repo files that hold `split`, in name order, or [] when none do. The first layout that
 * matches wins: `data/<split>…`, then `<split>…` at the top, then a `<split>/` folder.
 */
export function splitDataFiles(paths: readonly string[], split: string): string[] {
  const names = (SPLIT_ALIASES[split] ?? [split]).map(escapeRe).join('|');
  // `<split>` followed by the end of the stem, a dash, dot or underscore (train-00000-of-00002, train.jsonl).
  const stem = `(?:${names})(?:[-._][^/]*)?`;
  const layouts = [new RegExp(`^data/${stem}$`), new RegExp(`^${stem}$`), new RegExp(`^(?:data/)?(?:${names})/.+$`)];
  const files = paths.filter((p) => DATA_EXT.test(p));
  for (const re of layouts) {
    const hit = files.filter((p) => re.test(p));
    if (hit.length > 0) return hit.sort();
  }
  return [];
}

/** A parquet value as `datasets`' to_json writes it. */
function jsonValue(v: unknown, where: () => string): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'bigint') {
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new DatasetRowsError(`${where()}: the integer ${v} is beyond 2^53 and would change when read back as JSON; publish the column as a string, or give artifact_fpath a JSONL file.`);
    }
    return Number(v);
  }
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (v instanceof Date) return v.getTime();
  if (v instanceof Uint8Array) {
    throw new DatasetRowsError(`${where()}: a binary value (${v.length} bytes) has no JSON form; give artifact_fpath a JSONL file instead.`);
  }
  if (Array.isArray(v) || ArrayBuffer.isView(v)) return Array.from(v as ArrayLike<unknown>, (x) => jsonValue(x, where));
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = jsonValue(x, where);
    return out;
  }
  return v;
}

type Write = (line: string) => Promise<void>;

/** Page codecs beyond hyparquet's own (Snappy, uncompressed), from node:zlib: gzip, Brotli, and Zstandard where Node has it. */
function zlibCompressors(): Record<string, (input: Uint8Array, outputLength: number) => Uint8Array> {
  const out: Record<string, (input: Uint8Array, outputLength: number) => Uint8Array> = {
    GZIP: (input) => zlib.unzipSync(input),
    BROTLI: (input) => zlib.brotliDecompressSync(input),
  };
  const zstd = (zlib as unknown as { zstdDecompressSync?: (b: Uint8Array) => Buffer }).zstdDecompressSync;
  if (zstd) out.ZSTD = (input) => zstd(input);
  return out;
}

async function parquetToJsonl(file: string, label: string, write: Write): Promise<number> {
  const { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } = await import('hyparquet');
  const buf = await asyncBufferFromFile(file);
  const compressors = zlibCompressors();
  let rows = 0;
  try {
    const metadata = await parquetMetadataAsync(buf);
    const columns = metadata.schema[0]!.num_children ?? 0;
    const names = metadata.schema.length > 1 ? topLevelNames(metadata.schema) : [];
    if (names.length !== columns) throw new DatasetRowsError(`${label}: the Parquet schema lists ${columns} columns but holds ${names.length}; give artifact_fpath a JSONL file of the split instead.`);
    let start = 0;
    // One row group at a time keeps memory to a row group's size.
    for (const group of metadata.row_groups) {
      const end = start + Number(group.num_rows);
      const objects = await parquetReadObjects({ file: buf, metadata, rowStart: start, rowEnd: end, compressors });
      for (const obj of objects) {
        const row: Record<string, unknown> = {};
        const at = rows + 1;
        for (const name of names) row[name] = jsonValue(obj[name], () => `${label} row ${at}, column ${JSON.stringify(name)}`);
        await write(JSON.stringify(row));
        rows++;
      }
      start = end;
    }
  } catch (err) {
    if (err instanceof DatasetRowsError) throw err;
    const codec = /unsupported compression codec: (\w+)/.exec((err as Error).message)?.[1];
    const why = codec ? `its pages use the ${codec} codec, which this Node.js (${process.version}) cannot decompress` : (err as Error).message;
    throw new DatasetRowsError(`${label}: the Parquet file could not be read (${why}); give artifact_fpath a JSONL file of the split instead.`);
  }
  return rows;
}

/** The names of the top-level columns, in schema order (the flat schema lists children depth-first). */
function topLevelNames(schema: ReadonlyArray<{ name: string; num_children?: number }>): string[] {
  const names: string[] = [];
  let i = 1;
  const skip = (): void => {
    const n = schema[i]!.num_children ?? 0;
    i++;
    for (let c = 0; c < n; c++) skip();
  };
  while (i < schema.length) {
    names.push(schema[i]!.name);
    skip();
  }
  return names;
}

async function jsonToJsonl(file: string, label: string, write: Write): Promise<number> {
  const probe = await open(file, 'r');
  const { buffer, bytesRead } = await probe.read(Buffer.alloc(4096), 0, 4096, 0).finally(() => probe.close());
  let rows = 0;
  if (buffer.subarray(0, bytesRead).toString('utf8').trimStart().startsWith('[')) {
    // A JSON array of records (the whole file is one value).
    let items: unknown;
    try {
      items = JSON.parse(await readFile(file, 'utf8'));
    } catch (err) {
      throw new DatasetRowsError(`${label}: not valid JSON (${(err as Error).message}).`);
    }
    if (!Array.isArray(items)) throw new DatasetRowsError(`${label}: expected a JSON array of records.`);
    for (const item of items as unknown[]) {
      await write(JSON.stringify(item));
      rows++;
    }
    return rows;
  }
  for await (const line of readJsonl(file)) {
    if (line.row === null) throw new DatasetRowsError(`${label} line ${line.lineNo}: ${line.problem}.`);
    await write(line.text.trim());
    rows++;
  }
  return rows;
}

export interface SplitRequest {
  repoId: string;
  split: string;
  /** Absolute path of the JSONL to write. */
  target: string;
  settings: HubSettings;
  revision?: string;
  backoffMs?: number;
  idleTimeoutMs?: number;
  /** Called before each file's download, to show progress. */
  onFile?: (path: string) => { onProgress: (done: number, total: number) => void; note: (line: string) => void; stop: () => void };
}

export interface SplitResult {
  files: string[];
  rows: number;
  /** The downloads, one per file. */
  downloads: DownloadResult[];
}

/** Lists the repo's files (every folder). */
export async function listRepoFiles(repoId: string, settings: HubSettings, revision = 'main'): Promise<string[]> {
  const hub = await import('@huggingface/hub');
  const ctx: HubContext = { hubUrl: settings.hubUrl, repoId, action: 'download', hasToken: settings.token !== undefined };
  const paths: string[] = [];
  try {
    for await (const entry of hub.listFiles({
      repo: { type: 'dataset', name: repoId },
      recursive: true,
      revision,
      hubUrl: settings.hubUrl,
      accessToken: settings.token,
      fetch: fetchWithLimit(30_000),
    })) {
      if (entry.type === 'file') paths.push(entry.path);
    }
  } catch (err) {
    throw hubFailure(err, ctx);
  }
  return paths.sort();
}

/** Downloads the split's files and writes them as one JSONL at `target`. */
export async function downloadSplit(req: SplitRequest): Promise<SplitResult> {
  const all = await listRepoFiles(req.repoId, req.settings, req.revision);
  const files = splitDataFiles(all, req.split);
  if (files.length === 0) {
    const shown = all.length > 20 ? `${all.slice(0, 20).join(', ')}, … (${all.length} files)` : all.join(', ') || 'no files';
    throw new HubError(
      `${req.repoId} has no data file for the ${JSON.stringify(req.split)} split (looked for data/${req.split}-*.parquet, ${req.split}.jsonl, ${req.split}.json, ` +
        `data/${req.split}.jsonl and a ${req.split}/ folder); the repo has: ${shown}. Set huggingface_identifier.artifact_fpath to the file that holds the rows ` +
        `(see ${datasetPageUrl(req.settings.hubUrl, req.repoId)}).`,
    );
  }
  const shardDir = `${req.target}.shards`;
  mkdirSync(shardDir, { recursive: true });
  const downloads: DownloadResult[] = [];
  const local: string[] = [];
  for (const [i, path] of files.entries()) {
    const file = join(shardDir, `${String(i).padStart(5, '0')}-${basename(path)}`);
    const show = req.onFile?.(path);
    try {
      downloads.push(
        await downloadHubFile({
          repoId: req.repoId,
          path,
          target: file,
          settings: req.settings,
          revision: req.revision,
          backoffMs: req.backoffMs,
          idleTimeoutMs: req.idleTimeoutMs,
          onProgress: show?.onProgress,
          note: show?.note,
        }),
      );
    } finally {
      show?.stop();
    }
    local.push(file);
  }

  // Every file is here (a download that broke keeps its bytes in .shards/ for the next run).
  let rows = 0;
  try {
    await writeStreamAtomic(req.target, async (out) => {
      let pending: string[] = [];
      let size = 0;
      const flush = async () => {
        if (pending.length === 0) return;
        const text = pending.join('');
        pending = [];
        size = 0;
        if (!out.write(text)) await once(out, 'drain');
      };
      const write: Write = async (line) => {
        pending.push(`${line}\n`);
        size += line.length;
        if (size > 1 << 20) await flush();
      };
      for (const [i, file] of local.entries()) {
        const label = `${req.repoId}/${files[i]}`;
        rows += files[i]!.endsWith('.parquet') ? await parquetToJsonl(file, label, write) : await jsonToJsonl(file, label, write);
      }
      await flush();
    });
  } catch (err) {
    rmSync(shardDir, { recursive: true, force: true });
    throw err;
  }
  if (existsSync(shardDir)) rmSync(shardDir, { recursive: true, force: true });
  return { files, rows, downloads };
}
