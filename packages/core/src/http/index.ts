export * from './cookies.js';
export * from './raw-json.js';
