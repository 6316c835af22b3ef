/** @nemo-gym/core/capture: per-rollout model routes, token capture and the trajectory builder. */
export { CallCapture } from './recorder.js';
export { rolloutIdFromRunBody, rolloutPath } from './rollout-id.js';
export { type CaptureEntry } from './store.js';
export { applyTrajectory, type Trajectory } from './trajectory.js';
