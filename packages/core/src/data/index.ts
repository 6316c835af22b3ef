export * from './pyjson.js';
export * from './tdigest.js';
export * from './metrics.js';
export * from './validate.js';
export * from './lines.js';
export * from './compare.js';
export * from './prepare.js';
