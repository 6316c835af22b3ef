/**
 * File-system errors in the words of someone who gave the path: one line naming the path, what the
 * errno means and the usual fix, never a stack trace. Every command reports a file error it did not
 * expect through {@link fileErrorLine}; code that knows what it was doing words it with
 * {@link fileProblem} and throws a {@link FileError}.
 */
import { FileError, type NgError } from '../errors.js';

/** What an errno means to someone who gave the path, and the usual fix. */
export const ERRNO_TEXT: Readonly<Record<string, string>> = {
  EACCES: 'permission denied (check the owner and mode of the file and its folder)',
  EPERM: 'the operation is not permitted (check the owner and mode of the file and its folder)',
  EROFS: 'the file system is read-only (choose a path on a writable disk)',
  ENOSPC: 'the disk is full (free some space, then run the same command again)',
  EDQUOT: 'the disk quota is exhausted (free some space, then run the same command again)',
  ENOTDIR: 'a part of the path is a regular file, not a folder (choose another path)',
  EEXIST: 'it already exists, or a part of the path is a regular file, not a folder (choose another path)',
  EISDIR: 'it is a folder, not a file (give a file path)',
  ENOENT: 'it does not exist (check the path)',
  ENAMETOOLONG: 'the path is too long',
  EMFILE: 'too many files are open in this process (raise `ulimit -n`)',
  ENFILE: 'too many files are open on this machine',
  EIO: 'an I/O error from the disk',
  EXDEV: 'the two paths are on different file systems',
  EBUSY: 'the file or folder is in use',
  ETXTBSY: 'the file is in use',
  ELOOP: 'too many symbolic links in the path',
  EINVAL: 'the file system does not support this operation on it (choose a path on a regular disk)',
};

/** A Node.js file-system error: an errno code and the path it was about. */
export function isFsError(err: unknown): err is NodeJS.ErrnoException & { code: string; path: string } {
  if (!(err instanceof Error)) return false;
  const e = err as NodeJS.ErrnoException;
  return typeof e.code === 'string' && /^E[A-Z0-9]+$/.test(e.code) && typeof e.path === 'string';
}

/** One line for a failed file operation: `cannot <action> <path>: <what the errno means> [CODE]`. */
export function fileProblem(action: string, path: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const meaning = (code && ERRNO_TEXT[code]) ?? (err instanceof Error ? err.message : String(err));
  return `cannot ${action} ${path}: ${meaning}${code && ERRNO_TEXT[code] ? ` [${code}]` : ''}`;
}

/** The action a system call stood for, as `cannot <action> <path>` reads it. */
const SYSCALL_ACTION: Readonly<Record<string, string>> = {
  open: 'open',
  read: 'read',
  write: 'write',
  mkdir: 'create the folder',
  rename: 'rename',
  unlink: 'delete',
  rmdir: 'delete the folder',
  rm: 'delete',
  stat: 'read',
  lstat: 'read',
  access: 'use',
  scandir: 'list the folder',
  opendir: 'list the folder',
  fsync: 'flush to disk',
  copyfile: 'copy',
  link: 'link',
  symlink: 'link',
  realpath: 'resolve',
};

/** One line for a file-system error whatever raised it (the path and the action taken from the error). */
export function fileErrorLine(err: NodeJS.ErrnoException & { path: string; dest?: string }): string {
  const action = SYSCALL_ACTION[err.syscall ?? ''] ?? 'use';
  const target = typeof err.dest === 'string' ? `${err.path} to ${err.dest}` : err.path;
  return fileProblem(action, target, err);
}

/** A FileError for a failed file operation (the error itself is its cause). */
export function fileError(action: string, path: string, err: unknown, fix = ''): NgError {
  return new FileError(`${fileProblem(action, path, err)}.${fix ? ` ${fix}` : ''}`, { cause: err });
}
