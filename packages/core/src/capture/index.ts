/** @nemo-gym/core/capture: per-rollout model routes, token capture and the trajectory builder. */
export { CallCapture } from './recorder.js';
export { assembleResponse, fetchTrajectory, modelBaseUrl, releaseCapture, rolloutApiKey, rolloutIdentity, trajectorySummary, type RolloutIdentity } from './rollout-response.js';
export { type CaptureEntry } from './store.js';
export { type Trajectory } from './trajectory.js';
