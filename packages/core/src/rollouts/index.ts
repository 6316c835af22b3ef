export * from './collect.js';
export * from './metrics.js';
export type { AttemptRecord, FailureRecord } from './sink.js';
