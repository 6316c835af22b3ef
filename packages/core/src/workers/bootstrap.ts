/** Worker-thread entry of WorkerPool: loads the task module and runs the functions asked for. */
import { parentPort, workerData } from 'node:worker_threads';

const mod = (await import((workerData as { module: string }).module)) as Record<string, (...a: unknown[]) => unknown>;

parentPort!.postMessage({ ready: true });

parentPort!.on('message', async (msg: { id: number; fn: string; args: unknown[] }) => {
  try {
    const f = mod[msg.fn];
    if (typeof f !== 'function') throw new Error(`the worker module has no exported function ${msg.fn}`);
    const value = await f(...msg.args);
    parentPort!.postMessage({ id: msg.id, ok: true, value });
  } catch (err) {
    parentPort!.postMessage({ id: msg.id, ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  }
});
