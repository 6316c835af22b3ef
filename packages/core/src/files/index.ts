/**
 * @nemo-gym/core/files: how every command writes its files — atomically (a temporary file beside
 * the output, flushed and renamed), one writer per output (a lock file), inputs and outputs checked
 * before anything is opened, and file-system errors worded as one line naming the path and the fix.
 */
export { AtomicFile, removeStaleTemps, resolveOutputPath, tempPathOf, writeFileAtomic, writeStreamAtomic, type AtomicFileOptions } from './atomic.js';
export { acquireOutputLock, commandLock, lockPathOf, OutputLock, withOutputLock, type LockHolder, type LockOptions } from './lock.js';
export { checkInputFile, checkOutputFile, sameFile, type FileRef } from './paths.js';
export { ERRNO_TEXT, fileError, fileErrorLine, fileProblem, isFsError } from './problems.js';
export { exitOnStopSignal, isProcessAlive, onProcessExit, processStartTicks } from './process.js';
