/**
 * Secrets stay where they are used: ng-run with a canary policy key (and canaries under a
 * hyphenated header key and inside a URL) starts a weather server, an agent and an OpenAI model
 * server pointed at a stub on 127.0.0.1. The key must reach the model server (the stub sees it
 * as the bearer token) and nothing else: no other child's environment, not the head server's
 * config page, not ng-run's output; ng-dump-config masks all three.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core/client';
import { runCommand, startStack } from './helpers/stack.js';

const WEATHER = 'resources_servers/simple_weather/configs/simple_weather.yaml';
const OPENAI = 'responses_api_models/openai_model/configs/openai_model.yaml';

const canary = (what: string) => `canary-${what}-${randomBytes(8).toString('hex')}`;

/** A model backend on 127.0.0.1 that records the headers of every request and refuses it. */
async function startStub(): Promise<{ url: string; seen: IncomingHttpHeaders[]; close: () => Promise<void> }> {
  const seen: IncomingHttpHeaders[] = [];
  const srv = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'stub backend: no model here', type: 'invalid_request_error' } }));
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, seen, close: () => new Promise((r) => srv.close(() => r())) };
}

function environ(pid: number): string {
  return readFileSync(`/proc/${pid}/environ`, 'utf8');
}

describe('secrets', () => {
  it('the policy key reaches only the model server: not other children, the head page, or the log', async () => {
    const key = canary('policy');
    const header = canary('header');
    const urlPassword = canary('url');
    const stub = await startStub();
    const dir = mkdtempSync(join(tmpdir(), 'ng-secrets-'));
    const extra = join(dir, 'extra.yaml');
    writeFileSync(
      extra,
      [
        `policy_base_url: ${stub.url}`,
        'policy_model_name: stub-model',
        'telemetry:',
        '  extra_headers:',
        `    x-api-key: ${header}`,
        `  endpoint: http://user:${urlPassword}@127.0.0.1:9/collect`,
        '',
      ].join('\n'),
    );
    const stack = await startStack([`+config_paths=[${WEATHER},${OPENAI},${extra}]`, `+policy_api_key=${key}`]);
    try {
      const client = await ServerClient.fromHeadServer({ host: '127.0.0.1', port: stack.headPort });
      const instances = (await client.get('head_server', '/server_instances')).json<{ name: string; pid: number }[]>();
      expect(instances.map((i) => i.name).sort()).toEqual(['policy_model', 'simple_weather', 'simple_weather_simple_agent']);

      // Child environments: the key only where it is used; the other canaries nowhere.
      for (const i of instances) {
        const env = environ(i.pid);
        expect(env, `${i.name}'s environment`).toContain('NEMO_GYM_CONFIG_DICT=');
        if (i.name === 'policy_model') expect(env, 'the model server needs its key').toContain(key);
        else expect(env, `${i.name}'s environment holds the policy key`).not.toContain(key);
        expect(env, `${i.name}'s environment`).not.toContain(header);
        expect(env, `${i.name}'s environment`).not.toContain(urlPassword);
      }

      // The served config: no canary, but host/port of every instance (calls between servers work).
      const page = (await client.get('head_server', '/global_config_dict_yaml')).text;
      for (const c of [key, header, urlPassword]) expect(page).not.toContain(c);
      expect(page).toContain('http://user:****@127.0.0.1:9/collect');
      const weather = await client.post('simple_weather', '/get_weather', { city: 'Lima' });
      expect(weather.json()).toEqual({ city: 'Lima', weather_description: 'The weather in Lima is cold.' });

      // The model server still uses its key: the backend receives it as the bearer token.
      const res = await client.post('policy_model', '/v1/responses', { input: 'hello' });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(stub.seen.length).toBeGreaterThan(0);
      expect(stub.seen[0]!.authorization).toBe(`Bearer ${key}`);
      expect(res.text).not.toContain(key);
      await client.close();

      await stack.stop('SIGTERM');
      for (const c of [key, header, urlPassword]) expect(stack.output(), 'ng-run output').not.toContain(c);
    } finally {
      await stack.stop('SIGKILL');
      await stub.close();
    }
  }, 90_000);

  it('ng-dump-config masks hyphenated keys, camelCase keys and credentials in URLs', async () => {
    const key = canary('policy');
    const header = canary('header');
    const urlPassword = canary('url');
    const camel = canary('camel');
    const dir = mkdtempSync(join(tmpdir(), 'ng-secrets-'));
    const cfg = join(dir, 'c.yaml');
    writeFileSync(
      cfg,
      [
        'svc:',
        '  extra_headers:',
        `    x-api-key: ${header}`,
        `  base_url: https://user:${urlPassword}@example.invalid/v1?mode=a`,
        `  clientApiKey: ${camel}`,
        `  copy_of_key: "prefix-\${policy_api_key}"`,
        '  max_tokens: 512',
        '',
      ].join('\n'),
    );
    const res = await runCommand('dump-config', [`+config_paths=[${cfg}]`, `+policy_api_key=${key}`]);
    expect(res.code, res.stderr).toBe(0);
    for (const c of [key, header, urlPassword, camel]) expect(res.stdout).not.toContain(c);
    expect(res.stdout).toContain('x-api-key: "****"');
    expect(res.stdout).toContain('base_url: https://user:****@example.invalid/v1?mode=a');
    expect(res.stdout).toContain('copy_of_key: prefix-****');
    expect(res.stdout).toContain('max_tokens: 512');
  });
});
