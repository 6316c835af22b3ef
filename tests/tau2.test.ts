/**
 * tau2 retail end to end: ng-run with the tau2 server, simple_agent and a replay model scripted
 * with each example row's gold calls (after the customer's opening line); ng-collect-rollouts
 * scores every row 1.0, the tool outputs the agent recorded are the server's texts, and
 * reward_info is in each output row.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core/config';
import { functionCall, messageItem, modelResponse } from '@nemo-gym/core/testing';
import { readDataDir } from '../resources_servers/tau2/src/data.js';
import { RetailDb } from '../resources_servers/tau2/src/db.js';
import { getResponse } from '../resources_servers/tau2/src/tools.js';
import { ROOT, runCommand, startStack } from './helpers/stack.js';

const DATA_DIR = sharedPath('tau2', 'retail');
const HAVE_DATA = existsSync(join(DATA_DIR, 'db.json'));
if (!HAVE_DATA) console.log(`tau2 end-to-end test skipped: ${DATA_DIR} is absent`);

const TAU2 = 'resources_servers/tau2/configs/tau2.yaml';
const REPLAY = 'responses_api_models/replay_model/configs/replay_model.yaml';
const EXAMPLE = join(ROOT, 'resources_servers/tau2/data/example.jsonl');

const readJsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, any>);

describe.skipIf(!HAVE_DATA)('tau2 retail through the stack', () => {
  it('scripted gold calls score 1.0 on every example row', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ng-tau2-'));
    const base = new RetailDb(readDataDir(DATA_DIR).records);
    // Without a simulated user, each row gets its customer's opening line (the scenario's reason for calling) as a user turn.
    const rows = readJsonl(EXAMPLE).map((row): Record<string, any> => ({
      ...row,
      responses_create_params: { ...row.responses_create_params, input: [...row.responses_create_params.input, { role: 'user', content: row.user_scenario.instructions.reason_for_call }] },
    }));
    const input = join(dir, 'input.jsonl');
    writeFileSync(input, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const expectedOutputs = new Map<string, string[]>();
    const recordings = rows.map((row) => {
      const db = base.fork();
      const output: unknown[] = [];
      const texts: string[] = [];
      for (const [i, a] of (row.evaluation_criteria.actions as { name: string; arguments: Record<string, unknown> }[]).entries()) {
        const text = getResponse(db, a.name, a.arguments).content;
        texts.push(text);
        output.push(functionCall(a.name, a.arguments, `fc_${row.task_id}_${i}`), { type: 'function_call_output', call_id: `call_fc_${row.task_id}_${i}`, output: text });
      }
      expectedOutputs.set(row.task_id, texts);
      const info = (row.evaluation_criteria.communicate_info as string[]).map((c) => ` It was $${c}.`).join('');
      output.push(messageItem(`All done.${info}`, { id: `msg_${row.task_id}` }));
      return { responses_create_params: row.responses_create_params, response: modelResponse(output) };
    });
    const recFile = join(dir, 'recordings.jsonl');
    writeFileSync(recFile, recordings.map((r) => JSON.stringify(r)).join('\n') + '\n');

    const stack = await startStack([
      `+config_paths=[${TAU2},${REPLAY}]`,
      `++policy_model.responses_api_models.replay_model.recordings_jsonl_fpaths=[${recFile}]`,
      `++tau2.resources_servers.tau2.data_dir=${DATA_DIR}`,
      '++tau2.resources_servers.tau2.data_url=null',
    ]);
    try {
      const out = join(dir, 'rollouts.jsonl');
      const r = await runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, '+agent_name=tau2_simple_agent', `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${out}`]);
      expect(r.code, r.stderr + stack.output()).toBe(0);
      const results = readJsonl(out);
      expect(results).toHaveLength(5);
      for (const row of results) {
        expect(row.reward, `${row.task_id}: ${JSON.stringify(row.reward_info)}`).toBe(1.0);
        expect(row.reward_info.db_check).toEqual({ db_match: true, db_reward: 1.0 });
        const outputs = row.response.output.filter((o: any) => o.type === 'function_call_output').map((o: any) => o.output);
        expect(outputs).toEqual(expectedOutputs.get(row.task_id));
      }
    } finally {
      await stack.stop();
    }
  }, 120_000);
});
