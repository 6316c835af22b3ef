/**
 * @nemo-gym/core/files: how every command writes its files — atomically (a temporary file beside
 * the output, flushed and renamed), one writer per output (a lock file), inputs and outputs checked
 * before anything is opened, and file-system errors worded as one line naming the path and the fix.
 */
export { AtomicFile, tempPathOf, writeFileAtomic, writeStreamAtomic } from './atomic.js';
export { acquireOutputLock, commandLock, lockPathOf } from './lock.js';
export { checkInputFile, checkOutputFile, type FileRef } from './paths.js';
export { fileError, fileErrorLine, isFsError } from './problems.js';

