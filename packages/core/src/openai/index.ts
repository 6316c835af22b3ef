export * from './schemas.js';
export * from './converter.js';
export * from './upstream.js';
export * from './proxy.js';
