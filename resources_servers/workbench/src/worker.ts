/**
 * Verify's replay in a worker thread: the tables are read once per worker from the folder the
 * server found them in, then every task replays two call lists and compares the tables.
 */
import { readDataDir, type WorkbenchData } from './data.js';
import { reward } from './replay.js';

let loaded: { dir: string; data: WorkbenchData } | undefined;

export function verifyReward(dataDir: string, predicted: unknown[], groundTruth: unknown): number {
  if (loaded?.dir !== dataDir) loaded = { dir: dataDir, data: readDataDir(dataDir, false) };
  return reward(loaded.data, predicted, groundTruth, true);
}
