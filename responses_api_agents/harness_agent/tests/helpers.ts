// Shared by the harness_agent tests: the coding_repo example rows, the shell command that fixes
// each one (what the scripted model asks the harness to run), and an in-process stack.
import { globalConfigFor, readJsonl, startTestServer, type TestServer } from '@nemo-gym/core/testing';
import { server as codingRepo } from '../../../resources_servers/coding_repo/app.js';
import { server as harnessAgent } from '../app.js';
import { fixThenFinish, type StubScript } from '../src/stub_model.js';

export { processesWith } from '../src/processes.js';

export const EXAMPLE = new URL('../../../resources_servers/coding_repo/data/example.jsonl', import.meta.url).pathname;
export const rows = () => readJsonl(EXAMPLE) as Array<Record<string, any>>;

/** The file each row's instruction names → a shell command that fixes it. */
export const FIXES: Array<[string, string]> = [
  ['fizzbuzz.py', "sed -i 's/range(1, n)/range(1, n + 1)/' fizzbuzz.py"],
  ['text_utils.py', `sed -i "s/return sentence\\[::-1\\]/return ' '.join(sentence.split()[::-1])/" text_utils.py`],
  ['stack.py', "sed -i 's/pop(0)/pop()/' stack.py"],
  ['temperature.js', "sed -i 's#celsius \\* 5 / 9 + 32#celsius * 9 / 5 + 32#' temperature.js"],
  ['calc.py', "sed -i 's/return a - b/return a + b/' calc.py"],
];

/** Runs the fix of the row the conversation is about, then ends with a text. */
export const fixingScript: StubScript = fixThenFinish((text) => FIXES.find(([file]) => text.includes(file))?.[1] ?? 'echo no fix known');

export interface InProcess {
  repo: TestServer;
  agent: TestServer;
  close(): Promise<void>;
}

/** coding_repo and one harness_agent, in this process, over real HTTP. */
export async function inProcessStack(agentConfig: Record<string, unknown>, globalExtra: Record<string, unknown> = {}): Promise<InProcess> {
  const repo = await startTestServer(codingRepo, { config: { name: 'coding_repo', domain: 'coding', num_processes: 4 }, listen: true });
  const globalConfig = { ...globalConfigFor({ coding_repo: { kind: 'resources_servers', impl: 'coding_repo', port: repo.port } }), ...globalExtra } as never;
  const agent = await startTestServer(harnessAgent, {
    config: { name: 'harness', resources_server: { type: 'resources_servers', name: 'coding_repo' }, model_server: { type: 'responses_api_models', name: 'policy_model' }, ...agentConfig },
    globalConfig,
    listen: true,
  }).catch(async (err: unknown) => {
    await repo.close();
    throw err;
  });
  return {
    repo,
    agent,
    close: async () => {
      await agent.close();
      await repo.close();
    },
  };
}
