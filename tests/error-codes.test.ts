/**
 * Error codes across hops: what fails behind the model server (a dead or slow backend), behind the
 * agent (the model server itself, /verify) or in a worker thread reaches the collector, or the
 * server that asked, with its NG_ERR_* code, and the collector's class comes from that code and the
 * status, never from the text.
 */
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { HttpError, NgError, ServerResponseError } from '@nemo-gym/core/errors';
import { askJudge } from '@nemo-gym/core/openai';
import { classifyFailure } from '@nemo-gym/core/rollouts';
import { BaseVerifyRequestSchema, defineResourcesServer, ResourcesServerConfigSchema } from '@nemo-gym/core/server';
import { globalConfigFor, startStubServer, startTestServer, type StubServer, type TestServer } from '@nemo-gym/core/testing';
import { server as vllmModel } from '../responses_api_models/vllm_model/app.js';
import { server as agent } from '../responses_api_agents/simple_agent/app.js';

const ROW = { responses_create_params: { input: [{ role: 'user', content: 'hi' }] } };
const chat = { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'done' } }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

let verifyFails = false;
const resourcesServer = defineResourcesServer({
  className: 'CodesResources',
  configSchema: ResourcesServerConfigSchema,
  verify: {
    body: BaseVerifyRequestSchema.loose(),
    handler: (body) => {
      if (verifyFails) throw new HttpError(500, 'the verifier is broken today');
      return { ...body, reward: 1 };
    },
  },
});

describe('a code crosses model server -> agent -> collector', () => {
  let backend: StubServer;
  let slow = false;
  const servers: TestServer[] = [];
  let globalConfig: Record<string, unknown>;

  beforeAll(async () => {
    backend = await startStubServer({
      '/v1/chat/completions': () => (slow ? new Promise((r) => setTimeout(() => r({ json: chat }), 1500)) : { json: chat }),
    });
    const dead = await deadPort();
    const model = (baseUrl: string) => ({ base_url: baseUrl, api_key: 'k', model: 'm', return_token_id_information: false, uses_reasoning_parser: false, request_timeout_s: 0.3, max_attempts: 1 });
    const live = await startTestServer(vllmModel, { config: { name: 'live_model', ...model(`${backend.url}/v1`) }, listen: true });
    const down = await startTestServer(vllmModel, { config: { name: 'down_model', ...model(`http://127.0.0.1:${dead}/v1`) }, listen: true });
    const resources = await startTestServer(resourcesServer, { config: { name: 'res', domain: 'other' }, listen: true });
    servers.push(live, down, resources);
    const base = globalConfigFor({
      live_model: { kind: 'responses_api_models', impl: 'vllm_model', port: live.port },
      down_model: { kind: 'responses_api_models', impl: 'vllm_model', port: down.port },
      // A model server that is not running at all.
      gone_model: { kind: 'responses_api_models', impl: 'vllm_model', port: dead },
      res: { kind: 'resources_servers', impl: 'codes_resources', port: resources.port },
    });
    const agents: Record<string, { kind: 'responses_api_agents'; impl: string; port: number }> = {};
    for (const m of ['live_model', 'down_model', 'gone_model']) {
      const a = await startTestServer(agent, {
        config: { name: `agent_${m}`, resources_server: { type: 'resources_servers', name: 'res' }, model_server: { type: 'responses_api_models', name: m } },
        globalConfig: { ...base, http_retry_max_attempts: 1 },
        listen: true,
      });
      servers.push(a);
      agents[`agent_${m}`] = { kind: 'responses_api_agents', impl: 'simple_agent', port: a.port };
    }
    globalConfig = { ...base, ...globalConfigFor(agents) };
  });
  afterAll(async () => {
    for (const s of servers.reverse()) await s.close();
    await backend?.close();
  });

  /** What the collector sees for one /run of `agentName`: the thrown error, its code and class. */
  async function run(agentName: string): Promise<{ err: ServerResponseError; cls: string }> {
    const client = new ServerClient({ globalConfig, retry: { maxAttempts: 1 } });
    try {
      const res = await client.post(agentName, '/run', ROW);
      try {
        res.raiseForStatus();
      } catch (err) {
        return { err: err as ServerResponseError, cls: classifyFailure(err) };
      }
      throw new Error(`expected an error answer, got ${res.status}: ${res.text}`);
    } finally {
      await client.close();
    }
  }

  it('a model backend that refuses connections: NG_ERR_MODEL_UNREACHABLE at the model server, the agent and the collector', async () => {
    const client = new ServerClient({ globalConfig, retry: { maxAttempts: 1 } });
    const fromModel = await client.post('down_model', '/v1/responses', ROW.responses_create_params);
    await client.close();
    expect([fromModel.status, fromModel.json<{ code: string }>().code]).toEqual([502, 'NG_ERR_MODEL_UNREACHABLE']);
    const { err, cls } = await run('agent_down_model');
    expect([err.status, err.code, cls]).toEqual([502, 'NG_ERR_MODEL_UNREACHABLE', 'model_unreachable']);
  });

  it('a model backend that does not answer in time: NG_ERR_MODEL_TIMEOUT, class timeout', async () => {
    slow = true;
    try {
      const { err, cls } = await run('agent_live_model');
      expect([err.status, err.code, cls]).toEqual([502, 'NG_ERR_MODEL_TIMEOUT', 'timeout']);
    } finally {
      slow = false;
    }
  });

  it('a model server that is not running: the agent answers NG_ERR_MODEL_UNREACHABLE', async () => {
    const { err, cls } = await run('agent_gone_model');
    expect([err.status, err.code, cls]).toEqual([500, 'NG_ERR_MODEL_UNREACHABLE', 'model_unreachable']);
  });

  it('a /verify that fails: NG_ERR_VERIFY_FAILED, class verify error, whatever its text', async () => {
    verifyFails = true;
    try {
      const { err, cls } = await run('agent_live_model');
      expect([err.status, err.code, cls]).toEqual([502, 'NG_ERR_VERIFY_FAILED', 'verify_error']);
    } finally {
      verifyFails = false;
    }
  });

  it('a judge whose model backend is down raises an error with NG_ERR_MODEL_UNREACHABLE', async () => {
    const client = new ServerClient({ globalConfig, retry: { maxAttempts: 1 } });
    try {
      const err = await askJudge(client, 'down_model', ROW.responses_create_params).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HttpError);
      expect((err as HttpError).code).toBe('NG_ERR_MODEL_UNREACHABLE');
      const gone = await askJudge(client, 'gone_model', ROW.responses_create_params).catch((e: unknown) => e);
      expect((gone as NgError).code).toBe('NG_ERR_MODEL_UNREACHABLE');
    } finally {
      await client.close();
    }
  });
});

describe('a code crosses a worker thread', () => {
  it.each(['thread', 'process'])("over %s workers a task's coded error keeps its code; a plain one is NG_ERR_POOL_TASK", (transport) => {
    const dir = mkdtempSync(join(tmpdir(), 'ng-codes-'));
    const dist = (p: string) => JSON.stringify(fileURLToPath(new URL(`../packages/core/dist/src/${p}`, import.meta.url)));
    const tasks = join(dir, 'tasks.mjs');
    writeFileSync(tasks, `import { TimeoutError } from ${dist('errors.js')};\nexport function slow() { throw new TimeoutError('reworded: it took a while'); }\nexport function plain() { throw new Error('no code'); }\n`);
    const script = join(dir, 'script.mjs');
    writeFileSync(
      script,
      `import { WorkerPool } from ${dist('workers/pool.js')};
      import { PoolTaskError } from ${dist('errors.js')};
      const pool = new WorkerPool(${JSON.stringify(pathToFileURL(tasks).href)}, { size: 1, transport: ${JSON.stringify(transport)} });
      const out = [];
      for (const fn of ['slow', 'plain']) {
        const e = await pool.run(fn).catch((err) => err);
        out.push([e instanceof PoolTaskError, e.code]);
      }
      await pool.close();
      console.log(JSON.stringify(out));`,
    );
    const run = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 20_000 });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual([[true, 'NG_ERR_TIMEOUT'], [true, 'NG_ERR_POOL_TASK']]);
  });
});
