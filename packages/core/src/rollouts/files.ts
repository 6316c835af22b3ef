/**
 * The collector's files, checked before anything is written: the input must be a readable file,
 * the output (and its `_failures`, `_metrics`, `_state` sidecars) must not be the input, and the
 * output's folder must be creatable and writable. Every problem is one line naming the path, what
 * is wrong and what to do; file errors met later (a full disk, a folder made read-only mid-run)
 * are worded by `fileProblem` (core/files) the same way.
 */
import { accessSync, constants, existsSync, statSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { CollectFileError } from '../errors.js';
import { fileProblem } from '../files/problems.js';

export { fileProblem };

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/** The nearest existing ancestor of `path` (the path itself when it exists). */
function nearestExisting(path: string): { path: string; stats: Stats } {
  let p = resolve(path);
  for (;;) {
    const stats = statOrNull(p);
    if (stats) return { path: p, stats };
    const up = dirname(p);
    if (up === p) return { path: p, stats: statSync(p) };
    p = up;
  }
}

function sameFile(a: Stats | null, b: Stats | null): boolean {
  return a !== null && b !== null && a.dev === b.dev && a.ino === b.ino;
}

export interface CollectPaths {
  outputPath: string;
  failuresPath: string;
  metricsPath: string;
  statePath: string;
}

/**
 * Checks the input and the output paths without creating anything. Throws a CollectFileError
 * with one line for the first problem found.
 */
export function checkCollectPaths(inputPath: string, paths: CollectPaths): void {
  const input = statOrNull(inputPath);
  if (!input) throw new CollectFileError(`Input file not found: ${inputPath}. Give +input_jsonl_fpath=<path to a JSONL file of rows>.`);
  if (input.isDirectory()) throw new CollectFileError(`The input ${inputPath} is a folder; give +input_jsonl_fpath=<path to a JSONL file of rows>.`);
  try {
    accessSync(inputPath, constants.R_OK);
  } catch (err) {
    throw new CollectFileError(`${fileProblem('read the input', inputPath, err)}.`);
  }

  const named: [string, string][] = [
    ['output', paths.outputPath],
    ['failures file', paths.failuresPath],
    ['metrics file', paths.metricsPath],
    ['state file', paths.statePath],
  ];
  for (const [what, p] of named) {
    if (resolve(p) === resolve(inputPath) || sameFile(statOrNull(p), input)) {
      throw new CollectFileError(
        `The ${what} ${p} is the input file ${inputPath}: the collector appends to (and with +restart=true deletes) its output, so they must differ. Choose another +output_jsonl_fpath.`,
      );
    }
  }

  const out = statOrNull(paths.outputPath);
  if (out?.isDirectory()) throw new CollectFileError(`The output ${paths.outputPath} is a folder; give +output_jsonl_fpath=<path of a .jsonl file to write>.`);
  const base = nearestExisting(dirname(resolve(paths.outputPath)));
  if (!base.stats.isDirectory()) {
    throw new CollectFileError(
      `Cannot create the output ${paths.outputPath}: ${base.path} is a regular file, not a folder. Choose an +output_jsonl_fpath whose folders are folders.`,
    );
  }
  for (const [what, p] of named) {
    const exists = statOrNull(p);
    const target = exists ? p : base.path;
    try {
      accessSync(target, exists ? constants.W_OK : constants.W_OK | constants.X_OK);
    } catch (err) {
      throw new CollectFileError(`${fileProblem(exists ? `write the ${what}` : `create the ${what} in`, target, err)}.`);
    }
  }
}
