export * from './collect.js';
export * from './metrics.js';
