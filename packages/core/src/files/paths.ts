/**
 * Checks a command makes on its files before it opens any output: every input is a readable file,
 * and no output is an input — compared by the file itself (its real path, and its device and inode),
 * so `./a.jsonl`, an absolute path, a symbolic link or a hard link to the input are all caught.
 * An output on /proc or /sys, or that is a device or a pipe, is refused: it is replaced by a new
 * file when written, which those cannot take.
 */
import { accessSync, closeSync, constants, openSync, statSync, type Stats } from 'node:fs';
import { dirname, sep } from 'node:path';
import { FileError } from '../errors.js';
import { resolveOutputPath } from './atomic.js';
import { fileError, fileProblem } from './problems.js';

/** A file a command was given, with the flag that named it (for messages). */
export interface FileRef {
  path: string;
  /** How the user gave it, e.g. `+input` or `+input_jsonl_fpaths[1]`. */
  flag: string;
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/** Whether two paths name one file: the same real path, or the same device and inode (a hard link). */
export function sameFile(a: string, b: string): boolean {
  if (resolveOutputPath(a) === resolveOutputPath(b)) return true;
  const sa = statOrNull(a);
  const sb = statOrNull(b);
  return sa !== null && sb !== null && sa.dev === sb.dev && sa.ino === sb.ino;
}

/** Throws a FileError unless `ref` is a file this process can read. */
export function checkInputFile(ref: FileRef): void {
  let st: Stats;
  try {
    st = statSync(ref.path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new FileError(`Input file not found: ${ref.flag}=${ref.path}. Check the path; nothing was written.`);
    throw fileError('read the input', ref.path, err, `Check ${ref.flag}; nothing was written.`);
  }
  if (st.isDirectory()) throw new FileError(`The input ${ref.flag}=${ref.path} is a folder; give a file. Nothing was written.`);
  try {
    closeSync(openSync(ref.path, 'r'));
  } catch (err) {
    throw fileError('read the input', ref.path, err, `Check ${ref.flag}; nothing was written.`);
  }
}

const VIRTUAL_ROOTS = ['/proc', '/sys'];

/**
 * Throws a FileError when `output` (or a file written beside it, `sidecars`) is one of `inputs`, or
 * when it cannot be an output at all: a folder, a device or pipe, a path on /proc or /sys, a path
 * whose folder is a regular file or not writable. Creates nothing.
 */
export function checkOutputFile(output: FileRef, inputs: readonly FileRef[], sidecars: readonly { path: string; what: string }[] = []): void {
  for (const input of inputs) {
    if (sameFile(output.path, input.path)) {
      throw new FileError(
        `${output.flag}=${output.path} is the input ${input.flag}=${input.path} (the same file): writing it would destroy the input. Choose another ${output.flag}; nothing was written.`,
      );
    }
    for (const side of sidecars) {
      if (sameFile(side.path, input.path)) {
        throw new FileError(
          `The ${side.what} ${side.path}, written beside ${output.flag}=${output.path}, is the input ${input.flag}=${input.path}: writing it would destroy the input. Choose another ${output.flag}; nothing was written.`,
        );
      }
    }
  }
  const real = resolveOutputPath(output.path);
  const virtual = VIRTUAL_ROOTS.find((root) => real === root || real.startsWith(`${root}${sep}`));
  if (virtual) {
    throw new FileError(`${output.flag}=${output.path} is on ${virtual}, a virtual file system that holds no files of ours; choose a path on a disk.`);
  }
  const st = statOrNull(real);
  if (st?.isDirectory()) throw new FileError(`${output.flag}=${output.path} is a folder; give the path of a file to write.`);
  if (st && !st.isFile()) {
    throw new FileError(`${output.flag}=${output.path} is not a regular file (a device, pipe or socket); the output is written as a new file and renamed into place, so give a file path.`);
  }
  // The nearest existing folder on the way must be a folder we may create files in.
  let dir = dirname(real);
  let dst = statOrNull(dir);
  while (!dst) {
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
    dst = statOrNull(dir);
  }
  if (dst && !dst.isDirectory()) {
    throw new FileError(`Cannot create ${output.flag}=${output.path}: ${dir} is a regular file, not a folder. Choose a path whose folders are folders.`);
  }
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new FileError(`${fileProblem('create files in', dir, err)}; ${output.flag}=${output.path} cannot be written there. Choose another ${output.flag}.`);
  }
}
