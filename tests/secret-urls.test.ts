/**
 * Credentials written in a model backend's base URL stay out of everything a collection
 * produces. ng-run starts simple_weather with three model servers whose base URLs carry one
 * canary as the URL's password, a bare-token user info and a secret query parameter
 * (`api_key`, `token`, `sig`, `key`): openai_model and azure_openai_model on a closed port, and
 * vllm_model on a backend that refuses every call with an answer echoing the URL it was sent
 * (query included). An agent per model server runs the rows of one input file; the canary must
 * appear in no HTTP error body, no output, failures or metrics file, and in neither the
 * collector's nor ng-run's stdout/stderr, while the masked URLs are still named.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { findOpenPort } from '@nemo-gym/core/config';
import { runCommand, startStack } from './helpers/stack.js';

const WEATHER = 'resources_servers/simple_weather/configs/simple_weather.yaml';
const OPENAI = 'responses_api_models/openai_model/configs/openai_model.yaml';

/** A backend that refuses every request with an error naming the path and query it was sent. */
async function startEchoingBackend(): Promise<{ port: number; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const srv = createServer((req, res) => {
    hits++;
    req.resume();
    req.on('end', () => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Incorrect credentials for http://${req.headers.host}${req.url}`, type: 'invalid_request_error' } }));
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { port: (srv.address() as AddressInfo).port, hits: () => hits, close: () => new Promise((r) => srv.close(() => r())) };
}

function agentYaml(name: string, model: string): string[] {
  return [
    `${name}:`,
    '  responses_api_agents:',
    '    simple_agent:',
    '      entrypoint: app.ts',
    '      resources_server: {type: resources_servers, name: simple_weather}',
    `      model_server: {type: responses_api_models, name: ${model}}`,
  ];
}

describe('credentials in base URLs', () => {
  it('never leave the model servers: not in error answers, failure records, outputs or any log', async () => {
    const canary = `cnry${randomBytes(8).toString('hex')}`;
    const closed = await findOpenPort([]);
    const backend = await startEchoingBackend();
    const dir = mkdtempSync(join(tmpdir(), 'ng-secret-urls-'));
    const extra = join(dir, 'extra.yaml');
    writeFileSync(
      extra,
      [
        `policy_base_url: http://user:${canary}@127.0.0.1:${closed}/v1?api_key=${canary}&mode=x`,
        'policy_model_name: stub-model',
        'vllm_policy:',
        '  responses_api_models:',
        '    vllm_model:',
        '      entrypoint: app.ts',
        `      base_url: http://user:${canary}@127.0.0.1:${backend.port}/v1?token=${canary}`,
        '      api_key: dummy-key',
        '      model: m',
        '      return_token_id_information: false',
        '      uses_reasoning_parser: false',
        '      max_attempts: 1',
        'azure_policy:',
        '  responses_api_models:',
        '    azure_openai_model:',
        '      entrypoint: app.ts',
        `      openai_base_url: https://${canary}@127.0.0.1:${closed}/?sig=${canary}&key=${canary}`,
        '      openai_api_key: dummy-key',
        '      openai_model: m',
        "      default_query: {api-version: '2024-10-21'}",
        '      max_retries: 0',
        ...agentYaml('weather_vllm_agent', 'vllm_policy'),
        ...agentYaml('weather_azure_agent', 'azure_policy'),
        '',
      ].join('\n'),
    );
    const input = join(dir, 'in.jsonl');
    const row = (agent: string | null) =>
      JSON.stringify({
        responses_create_params: { input: [{ role: 'user', content: 'weather in Lima?' }] },
        ...(agent ? { agent_ref: { type: 'responses_api_agents', name: agent } } : {}),
      });
    writeFileSync(input, `${[row(null), row('weather_vllm_agent'), row('weather_azure_agent')].join('\n')}\n`);
    const out = join(dir, 'out.jsonl');

    const stack = await startStack([`+config_paths=[${WEATHER},${OPENAI},${extra}]`, '+policy_api_key=dummy-key', '+policy_model.responses_api_models.openai_model.max_retries=0']);
    try {
      // Every model server's error answers, and the agents' answers built on them.
      const client = await ServerClient.fromHeadServer({ host: '127.0.0.1', port: stack.headPort });
      const bodies: string[] = [];
      for (const model of ['policy_model', 'vllm_policy', 'azure_policy']) {
        for (const [path, body] of [
          ['/v1/responses', { input: 'hello' }],
          ['/v1/chat/completions', { messages: [{ role: 'user', content: 'hello' }] }],
        ] as const) {
          const res = await client.post(model, path, body, { retry: { maxAttempts: 1 } });
          expect(res.status, `${model}${path}`).toBeGreaterThanOrEqual(400);
          bodies.push(res.text);
        }
        const models = await client.get(model, '/v1/models', { retry: { maxAttempts: 1 } });
        expect(models.status, `${model}/v1/models`).toBeGreaterThanOrEqual(400);
        bodies.push(models.text);
      }
      for (const agent of ['simple_weather_simple_agent', 'weather_vllm_agent', 'weather_azure_agent']) {
        const res = await client.post(agent, '/run', JSON.parse(row(null)), { retry: { maxAttempts: 1 } });
        expect(res.status, `${agent}/run`).toBeGreaterThanOrEqual(400);
        bodies.push(res.text);
      }
      await client.close();
      expect(backend.hits()).toBeGreaterThan(0);
      for (const b of bodies) expect(b).not.toContain(canary);
      const all = bodies.join('\n');
      expect(all).toContain(`http://user:****@127.0.0.1:${closed}/v1?api_key=****`);
      expect(all).toContain(`https://****@127.0.0.1:${closed}/?sig=****&key=****`);
      expect(all).toContain(`http://user:****@127.0.0.1:${backend.port}/v1?token=****`);
      expect(all).toMatch(/Incorrect credentials for http:\/\/127\.0\.0\.1:\d+\/v1\?token=\*\*\*\*/);

      const collect = (more: string[]) =>
        runCommand('collect-rollouts', [`+head_server.port=${stack.headPort}`, '+agent_name=simple_weather_simple_agent', `+input_jsonl_fpath=${input}`, `+output_jsonl_fpath=${out}`, ...more]);
      // Pre-flight asks each model server for its backend's model list: it names the URL, masked.
      const pre = await collect([]);
      expect(pre.code, pre.stderr).toBe(2);
      expect(pre.stderr).toContain('****@127.0.0.1');
      // Without pre-flight every rollout fails and is recorded.
      const run = await collect(['+preflight=false', '+max_consecutive_failures=0']);
      expect(run.code).not.toBe(0);
      const failures = readFileSync(join(dir, 'out_failures.jsonl'), 'utf8');
      expect(failures.trim().split('\n')).toHaveLength(3);
      expect(failures).toContain('****');

      await stack.stop('SIGTERM');
      for (const [what, text] of [
        ['pre-flight stdout', pre.stdout],
        ['pre-flight stderr', pre.stderr],
        ['collector stdout', run.stdout],
        ['collector stderr', run.stderr],
        ['ng-run output', stack.output()],
      ] as const) {
        expect(text, what).not.toContain(canary);
      }
      for (const f of readdirSync(dir)) {
        if (f === 'extra.yaml') continue;
        expect(readFileSync(join(dir, f), 'utf8'), f).not.toContain(canary);
      }
      expect(existsSync(join(dir, 'out_failures.jsonl'))).toBe(true);
    } finally {
      await stack.stop('SIGKILL');
      await backend.close();
    }
  }, 90_000);
});
