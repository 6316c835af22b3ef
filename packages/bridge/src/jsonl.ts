/**
 * Writing JSON lines to a file with back-pressure: memory stays bounded however fast rows come.
 * The lines go to a temporary file beside the output, which `close()` renames into place
 * (core/files AtomicFile) and `abort()` removes: the output holds its previous content or the
 * complete new one, never a part.
 */
import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import { AtomicFile, fileError } from '@nemo-gym/core/files';

export class JsonlSink {
  private readonly file: AtomicFile;
  private readonly stream: WriteStream;
  private failure: Error | undefined;
  rows = 0;

  /** `tag`: a word in the temporary file's name, for a second temporary file of the same output. */
  constructor(
    readonly path: string,
    options: { tag?: string } = {},
  ) {
    this.file = new AtomicFile(path, options);
    // Opened here, not by the stream later: an abort right away leaves no file to be made after it.
    let fd: number;
    try {
      fd = openSync(this.file.tmpPath, 'w');
    } catch (err) {
      this.file.discard();
      throw fileError('write', path, err);
    }
    this.stream = createWriteStream(this.file.tmpPath, { fd, highWaterMark: 1 << 20 });
    this.stream.on('error', (err) => {
      this.failure ??= fileError('write', path, err, `${path} keeps what it held before.`);
    });
  }

  /** The temporary file the lines go to until `close()`. */
  get tmpPath(): string {
    return this.file.tmpPath;
  }

  async write(record: unknown): Promise<void> {
    if (this.failure) throw this.failure;
    this.rows++;
    if (!this.stream.write(`${JSON.stringify(record)}\n`)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.stream.off('drain', done);
          this.stream.off('error', done);
          resolve();
        };
        this.stream.on('drain', done);
        this.stream.on('error', done);
      });
      if (this.failure) throw this.failure;
    }
  }

  /** Ends the lines and leaves them in the temporary file (for a caller that reads them back, then aborts). */
  async end(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.stream.writableEnded) return;
    await new Promise<void>((resolve, reject) => this.stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
    if (this.failure) throw this.failure;
  }

  /** Ends the lines and puts the file in place. */
  async close(): Promise<void> {
    try {
      await this.end();
      this.file.commit();
    } catch (err) {
      this.abort();
      throw this.failure ?? (err instanceof Error && 'syscall' in err ? fileError('write', this.path, err, `${this.path} keeps what it held before.`) : err);
    }
  }

  /** Drops what was written; the output keeps what it held before. */
  abort(): void {
    this.stream.destroy();
    this.file.discard();
  }
}
