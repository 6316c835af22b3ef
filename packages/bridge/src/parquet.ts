/**
 * Parquet output through hyparquet-writer (pure JavaScript, one dependency, no native build):
 * records are buffered into row groups of bounded size and each group is written as soon as it
 * is full, so memory follows the row group, not the file. Nested columns (lists of token ids,
 * lists of messages) are real Parquet LIST / struct columns, as pandas and datasets read them.
 * The file is written beside the output under a temporary name and renamed into place by
 * `close()` (core/files AtomicFile): an interrupted export never leaves a file without its footer.
 */
import { AtomicFile, fileError } from '@nemo-gym/core/files';
import { fileWriter, ParquetWriter } from 'hyparquet-writer';
import type { Json } from './rows.js';

export type ParquetType =
  | { kind: 'int32' }
  | { kind: 'double' }
  | { kind: 'string' }
  | { kind: 'list'; of: ParquetType }
  | { kind: 'struct'; fields: [string, ParquetType][] };

export const INT32: ParquetType = { kind: 'int32' };
export const DOUBLE: ParquetType = { kind: 'double' };
export const STRING: ParquetType = { kind: 'string' };
export const listOf = (of: ParquetType): ParquetType => ({ kind: 'list', of });
export const struct = (fields: [string, ParquetType][]): ParquetType => ({ kind: 'struct', fields });

export type ParquetColumns = [string, ParquetType][];

type SchemaElement = Record<string, unknown>;

function elements(name: string, t: ParquetType, required: boolean): SchemaElement[] {
  const repetition_type = required ? 'REQUIRED' : 'OPTIONAL';
  switch (t.kind) {
    case 'int32':
      return [{ name, type: 'INT32', repetition_type }];
    case 'double':
      return [{ name, type: 'DOUBLE', repetition_type }];
    case 'string':
      return [{ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type }];
    case 'list':
      return [
        { name, repetition_type, converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        ...elements('element', t.of, true),
      ];
    case 'struct':
      return [{ name, repetition_type, num_children: t.fields.length }, ...t.fields.flatMap(([n, f]) => elements(n, f, false))];
  }
}

export function parquetSchema(columns: ParquetColumns): SchemaElement[] {
  return [{ name: 'root', num_children: columns.length }, ...columns.flatMap(([n, t]) => elements(n, t, false))];
}

/** A JSON value shaped to a Parquet type: missing fields become null, non-string text becomes JSON text. */
export function conform(v: unknown, t: ParquetType): unknown {
  if (v === undefined || v === null) return null;
  switch (t.kind) {
    case 'int32':
      return typeof v === 'number' && Number.isInteger(v) ? v : null;
    case 'double':
      return typeof v === 'number' ? v : null;
    case 'string':
      return typeof v === 'string' ? v : JSON.stringify(v);
    case 'list':
      if (!Array.isArray(v)) return null;
      return t.of.kind === 'int32' || t.of.kind === 'double' ? v : v.map((x) => conform(x, t.of));
    case 'struct': {
      if (typeof v !== 'object' || Array.isArray(v)) return null;
      const out: Json = {};
      for (const [n, f] of t.fields) out[n] = conform((v as Json)[n], f);
      return out;
    }
  }
}

/** Rough in-memory weight of a record, to cut row groups by size as well as by rows. */
function weight(v: unknown): number {
  if (Array.isArray(v)) {
    let w = 8;
    for (const x of v) w += typeof x === 'number' ? 8 : weight(x);
    return w;
  }
  if (typeof v === 'string') return v.length * 2 + 8;
  if (v && typeof v === 'object') {
    let w = 16;
    for (const x of Object.values(v)) w += weight(x);
    return w;
  }
  return 8;
}

export interface ParquetSinkOptions {
  /** Rows per row group at most (default 10,000). */
  maxRows?: number;
  /** Estimated in-memory bytes per row group at most (default 2 MB; encoding takes several times this). */
  maxBytes?: number;
}

export class ParquetSink {
  private readonly file: AtomicFile;
  private readonly writer: ParquetWriter;
  private buffer: Json[] = [];
  private bytes = 0;
  private readonly maxRows: number;
  private readonly maxBytes: number;
  rows = 0;

  constructor(
    readonly path: string,
    private readonly columns: ParquetColumns,
    options: ParquetSinkOptions = {},
  ) {
    this.maxRows = options.maxRows ?? 10_000;
    this.maxBytes = options.maxBytes ?? 2 * 1024 * 1024;
    this.file = new AtomicFile(path);
    try {
      this.writer = new ParquetWriter({
        writer: fileWriter(this.file.tmpPath),
        schema: parquetSchema(columns) as never,
        createdBy: 'nemo-gym-ts ng-export (hyparquet-writer)',
      });
    } catch (err) {
      this.file.discard();
      throw this.failed(err);
    }
  }

  /** A write error of the temporary file, worded for the output it stands for. */
  private failed(err: unknown): unknown {
    return err instanceof Error && 'syscall' in err ? fileError('write', this.path, err, `${this.path} keeps what it held before.`) : err;
  }

  async write(record: Json): Promise<void> {
    const row: Json = {};
    for (const [n, t] of this.columns) row[n] = conform(record[n], t);
    this.buffer.push(row);
    this.bytes += weight(row);
    this.rows++;
    if (this.buffer.length >= this.maxRows || this.bytes >= this.maxBytes) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.buffer.length === 0) return;
    const rows = this.buffer;
    this.buffer = [];
    this.bytes = 0;
    // Token ids and log-probs have no useful dictionary or min/max: plain pages, no statistics
    // (trying a dictionary and computing statistics on millions of values costs time and memory).
    const columnData = this.columns.map(([name, t]) => ({
      name,
      data: rows.map((r) => r[name]),
      ...(t.kind === 'list' && (t.of.kind === 'int32' || t.of.kind === 'double') ? { encoding: 'PLAIN', statistics: false } : {}),
    }));
    try {
      await this.writer.write({ columnData: columnData as never, rowGroupSize: rows.length });
    } catch (err) {
      throw this.failed(err);
    }
  }

  /** Writes the last row group and the footer, and puts the file in place. */
  async close(): Promise<void> {
    try {
      await this.flush();
      await this.writer.finish();
      this.file.commit();
    } catch (err) {
      this.file.discard();
      throw this.failed(err);
    }
  }

  /** Drops what was written; the output keeps what it held before. */
  abort(): void {
    this.file.discard();
  }
}
