/**
 * Task rows checked before the model is paid for them: the collector's pre-flight reads each
 * row's fields against its resources server's published verify request (GET /ng_verify_schema)
 * and refuses a misspelt field, naming the row, the field and the known name, with no model call.
 * Real math_with_judge and simple_agent servers; the model is a stub that counts its calls.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { collectRollouts } from '@nemo-gym/core/rollouts';
import { globalConfigFor, startStubServer, startTestServer, textResponse, type StubServer, type TestServer } from '@nemo-gym/core/testing';
import { server as mathServer } from '../resources_servers/math_with_judge/app.js';
import { server as agentServer } from '../responses_api_agents/simple_agent/app.js';

let model: StubServer;
let math: TestServer;
let agent: TestServer;
let client: ServerClient;
const dir = mkdtempSync(join(tmpdir(), 'ng-row-check-'));
const examples = readFileSync(new URL('../resources_servers/math_with_judge/data/example.jsonl', import.meta.url), 'utf8').trim().split('\n');

beforeAll(async () => {
  model = await startStubServer({ '/v1/responses': () => ({ json: textResponse('\\boxed{100}') }), '/v1/models': () => ({ json: { object: 'list', data: [] } }) });
  math = await startTestServer(mathServer, { config: { name: 'math', domain: 'math', should_use_judge: false, library_verifier_workers: 0 }, listen: true });
  const servers = {
    math: { kind: 'resources_servers', impl: 'math_with_judge', port: math.port },
    policy_model: { kind: 'responses_api_models', impl: 'stub', port: model.port },
  };
  const agentBlock = { resources_server: { type: 'resources_servers', name: 'math' }, model_server: { type: 'responses_api_models', name: 'policy_model' } };
  agent = await startTestServer(agentServer, { config: { name: 'math_agent', ...agentBlock }, globalConfig: globalConfigFor(servers), listen: true });
  client = new ServerClient({ globalConfig: globalConfigFor({ ...servers, math_agent: { kind: 'responses_api_agents', impl: 'simple_agent', port: agent.port, ...agentBlock } }) });
});
afterAll(async () => {
  await client?.close();
  await agent?.close();
  await math?.close();
  await model?.close();
});

function input(name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe('the pre-flight row check', () => {
  it('publishes the verify request as JSON Schema', async () => {
    const schema = (await client.get('math', '/ng_verify_schema')).json<{ required: string[]; properties: Record<string, unknown> }>();
    expect(schema.required).toEqual(['responses_create_params', 'response', 'question', 'expected_answer']);
    expect(Object.keys(schema.properties)).toContain('expected_answer');
  });

  it('refuses a misspelt task field before any model call, naming the row, the field and the known name', async () => {
    const misspelt = examples[2]!.replace('"expected_answer"', '"expected_anwser"');
    const path = input('misspelt.jsonl', [examples[0]!, examples[1]!, misspelt]);
    const calls = model.requestsTo('/v1/responses').length;
    const err = await collectRollouts({ client, inputPath: path, outputPath: join(dir, 'out.jsonl'), agentName: 'math_agent', concurrency: 2, preflight: true }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain(
      `row 2 (line 3 of ${path}): \`expected_answer\` missing: resources server \`math\`'s verify request requires \`expected_answer\`; the row has \`expected_anwser\` (did you mean \`expected_answer\`?)`,
    );
    expect((err as { code?: string }).code).toBe('NG_ERR_PREFLIGHT');
    expect(model.requestsTo('/v1/responses').length - calls).toBe(0);
  });

  it('lets unknown keys that are no near miss through', async () => {
    const withExtra = (line: string, extra: Record<string, unknown>) => JSON.stringify({ ...JSON.parse(line), ...extra });
    const path = input('extra.jsonl', [withExtra(examples[0]!, { source: 'gsm8k', difficulty: 3 })]);
    const summary = await collectRollouts({ client, inputPath: path, outputPath: join(dir, 'extra-out.jsonl'), agentName: 'math_agent', concurrency: 1, preflight: true });
    expect(summary.written).toBe(1);
  });
});
