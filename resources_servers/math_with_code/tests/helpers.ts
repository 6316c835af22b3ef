import { commandRuns } from '@nemo-gym/sandbox';
import { server } from '../app.js';

/** True when `python3` runs here; the server tests need a real interpreter. */
export const hasPython = commandRuns('python3', ['-c', 'pass']);
if (!hasPython) console.log('math_with_code: python3 is not installed; interpreter tests are skipped');

/** Whether `module` imports in the interpreter the server uses. */
export function pythonHas(module: string): boolean {
  return commandRuns('python3', ['-c', `import ${module}`]);
}

export type App = Awaited<ReturnType<typeof server.build>>;

export async function buildApp(config: Record<string, unknown> = {}): Promise<App> {
  // No warm spare interpreters and no numpy/scipy/pandas imports unless a test asks: both only
  // cost start-up time here.
  return server.build({ config: { name: 'math_with_code', domain: 'math', prespawn: 0, preload_modules: [], ...config } });
}

/** A client that keeps the session cookie, like the agent does within one rollout. */
export class Session {
  private cookie: string | undefined;
  constructor(private readonly app: App) {}

  async post(url: string, payload?: unknown): Promise<{ status: number; body: any }> {
    const res = await this.app.inject({
      method: 'POST',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: this.cookie ? { cookie: this.cookie } : {},
    });
    const set = res.headers['set-cookie'];
    const first = Array.isArray(set) ? set[0] : set;
    if (first) this.cookie = first.split(';')[0];
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined };
  }

  async run(code: string): Promise<any> {
    const res = await this.post('/execute_python', { code });
    if (res.status !== 200) throw new Error(`execute_python answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }
}
