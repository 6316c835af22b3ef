/** @nemo-gym/core/capture: per-rollout model routes, token capture and the trajectory builder. */
export { CallCapture, markRollout, rolloutMarkOf, type CallTokens, type RolloutMark } from './recorder.js';
export { mountCaptureRoutes, requestRolloutId } from './routes.js';
export {
  ATTEMPT_INDEX_KEY,
  MAX_ROLLOUT_ID_LENGTH,
  parseRolloutPath,
  ROLLOUT_ID_KEY,
  ROLLOUT_ID_PATTERN,
  ROLLOUT_INDEX_KEY,
  ROLLOUT_PATH_PREFIX,
  rolloutIdFromRunBody,
  rolloutIdProblem,
  rolloutPath,
  TASK_INDEX_KEY,
  type RolloutPathMatch,
} from './rollout-id.js';
export { CaptureStore, estimateEntryBytes, RolloutCaptureSettingsSchema, type CaptureEntry, type RolloutCapture, type RolloutCaptureSettings } from './store.js';
export { applyTrajectory, buildTrajectory, outputHasTokenIds, outputItemsJson, trajectoryJson, TRAJECTORY_MODES, type Trajectory, type TrajectoryChain, type TrajectoryMetrics, type TrajectoryMode } from './trajectory.js';
