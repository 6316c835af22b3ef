/** @nemo-gym/core/workers: A pool of worker threads for CPU-heavy checks, or inline checks with a time limit. */
export { InlineQueue, runWithTimeLimit } from './inline.js';
export { compiledPath, defaultWorkerCount, replicasOnHost, WorkerPool, type WorkerPoolOptions } from './pool.js';
