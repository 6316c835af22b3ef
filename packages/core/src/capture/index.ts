/** @nemo-gym/core/capture: per-rollout model routes, token capture and the trajectory builder. */
export { CallCapture } from './recorder.js';
export { rolloutIdFromRunBody, rolloutPath } from './rollout-id.js';
export { assembleResponse, fetchTrajectory, modelBaseUrl, releaseCapture, rolloutApiKey, rolloutIdentity, trajectorySummary, type AssembledResponse, type RolloutIdentity } from './rollout-response.js';
export { type CaptureEntry } from './store.js';
export { applyTrajectory, type Trajectory } from './trajectory.js';
