/** The worker side of a TaskPool, shared by both entries: load the task module, then run tasks. */
import { asNgCode } from '../errors.js';
import type { TaskMessage, WorkerMessage } from './core.js';

type TaskModule = Record<string, (...args: unknown[]) => unknown>;

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** The error's code when it has one (NG_ERR_*), so the pool's side raises it with the same code. */
function codeOf(err: unknown): string | undefined {
  return asNgCode(err !== null && typeof err === 'object' ? (err as { code?: unknown }).code : undefined);
}

/** Returns false when the module does not load (after reporting why). */
export async function serveTasks(moduleHref: string, post: (msg: WorkerMessage) => void, onTask: (handle: (msg: TaskMessage) => void) => void): Promise<boolean> {
  let mod: TaskModule;
  try {
    mod = (await import(moduleHref)) as TaskModule;
  } catch (err) {
    post({ loadError: describe(err) });
    return false;
  }
  onTask(async (msg) => {
    const f = mod[msg.fn];
    if (typeof f !== 'function') {
      post({ id: msg.id, ok: false, error: `the worker module has no exported function ${msg.fn}` });
      return;
    }
    try {
      post({ id: msg.id, ok: true, value: await f(...msg.args) });
    } catch (err) {
      const code = codeOf(err);
      post(code === undefined ? { id: msg.id, ok: false, error: describe(err) } : { id: msg.id, ok: false, error: describe(err), code });
    }
  });
  post({ ready: true });
  return true;
}
