export * from './str.js';
export * from './re.js';
export * from './json.js';
export * from './repr.js';
export * from './lax.js';
