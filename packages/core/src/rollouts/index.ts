/** @nemo-gym/core/rollouts: The rollout collection engine behind ng-collect-rollouts. */
export { collectionPaths, collectRollouts, DEFAULT_MAX_CONSECUTIVE_FAILURES, type CollectOptions, type CollectSummary, type FailureEvent, type Progress } from './collect.js';
export { classifyAnswer, classifyFailure, FAILURE_LABELS, type FailureClass } from './failures.js';
export { preflight, type PreflightOptions, type PreflightReport } from './preflight.js';
export { sidecarPath, type AttemptRecord, type FailureRecord } from './sink.js';
export { collectViaQueue, type QueueCollectOptions } from './queue/collect.js';
export { runWorker, type WorkerOptions, type WorkerSummary } from './queue/worker.js';
export { mergeRollouts, parseShard, type MergeOptions, type MergeSummary, type TornLine } from './merge.js';
export { findRedisServer, startRedisServer, type LocalRedis } from './queue/redis-server.js';
export { parseQueueUrl, shownUrl as shownQueueUrl } from './queue/queue.js';
export { checkCollectPaths } from './files.js';
