/** @nemo-gym/core/workers: A pool of worker threads (or child processes) for CPU-heavy checks. */
export { compiledPath, defaultWorkerCount, replicasOnHost, WorkerPool } from './pool.js';
