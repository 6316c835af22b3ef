/** Worker-thread entry of a TaskPool: loads the task module named in workerData and runs tasks. */
import { parentPort, workerData } from 'node:worker_threads';
import { serveTasks } from './serve.js';

const port = parentPort!;
await serveTasks((workerData as { module: string }).module, (msg) => port.postMessage(msg), (handle) => port.on('message', handle));
