// Task module run by the verify WorkerPool (see ../app.ts): plain data in and out.
export { verifyInstructions } from './verify.js';
