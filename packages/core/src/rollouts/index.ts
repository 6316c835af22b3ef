/** @nemo-gym/core/rollouts: The rollout collection engine behind ng-collect-rollouts. */
export { collectRollouts, type CollectOptions, type CollectSummary, type Progress } from './collect.js';
export { type AttemptRecord, type FailureRecord } from './sink.js';
