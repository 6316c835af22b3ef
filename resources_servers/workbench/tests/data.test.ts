/** Finding, downloading and reading upstream's data files. */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DATA_FILES, loadWorkbenchData, parseCsvRows, readCsv } from '../src/data.js';
import { CSV_DIR, HAVE_DATA } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'workbench-data-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function serve(handler: (path: string) => Buffer | null): Promise<{ url: string; hits: string[]; server: Server }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const body = handler(req.url ?? '');
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/csv_data`, hits, server };
}

describe('CSV reading as pandas does', () => {
  it('quotes, doubled quotes, embedded newlines and commas, CRLF, blank lines', () => {
    expect(parseCsvRows('a,b\r\n"x, y","say ""hi"""\n\n"multi\nline",\n')).toEqual([['a', 'b'], ['x, y', 'say "hi"'], ['multi\nline', '']]);
  });
  it('empty cells and pandas NA strings are missing even with dtype=str', () => {
    const t = readCsv('a,b,c\n,NA,x\nnull,None,n/a\n');
    expect(t.records()).toEqual([{ a: null, b: null, c: 'x' }, { a: null, b: null, c: null }]);
  });
});

describe.skipIf(!HAVE_DATA)('locating and downloading the data', () => {
  it('reads csv_data_dir and checks the files', async () => {
    const { dir, data } = await loadWorkbenchData({ csvDataDir: CSV_DIR, downloadUrl: false });
    expect(dir).toBe(CSV_DIR);
    expect([data.emails.length, data.calendar.length, data.analytics.length, data.projectTasks.length, data.crm.length, data.addresses.length]).toEqual([500, 300, 1000, 300, 200, 20]);
    expect(data.analytics.column('user_engaged').every((v) => typeof v === 'boolean')).toBe(true);
    expect(data.crm.column('customer_phone').filter((v) => v === null)).toHaveLength(100);
  });

  it('downloads once from the publisher, checks every checksum, then reads from disk', async () => {
    const { url, hits, server } = await serve((path) => {
      const rel = path.replace('/csv_data/', '');
      const f = join(CSV_DIR, rel);
      return existsSync(f) ? readFileSync(f) : null;
    });
    try {
      const target = join(tmp, 'dl');
      const logs: string[] = [];
      const first = await loadWorkbenchData({ downloadUrl: url, defaultDirs: [target], env: {}, log: (m) => logs.push(m) });
      expect(first.dir).toBe(target);
      expect(hits).toHaveLength(6);
      expect(logs[0]).toMatch(/downloading 6 files from http:\/\/127\.0\.0\.1/);
      for (const f of Object.values(DATA_FILES)) expect(readFileSync(join(target, f.path))).toEqual(readFileSync(join(CSV_DIR, f.path)));
      const second = await loadWorkbenchData({ downloadUrl: url, defaultDirs: [target], env: {} });
      expect(hits).toHaveLength(6);
      expect(second.data.emails.records()).toEqual(first.data.emails.records());
    } finally {
      server.close();
    }
  });

  it('a file that does not match its checksum is refused and nothing is written', async () => {
    const { url, server } = await serve((path) => {
      const rel = path.replace('/csv_data/', '');
      if (rel.endsWith('emails.csv')) return Buffer.from('email_id\n1\n');
      const f = join(CSV_DIR, rel);
      return existsSync(f) ? readFileSync(f) : null;
    });
    try {
      const target = join(tmp, 'tampered');
      await expect(loadWorkbenchData({ downloadUrl: url, defaultDirs: [target], env: {} })).rejects.toThrow(/emails\.csv: SHA-256 \w+ does not match/);
      expect(existsSync(join(target, 'processed'))).toBe(false);
    } finally {
      server.close();
    }
  });

  it('offline: the error names the six files and where to put them', async () => {
    const target = join(tmp, 'offline');
    // a closed port on 127.0.0.1 stands for "no network"
    const err = await loadWorkbenchData({ downloadUrl: 'http://127.0.0.1:9/csv_data', defaultDirs: [target], env: {} }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    const msg = (err as Error).message;
    for (const f of Object.values(DATA_FILES)) expect(msg).toContain(f.path);
    expect(msg).toContain(target);
    expect(msg).toContain('csv_data_dir');
    expect(msg).toContain('raw.githubusercontent.com/NVIDIA-NeMo/Gym');
  });

  it('csv_data_dir without the files is a clear config error; a changed local file is refused', async () => {
    await expect(loadWorkbenchData({ csvDataDir: join(tmp, 'empty'), downloadUrl: false })).rejects.toThrow(/does not hold the WorkBench files processed\/emails\.csv/);
    const copy = join(tmp, 'copy');
    cpSync(CSV_DIR, copy, { recursive: true });
    writeFileSync(join(copy, 'processed/project_tasks.csv'), 'task_id\n');
    await expect(loadWorkbenchData({ csvDataDir: copy, downloadUrl: false })).rejects.toThrow(/project_tasks\.csv is not upstream's/);
  });
});
