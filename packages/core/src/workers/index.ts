/** @nemo-gym/core/workers: A pool of worker threads for CPU-heavy checks. */
export { WorkerPool, type WorkerPoolOptions } from './pool.js';
