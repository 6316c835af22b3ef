export * from './json.js';
export * from './regex.js';
export * from './lax.js';
