/**
 * The WorkBench tables (five CSV files and the company address list) are upstream's data
 * (Apache 2.0) and are not part of this repository. They are looked up in:
 *   1. the server config key `csv_data_dir`;
 *   2. `$NEMO_GYM_WORKBENCH_CSV_DIR`;
 *   3. `resources_servers/workbench/csv_data` (where upstream keeps them);
 *   4. `~/.cache/nemo_gym/workbench/csv_data`.
 * When none holds all six files, they are downloaded once from the publisher (upstream's
 * repository at a fixed commit) into the first writable of 3 and 4, each checked against its
 * SHA-256 before it is used.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { downloadChecked } from '@nemo-gym/core/data';
import { ConfigError } from '@nemo-gym/core/errors';
import { writeFileAtomic } from '@nemo-gym/core/files';
import { Table } from './table.js';
import type { Value } from './py.js';

export const DATA_FILES = {
  emails: { path: 'processed/emails.csv', sha256: '1809e341a0e4f1fd78cf1b759964a42abd28db8c9b9dca364456efc31f82bb31' },
  calendar: { path: 'processed/calendar_events.csv', sha256: '6c9df1872d54d0b0d068d1b066766a8ddbc29c3933f1d56c9efd554926312295' },
  analytics: { path: 'processed/analytics_data.csv', sha256: '4a0df10aabc07980f1cc074dc9ab36406ce98dead7e14fe11f72a9f1ba788688' },
  projectTasks: { path: 'processed/project_tasks.csv', sha256: 'fa0c05d5609f49e905342bd12592b09f23eff6147dcf607b808703f45ddbeaeb' },
  crm: { path: 'processed/customer_relationship_manager_data.csv', sha256: '599057e4eec3a7c25ac04b4d655ea2c034b7b7782205dc367a28122756e04c41' },
  addresses: { path: 'raw/email_addresses.csv', sha256: '1f3465b92eb41b90a973a9b00f35757a23d16839652b5e352e9d217d8e404b0b' },
} as const;

export type DataFileKey = keyof typeof DATA_FILES;

/** Upstream's files at the commit this port follows. */
export const DEFAULT_CSV_DATA_URL =
  'https://raw.githubusercontent.com/NVIDIA-NeMo/Gym/818984b8ef3ffa8046b7c8179e3bcb4105668565/resources_servers/workbench/csv_data';

/** The tables every fresh environment starts from. */
export interface WorkbenchData {
  emails: Table;
  calendar: Table;
  analytics: Table;
  projectTasks: Table;
  crm: Table;
  /** The company directory (one column, `email_address`). */
  addresses: Table;
}

/** pandas' default NA strings: such a cell is read as NaN even with `dtype=str`. */
const NA_STRINGS = new Set([
  '', '#N/A', '#N/A N/A', '#NA', '-1.#IND', '-1.#QNAN', '-NaN', '-nan', '1.#IND', '1.#QNAN', '<NA>', 'N/A', 'NA', 'NULL', 'NaN', 'None', 'n/a', 'nan', 'null',
]);

/** CSV rows (RFC 4180 quoting, `""` escapes, blank lines skipped), as `pd.read_csv` splits them. */
export function parseCsvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let any = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += ch;
      continue;
    }
    if (ch === '"') {
      quoted = true;
      any = true;
    } else if (ch === ',') {
      row.push(field);
      field = '';
      any = true;
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      if (any || field.length > 0) {
        row.push(field);
        rows.push(row);
      }
      row = [];
      field = '';
      any = false;
    } else {
      field += ch;
      any = true;
    }
  }
  if (any || field.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

function cell(s: string | undefined): Value {
  return s === undefined || NA_STRINGS.has(s) ? null : s;
}

/** `pd.read_csv(text, dtype=str)`. */
export function readCsv(text: string): Table {
  const [header, ...body] = parseCsvRows(text);
  if (!header) return Table.empty([]);
  return Table.fromColumns(
    header,
    header.map((_, c) => body.map((r) => cell(r[c]))),
  );
}

/** `pd.read_csv(text, header=None, names=[name])`. */
export function readHeaderless(text: string, name: string): Table {
  return Table.fromColumns([name], [parseCsvRows(text).map((r) => cell(r[0]))]);
}

/** The tables from the six files' text (the analytics `user_engaged` column becomes a bool). */
export function tablesFromText(text: Record<DataFileKey, string>): WorkbenchData {
  let analytics = readCsv(text.analytics);
  analytics = analytics.withColumn(
    'user_engaged',
    analytics.column('user_engaged').map((v) => v === 'True'),
  );
  return {
    emails: readCsv(text.emails),
    calendar: readCsv(text.calendar),
    analytics,
    projectTasks: readCsv(text.projectTasks),
    crm: readCsv(text.crm),
    addresses: readHeaderless(text.addresses, 'email_address'),
  };
}

const serverDir = resolve(dirname(fileURLToPath(import.meta.url)), import.meta.url.includes('/dist/') ? '../..' : '..');

export interface LocateOptions {
  csvDataDir?: string | null;
  env?: NodeJS.ProcessEnv;
  /** The last two places searched and the download targets (default: the server folder's csv_data, then the user cache). */
  defaultDirs?: string[];
}

/** The folders searched, in order. */
export function searchDirs(options: LocateOptions = {}): string[] {
  const env = options.env ?? process.env;
  const dirs: string[] = [];
  if (options.csvDataDir) dirs.push(resolve(options.csvDataDir));
  if (env.NEMO_GYM_WORKBENCH_CSV_DIR) dirs.push(resolve(env.NEMO_GYM_WORKBENCH_CSV_DIR));
  dirs.push(...(options.defaultDirs ?? [join(serverDir, 'csv_data'), join(homedir(), '.cache', 'nemo_gym', 'workbench', 'csv_data')]));
  return dirs;
}

function hasAll(dir: string): boolean {
  return Object.values(DATA_FILES).every((f) => existsSync(join(dir, f.path)));
}

function sha256(buf: Buffer): string {
  return createHash('sha256').update(buf).digest('hex');
}

function missingFilesMessage(dirs: string[], why: string): string {
  const files = Object.values(DATA_FILES)
    .map((f) => `  ${f.path}`)
    .join('\n');
  return (
    `The WorkBench data files were not found and could not be downloaded (${why}).\n` +
    `Needed files (from NVIDIA NeMo Gym, resources_servers/workbench/csv_data, Apache 2.0):\n${files}\n` +
    `Put them under one of these folders (or set the server config key csv_data_dir to a folder that has them):\n` +
    dirs.map((d) => `  ${d}`).join('\n') +
    `\nThey can be fetched from ${DEFAULT_CSV_DATA_URL}/<file>.`
  );
}

export interface LoadOptions extends LocateOptions {
  /** Where to download from (default: upstream's repository); `false` disables downloading. */
  downloadUrl?: string | false;
  /** Per-file download time limit. */
  downloadTimeoutMs?: number;
  log?: (msg: string) => void;
}

/** Reads the six files from `dir`, checking each against its checksum. */
export function readDataDir(dir: string, verifyChecksums = true): WorkbenchData {
  const text = {} as Record<DataFileKey, string>;
  for (const [key, f] of Object.entries(DATA_FILES) as [DataFileKey, (typeof DATA_FILES)[DataFileKey]][]) {
    const file = join(dir, f.path);
    const buf = readFileSync(file);
    if (verifyChecksums && sha256(buf) !== f.sha256) {
      throw new ConfigError(
        `${file} is not upstream's ${f.path} (SHA-256 ${sha256(buf)}, expected ${f.sha256}). ` +
          `Replace it with the file from ${DEFAULT_CSV_DATA_URL}/${f.path}, or point csv_data_dir at a folder with the original files.`,
      );
    }
    text[key] = buf.toString('utf8');
  }
  return tablesFromText(text);
}

/** Finds the folder with the data (downloading it on first use) and returns it with the tables. */
export async function loadWorkbenchData(options: LoadOptions = {}): Promise<{ dir: string; data: WorkbenchData }> {
  const dirs = searchDirs(options);
  if (options.csvDataDir && !hasAll(resolve(options.csvDataDir))) {
    const missing = Object.values(DATA_FILES)
      .filter((f) => !existsSync(join(resolve(options.csvDataDir!), f.path)))
      .map((f) => f.path);
    throw new ConfigError(
      `csv_data_dir = ${resolve(options.csvDataDir)} does not hold the WorkBench files ${missing.join(', ')}. ` +
        `Copy them there from ${DEFAULT_CSV_DATA_URL}/, or remove csv_data_dir to download them automatically.`,
    );
  }
  const found = dirs.find(hasAll);
  if (found) return { dir: found, data: readDataDir(found) };
  if (options.downloadUrl === false) throw new ConfigError(missingFilesMessage(dirs, 'downloading is disabled'));
  const base = options.downloadUrl ?? DEFAULT_CSV_DATA_URL;
  const targets = options.defaultDirs ?? dirs.slice(-2);
  let lastWhy = 'no writable folder';
  for (const target of targets) {
    try {
      await download(base, target, options);
      return { dir: target, data: readDataDir(target) };
    } catch (e) {
      lastWhy = (e as Error).message;
      if (!/EACCES|EROFS|EPERM/.test(lastWhy)) break;
    }
  }
  throw new ConfigError(missingFilesMessage(dirs, lastWhy));
}

async function download(base: string, target: string, options: LoadOptions): Promise<void> {
  const log = options.log ?? (() => {});
  log(`WorkBench data not found locally: downloading ${Object.keys(DATA_FILES).length} files from ${base} into ${target}`);
  const fetched: [string, Buffer][] = [];
  for (const f of Object.values(DATA_FILES)) {
    fetched.push([f.path, await downloadChecked(`${base}/${f.path}`, f, { timeoutMs: options.downloadTimeoutMs ?? 60_000 })]);
  }
  // write only once every file arrived intact
  for (const [path, buf] of fetched) {
    writeFileAtomic(join(target, path), buf);
  }
  log(`WorkBench data saved in ${target}`);
}
