export * from './define.js';
export * from './kinds.js';
export * from './session.js';
export * from './errors.js';
export * from './head.js';
