export { startViewer, ViewerError, type ViewerHandle, type ViewerOptions } from './server.js';
export { RolloutIndex, summarizeLine, type RowSummary, type HistogramBin } from './rollout-index.js';
export { SYNTHETIC_TASKS, syntheticReward, syntheticRow, writeSyntheticFile } from './synthetic.js';
