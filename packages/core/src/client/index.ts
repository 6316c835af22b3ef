export * from './client.js';
export * from './retry.js';
export * from './fetch.js';
export * from './dispatch.js';
export * from './agent.js';
