import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ServerClient } from '@nemo-gym/core';
import { isAlive, runCommand, startStack } from './helpers/stack.js';

const WEATHER = 'resources_servers/simple_weather/configs/simple_weather.yaml';
const REPLAY = 'responses_api_models/replay_model/configs/replay_model.yaml';

describe('ng-run', () => {
  it('starts three servers, serves the config, keeps sessions, and stops with no leftover process', async () => {
    const stack = await startStack([`+config_paths=[${WEATHER},${REPLAY}]`]);
    try {
      expect(stack.output()).toMatch(/All 3 server\(s\) ready in [\d.]+ s/);
      expect(stack.output()).toMatch(/simple_weather_simple_agent\s+responses_api_agents\s+simple_agent\s+http:\/\/127\.0\.0\.1:\d+\s+\d+/);

      const client = await ServerClient.fromHeadServer({ host: '127.0.0.1', port: stack.headPort });
      const tool = await client.post('simple_weather', '/get_weather', { city: 'Lima' });
      expect(tool.json()).toEqual({ city: 'Lima', weather_description: 'The weather in Lima is cold.' });
      // Session cookie round trip: sending the cookie back keeps the session id.
      const name = Object.keys(tool.cookies)[0]!;
      expect(name).toBe('SimpleWeatherResourcesServer___simple_weather');
      const again = await client.post('simple_weather', '/get_weather', { city: 'Lima' }, { cookies: tool.cookies });
      expect(again.cookies[name]).toBe(tool.cookies[name]);
      const other = await client.post('simple_weather', '/get_weather', { city: 'Lima' });
      expect(other.cookies[name]).not.toBe(tool.cookies[name]);

      const instances = (await client.get('head_server', '/server_instances')).json<{ name: string; pid: number }[]>();
      expect(instances.map((i) => i.name).sort()).toEqual(['policy_model', 'simple_weather', 'simple_weather_simple_agent']);
      await client.close();

      const code = await stack.stop('SIGTERM');
      expect(code).toBe(0);
      await new Promise((r) => setTimeout(r, 200));
      for (const i of instances) expect(isAlive(i.pid)).toBe(false);
    } finally {
      await stack.stop('SIGKILL');
    }
  });

  it('names a server that dies during start-up and shows its log', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ng-run-'));
    const cfg = join(dir, 'broken.yaml');
    // The replay model cannot read its recordings: it exits at start-up.
    writeFileSync(cfg, 'policy_model:\n  responses_api_models:\n    replay_model:\n      entrypoint: app.ts\n      recordings_jsonl_fpaths: [/nonexistent/recordings.jsonl]\n');
    const res = await runCommand('run', [`+config_paths=[${cfg}]`, '+head_server.port=0']);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/Server `policy_model` \(responses_api_models\/replay_model\) exited during start-up/);
    expect(res.stderr).toMatch(/recordings\.jsonl/);
  });
});

describe('config errors from the command line', () => {
  const noStack = (s: string) => expect(s).not.toMatch(/\n\s+at .*\(/);

  it('a missing config file', async () => {
    const r = await runCommand('dump-config', ['+config_paths=[configs/does_not_exist.yaml]']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Config file not found: .*configs\/does_not_exist\.yaml \(listed in config_paths by the command line\)/);
    noStack(r.stderr);
  });

  it('a YAML syntax error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ng-cfg-'));
    writeFileSync(join(dir, 'bad.yaml'), 'a:\n  b: [1, 2\n');
    const r = await runCommand('dump-config', [`+config_paths=[${join(dir, 'bad.yaml')}]`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/YAML syntax error in .*bad\.yaml at line \d+, column \d+/);
    noStack(r.stderr);
  });

  it('an unknown server ref', async () => {
    const r = await runCommand('dump-config', [`+config_paths=[${WEATHER}]`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/simple_weather_simple_agent\.responses_api_agents\.simple_agent\.model_server` refers to the responses_api_models server `policy_model`, which is not in the config/);
    expect(r.stderr).toMatch(/simple_weather\.yaml/);
    noStack(r.stderr);
  });

  it('an unresolvable interpolation', async () => {
    const r = await runCommand('dump-config', ['+config_paths=[responses_api_models/openai_model/configs/openai_model.yaml]']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/openai_model\.yaml/);
    expect(r.stderr).toMatch(/\$\{policy_base_url\}/);
    noStack(r.stderr);
  });

  it('dump-config never prints a key', async () => {
    const r = await runCommand('dump-config', ['+policy_api_key=sk-verysecret123', '+policy_base_url=http://127.0.0.1:1/v1', '+policy_model_name=m', '+config_paths=[responses_api_models/openai_model/configs/openai_model.yaml]']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('sk-verysecret123');
    expect(r.stdout).toMatch(/openai_api_key: "?\*\*\*\*"?/);
    expect(r.stdout).toMatch(/openai_base_url: http:\/\/127\.0\.0\.1:1\/v1/);
  });

  it('ng-help lists the commands', async () => {
    const r = await runCommand('help', []);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ng-run/);
    expect(r.stdout).toMatch(/ng-collect-rollouts/);
  });
});
