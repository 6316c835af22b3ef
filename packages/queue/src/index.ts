/**
 * @nemo-gym/queue: collection spread over machines through Redis (ng-collect-rollouts
 * `+queue_url=…` and ng-collect-worker). The local redis-server launcher for tests, benchmarks and
 * one-host runs is the subpath `@nemo-gym/queue/redis-server`.
 */
export { collectViaQueue, type QueueCollectOptions } from './collect.js';
export { runWorker, type WorkerOptions, type WorkerSummary } from './worker.js';
export { QueueError } from './errors.js';
export { parseQueueUrl, shownUrl as shownQueueUrl } from './queue.js';
