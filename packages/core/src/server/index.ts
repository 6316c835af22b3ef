export * from './define.js';
export * from './kinds.js';
export * from './config.js';
export * from './logger.js';
export * from './lifecycle.js';
export * from './session.js';
export * from './errors.js';
export * from './head.js';
