/**
 * Writes rollout rows from tau2's retail tasks.json (one row per task of a split) for
 * ng-collect-rollouts and ng-prepare-data:
 *
 *   node resources_servers/tau2/dist/prepare.js [--split train|test|base] [--out <file>] [--data-dir <folder>]
 *        [--user-guidelines <file> | --user-guidelines download]
 *
 * Defaults: both splits, into resources_servers/tau2/data/train.jsonl (split train) and
 * data/validation.jsonl (split test), the datasets the config names. The data is found (or
 * downloaded) as the server finds it. With `--user-guidelines` (a file, or `download`: tau2's
 * simulation_guidelines.md at the pinned commit, SHA-256 checked) rows also carry
 * `user_system_prompt`, tau2's whole user simulator prompt.
 */
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { downloadChecked } from '@nemo-gym/core/data';
import { UsageError } from '@nemo-gym/core/errors';
import { loadRetailData, USER_GUIDELINES, type RetailData } from './src/data.js';
import { taskRow } from './src/rows.js';

const serverDir = resolve(dirname(fileURLToPath(import.meta.url)), import.meta.url.includes('/dist/') ? '..' : '.');

/** The rows of one split, as JSONL text. */
export function splitRows(data: RetailData, split: string, userGuidelines?: string): string {
  const ids = data.splits.get(split);
  if (!ids) throw new UsageError(`split ${JSON.stringify(split)} is not in split_tasks.json (it has ${[...data.splits.keys()].join(', ')})`);
  const wanted = new Set(ids);
  return data.tasks
    .filter((t) => wanted.has(t.id))
    .map((t) => `${JSON.stringify(taskRow(t, data.policy, userGuidelines === undefined ? {} : { userGuidelines }))}\n`)
    .join('');
}

interface Args {
  split: string | null;
  out: string | null;
  dataDir: string | null;
  userGuidelines: string | null;
}

function parseArgs(argv: string[]): Args {
  const out: Args = { split: null, out: null, dataDir: null, userGuidelines: null };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined || !['--split', '--out', '--data-dir', '--user-guidelines'].includes(flag!)) {
      throw new UsageError(`usage: prepare.js [--split train|test|base] [--out <file>] [--data-dir <folder>] [--user-guidelines <file>|download] (got ${JSON.stringify(flag)})`);
    }
    if (flag === '--split') out.split = value;
    else if (flag === '--out') out.out = value;
    else if (flag === '--data-dir') out.dataDir = value;
    else out.userGuidelines = value;
    i++;
  }
  return out;
}

export async function main(argv: string[]): Promise<string[]> {
  const args = parseArgs(argv);
  if (args.out && !args.split) throw new UsageError('--out needs --split (without --split both splits are written to data/train.jsonl and data/validation.jsonl)');
  const data = await loadRetailData({ dataDir: args.dataDir, log: (m) => process.stderr.write(`${m}\n`) });
  const guidelines =
    args.userGuidelines === null ? undefined : args.userGuidelines === 'download' ? (await downloadChecked(USER_GUIDELINES.url, USER_GUIDELINES)).toString('utf8') : readFileSync(args.userGuidelines, 'utf8');
  const jobs: [string, string][] = args.split
    ? [[args.split, args.out ?? join(serverDir, 'data', `${args.split}.jsonl`)]]
    : [
        ['train', join(serverDir, 'data', 'train.jsonl')],
        ['test', join(serverDir, 'data', 'validation.jsonl')],
      ];
  const written: string[] = [];
  for (const [split, file] of jobs) {
    const text = splitRows(data, split, guidelines);
    mkdirSync(dirname(resolve(file)), { recursive: true });
    writeFileSync(file, text);
    written.push(`${file}: ${text.split('\n').length - 1} rows (split ${split})`);
  }
  return written;
}

const entry = process.argv[1];
if (entry && realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url))) {
  main(process.argv.slice(2)).then(
    (lines) => lines.forEach((l) => console.log(l)),
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
