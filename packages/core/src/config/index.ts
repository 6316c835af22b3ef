export * from './merge.js';
export * from './overrides.js';
export * from './interpolate.js';
export * from './instances.js';
export * from './parse.js';
export * from './redact.js';
