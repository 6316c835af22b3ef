/** @nemo-gym/core/rollouts: The rollout collection engine behind ng-collect-rollouts. */
export { collectionPaths, collectRollouts, DEFAULT_MAX_CONSECUTIVE_FAILURES, type CollectSummary, type Progress } from './collect.js';
export { classifyAnswer, classifyFailure, CODE_CLASSES, FAILURE_LABELS, type FailureClass } from './failures.js';
export { preflight, type PreflightOptions } from './preflight.js';
export { sidecarPath, type AttemptRecord } from './sink.js';
export { mergeRollouts, parseShard } from './merge.js';
export { checkCollectPaths } from './files.js';
// The engine's parts a collector outside the core builds on (the Redis queue, @nemo-gym/queue).
export { delivery, finishCollection } from './collect.js';
export { FailureTracker, failedRowError, judgeFailureRequest } from './failures.js';
export { agentRefNames, countLines, readJobs, shardSize } from './input.js';
export { isMasked, MetricsAccumulator, metricsDigest, quantile, rewardComponentsOf, usageOf } from './metrics.js';
export { fingerprintOf, prepareResume, rolloutKey } from './resume.js';
export { RolloutSink, taggedLine } from './sink.js';
export { checkGroupOverrides, GroupCollector, groupVerifierOf, ScoredTasks, type GroupOverrides } from './group.js';
