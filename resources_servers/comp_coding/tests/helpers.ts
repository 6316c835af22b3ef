import { commandRuns } from '@nemo-gym/sandbox';
import { server } from '../app.js';

export const hasPython = commandRuns('python3', ['-c', 'pass']);
if (!hasPython) console.log('comp_coding: python3 is not installed; grading tests are skipped');

export type App = Awaited<ReturnType<typeof server.build>>;

export function buildApp(config: Record<string, unknown> = {}): Promise<App> {
  return server.build({ config: { name: 'comp_coding', domain: 'coding', num_processes: 2, unit_test_timeout_secs: 10, debug: false, ...config } });
}

export function answer(text: string) {
  return {
    id: 'resp_test',
    created_at: 0.0,
    model: 'dummy',
    object: 'response',
    output: [{ id: 'msg_test', content: [{ annotations: [], text, type: 'output_text' }], role: 'assistant', status: 'completed', type: 'message' }],
    parallel_tool_calls: false,
    tool_choice: 'auto',
    tools: [],
  };
}

export function request(text: string, unitTests: Record<string, unknown>) {
  return { responses_create_params: { input: [{ role: 'user', content: 'solve' }] }, response: answer(text), verifier_metadata: { unit_tests: unitTests } };
}

export const py = (code: string) => '```python\n' + code + '\n```';

export async function verify(app: App, body: unknown): Promise<{ status: number; body: any }> {
  const res = await app.inject({ method: 'POST', url: '/verify', payload: body as object });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined };
}
