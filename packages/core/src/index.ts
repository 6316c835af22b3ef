export * from './errors.js';
export * from './config/index.js';
export * from './server/index.js';
export * from './client/index.js';
export * from './py/index.js';
export * from './workers/index.js';
export * from './openai/index.js';
export * from './responses.js';
