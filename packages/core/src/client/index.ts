export * from './client.js';
export * from './retry.js';
