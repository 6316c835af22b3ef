/**
 * @nemo-gym/core: every public name, re-exported from its subpath (`@nemo-gym/core/server`,
 * `/capture`, `/client`, `/openai`, `/py`, `/data`, `/rollouts`, `/config`, `/workers`, `/errors`, `/files`; test helpers
 * are in `/testing`). Importing the subpath loads only that part of the library.
 */
export * from './capture/index.js';
export * from './client/index.js';
export * from './config/index.js';
export * from './data/index.js';
export * from './errors.js';
export * from './files/index.js';
export * from './openai/index.js';
export * from './py/index.js';
export * from './rollouts/index.js';
export * from './server/index.js';
export * from './workers/index.js';
