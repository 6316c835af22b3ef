/**
 * tau2-bench's retail data (db.json, tasks.json, policy.md, split_tasks.json; MIT) is not part of
 * this repository. It is read from the first folder that holds all four files:
 *   1. the server config key `data_dir`;
 *   2. `$NEMO_GYM_TAU2_RETAIL_DIR`;
 *   3. `resources_servers/tau2/data/retail`;
 *   4. `~/.cache/nemo_gym/tau2/retail`.
 * When none does, the files are downloaded once from tau2-bench's repository at a pinned commit
 * into the first writable of 3 and 4, each checked against its SHA-256 before it is used.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { downloadChecked } from '@nemo-gym/core/data';
import { ConfigError } from '@nemo-gym/core/errors';
import { writeFileAtomic } from '@nemo-gym/core/files';
import { parseDbJson, RetailDataError, type RetailRecords } from './db.js';
import { parseTasks, type Task } from './task.js';

/** The tau2-bench commit the data (and this port's tools and evaluator) follow. */
export const TAU2_COMMIT = 'a2c024725189473d2d7cea3a5cfdbcc67478e41f';

export const DEFAULT_DATA_URL = `https://raw.githubusercontent.com/sierra-research/tau2-bench/${TAU2_COMMIT}/data/tau2/domains/retail`;

export const DATA_FILES = {
  db: { path: 'db.json', sha256: '413a65160adbdb5fde0ffc0015c49b6d70250b10c18128de169b597af7766765', size: 2811616 },
  tasks: { path: 'tasks.json', sha256: '8e03ebce7901bd6218e7a7dc3105faa9324091a68058f7fe61c65262868812e8', size: 345982 },
  policy: { path: 'policy.md', sha256: '2c9652afbce57d6e087768d37cda64d31c53d50b3e3225cfdb791bac66466467', size: 6699 },
  splits: { path: 'split_tasks.json', sha256: 'ed0580ec52575b63fbf76568af42490da6ee7783ecb4aa81af46961291358f20', size: 3263 },
} as const;

/** tau2's user simulator guidelines (for a user without tools), for rows' `user_system_prompt`. */
export const USER_GUIDELINES = {
  url: `https://raw.githubusercontent.com/sierra-research/tau2-bench/${TAU2_COMMIT}/data/tau2/user_simulator/simulation_guidelines.md`,
  sha256: '740a29dfa64d7bc08eea3bf7493575b914a63f744acbaf7f199ee07eddaf72d3',
  size: 1449,
} as const;

export interface RetailData {
  /** The folder the files were read from. */
  dir: string;
  records: RetailRecords;
  tasks: Task[];
  policy: string;
  /** split name (train, test, base) → task ids. */
  splits: Map<string, string[]>;
}

const serverDir = resolve(dirname(fileURLToPath(import.meta.url)), import.meta.url.includes('/dist/') ? '../..' : '..');

export interface LoadOptions {
  dataDir?: string | null;
  env?: NodeJS.ProcessEnv;
  /** The last two folders searched, also the download targets (default: the server's data/retail, then the user cache). */
  defaultDirs?: string[];
  /** Where to download from; `false` disables downloading. */
  downloadUrl?: string | false;
  downloadTimeoutMs?: number;
  log?: (msg: string) => void;
}

export function searchDirs(options: LoadOptions = {}): string[] {
  const env = options.env ?? process.env;
  const dirs: string[] = [];
  if (options.dataDir) dirs.push(resolve(options.dataDir));
  if (env.NEMO_GYM_TAU2_RETAIL_DIR) dirs.push(resolve(env.NEMO_GYM_TAU2_RETAIL_DIR));
  dirs.push(...(options.defaultDirs ?? [join(serverDir, 'data', 'retail'), join(homedir(), '.cache', 'nemo_gym', 'tau2', 'retail')]));
  return dirs;
}

const hasAll = (dir: string) => Object.values(DATA_FILES).every((f) => existsSync(join(dir, f.path)));
const sha256 = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

/** Reads the four files from `dir`, each checked against its SHA-256. */
export function readDataDir(dir: string): RetailData {
  const text = {} as Record<keyof typeof DATA_FILES, string>;
  for (const [key, f] of Object.entries(DATA_FILES) as [keyof typeof DATA_FILES, (typeof DATA_FILES)[keyof typeof DATA_FILES]][]) {
    const file = join(dir, f.path);
    const buf = readFileSync(file);
    const got = sha256(buf);
    if (got !== f.sha256) {
      throw new ConfigError(
        `${file} is not tau2-bench's retail ${f.path} at commit ${TAU2_COMMIT} (SHA-256 ${got}, expected ${f.sha256}). ` +
          `Replace it with ${DEFAULT_DATA_URL}/${f.path}, or point data_dir at a folder with those files.`,
      );
    }
    text[key] = buf.toString('utf8');
  }
  try {
    const splits = JSON.parse(text.splits) as Record<string, string[]>;
    return { dir, records: parseDbJson(text.db), tasks: parseTasks(JSON.parse(text.tasks)), policy: text.policy, splits: new Map(Object.entries(splits)) };
  } catch (e) {
    if (e instanceof RetailDataError) throw new ConfigError(`${dir}: ${e.message}`);
    throw e;
  }
}

function missingMessage(dirs: string[], why: string): string {
  return (
    `The tau2-bench retail data was not found and could not be downloaded (${why}).\n` +
    `Needed files (tau2-bench, data/tau2/domains/retail, MIT): ${Object.values(DATA_FILES)
      .map((f) => f.path)
      .join(', ')}\n` +
    `Put them in one of these folders (or set the server config key data_dir to a folder that has them):\n` +
    dirs.map((d) => `  ${d}`).join('\n') +
    `\nThey can be fetched from ${DEFAULT_DATA_URL}/<file>.`
  );
}

/** Finds the data (downloading it on first use) and reads it. */
export async function loadRetailData(options: LoadOptions = {}): Promise<RetailData> {
  if (options.dataDir && !hasAll(resolve(options.dataDir))) {
    const missing = Object.values(DATA_FILES)
      .filter((f) => !existsSync(join(resolve(options.dataDir!), f.path)))
      .map((f) => f.path);
    throw new ConfigError(`data_dir = ${resolve(options.dataDir)} does not hold ${missing.join(', ')}. Copy them there from ${DEFAULT_DATA_URL}/, or remove data_dir to download them automatically.`);
  }
  const dirs = searchDirs(options);
  const found = dirs.find(hasAll);
  if (found) return readDataDir(found);
  if (options.downloadUrl === false) throw new ConfigError(missingMessage(dirs, 'downloading is disabled'));
  const base = options.downloadUrl ?? DEFAULT_DATA_URL;
  const log = options.log ?? (() => {});
  const targets = options.defaultDirs ?? dirs.slice(-2);
  let why = 'no writable folder';
  for (const target of targets) {
    try {
      log(`tau2 retail data not found locally: downloading ${Object.keys(DATA_FILES).length} files from ${base} into ${target}`);
      const fetched: [string, Buffer][] = [];
      for (const f of Object.values(DATA_FILES)) fetched.push([f.path, await downloadChecked(`${base}/${f.path}`, f, { timeoutMs: options.downloadTimeoutMs ?? 120_000 })]);
      // written only once every file arrived intact
      for (const [path, buf] of fetched) writeFileAtomic(join(target, path), buf);
      log(`tau2 retail data saved in ${target}`);
      return readDataDir(target);
    } catch (e) {
      why = (e as Error).message;
      if (!/EACCES|EROFS|EPERM/.test(why)) break;
    }
  }
  throw new ConfigError(missingMessage(dirs, why));
}
