/**
 * The global settings are declared once (core/config GLOBAL_SETTINGS): the strict-parameter
 * check accepts them, --help lists them and ng-dump-config +settings=true prints them, and every
 * setting the README and docs name is among them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_HEAD_PORT, GLOBAL_SETTING_NAMES, GLOBAL_SETTINGS, headServerOf, originOf, parseOverride, RESERVED_KEYS } from '@nemo-gym/core/config';
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS, ServerClient } from '@nemo-gym/core/client';
import { COMMANDS } from '../src/commands/index.js';
import { checkParameters, GLOBAL_KEYS } from '../src/params.js';
import { runCli } from '../src/runtime.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const run = COMMANDS.find((c) => c.name === 'run')!;
const dump = COMMANDS.find((c) => c.name === 'dump-config')!;

afterEach(() => vi.restoreAllMocks());

function captureOut(): () => string {
  const out: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => (out.push(String(c)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  return () => out.join('');
}

function accepted(argv: string): boolean {
  try {
    checkParameters(run, [parseOverride(argv)], { config: {}, instanceNames: [], skipEnv: true });
    return true;
  } catch {
    return false;
  }
}

/** The server instance names the shipped configs define (a `++<instance>.…` override in the docs is config, not a setting). */
function shippedInstanceNames(): Set<string> {
  const names = new Set<string>();
  for (const group of ['resources_servers', 'responses_api_models', 'responses_api_agents']) {
    for (const server of readdirSync(`${repo}${group}`)) {
      let files: string[] = [];
      try {
        files = readdirSync(`${repo}${group}/${server}/configs`).filter((f) => f.endsWith('.yaml'));
      } catch {
        continue;
      }
      for (const f of files) {
        for (const m of readFileSync(`${repo}${group}/${server}/configs/${f}`, 'utf8').matchAll(/^([A-Za-z_][\w-]*):/gm)) names.add(m[1]!);
      }
    }
  }
  return names;
}

/** Every top-level name the README and docs write as `+name=…`, `+name.…` or `` `+name` ``. */
function documentedNames(): Set<string> {
  const pages = ['README.md', ...readdirSync(`${repo}docs`).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const names = new Set<string>();
  for (const page of pages) {
    for (const m of readFileSync(`${repo}${page}`, 'utf8').matchAll(/\+([a-z_][a-z0-9_]*)[=.`]/g)) names.add(m[1]!);
  }
  return names;
}

describe('global settings', () => {
  it('ng-run +http_headers_timeout_s=5 and the other HTTP settings pass the strict check; a typo of one does not', () => {
    for (const s of ['+http_headers_timeout_s=5', '+http_connect_timeout_s=1', '+http_body_timeout_s=60', '+http_connections_per_host=8', '+http_pipelining=2']) {
      expect(accepted(s), s).toBe(true);
    }
    expect(accepted('+http_header_timeout_s=5')).toBe(false);
  });

  it('every setting the README and docs name is declared and accepted by ng-run', () => {
    const readme = readFileSync(`${repo}README.md`, 'utf8');
    // The README's list of HTTP settings ("Settings: `a`, `b`, …").
    const listed = [.../Settings: ((?:`[a-z_]+`,?\s*(?:and\s*)?)+)/.exec(readme)![1]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
    expect(listed).toContain('http_headers_timeout_s');
    // The keys the training guide says trainers pass and this stack accepts.
    const guide = readFileSync(`${repo}docs/train-with-nemo-rl-or-verl.md`, 'utf8');
    const trainerKeys = [...guide.matchAll(/^\| ((?:`[a-z_]+`(?:, )?)+) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([a-z_]+)`/g)].map((k) => k[1]!));
    expect(trainerKeys).toContain('skip_venv_if_present');
    // Names on the command line in the docs that are neither a command's parameter, a config key of an example nor a typo shown on purpose.
    const flags = new Set(COMMANDS.flatMap((c) => (c.flags ?? []).map((f) => f.name)));
    const notSettings = new Set(['key', 'h', 'num_repeat', 'min_rewrd', 'artifact_fpath', 'output_fpath', 'demo_model', 'demo_judge', 'policy_model', 'simple_weather', 'simple_weather_simple_agent']);
    const instances = shippedInstanceNames();
    expect(instances).toContain('simple_weather_simple_agent');
    const onCommandLines = [...documentedNames()].filter((n) => !flags.has(n) && !notSettings.has(n) && !instances.has(n));
    expect(onCommandLines).toContain('replica_health_interval_s');
    for (const name of new Set([...listed, ...trainerKeys.filter((k) => k !== 'dry_run'), ...onCommandLines])) {
      expect(GLOBAL_SETTING_NAMES, name).toContain(name);
      expect(accepted(`+${name}=1`), `ng-run +${name}=1`).toBe(true);
    }
  });

  it('the reserved keys and the upstream keys stay accepted', () => {
    for (const k of RESERVED_KEYS) expect(GLOBAL_KEYS).toContain(k);
    for (const k of ['uv_venv_dir', 'uv_cache_dir', 'skip_venv_if_present', 'ray_head_node_address', 'global_aiohttp_connector_limit', 'mlflow_tracking_uri', 'use_absolute_ip']) {
      expect(accepted(`+${k}=x`), k).toBe(true);
    }
  });

  it('--help, ng-dump-config +settings=true and the declaration list the same settings', async () => {
    let out = captureOut();
    expect(await runCli(run, ['--help'], { skipEnv: true })).toBe(0);
    const help = out();
    vi.restoreAllMocks();
    const section = help.slice(help.indexOf('Global settings'));
    for (const name of GLOBAL_SETTING_NAMES) expect(section, name).toMatch(new RegExp(`\\b${name}\\b`));
    expect(section).toMatch(/- http_headers_timeout_s \(float, default 3600\)\s+seconds to wait for the response headers/);

    out = captureOut();
    expect(await runCli(dump, ['+settings=true', '+http_headers_timeout_s=5', '+policy_api_key=sk-abcdefgh12345678'], { skipEnv: true })).toBe(0);
    const lines = out().trimEnd().split('\n');
    expect(lines.map((l) => l.split(':')[0])).toEqual(GLOBAL_SETTING_NAMES);
    expect(lines).toContain(`http_headers_timeout_s: 5  # float, default 3600; ${GLOBAL_SETTINGS.http_headers_timeout_s.doc}`);
    expect(lines.find((l) => l.startsWith('http_connect_timeout_s:'))).toMatch(/^http_connect_timeout_s: 30 {2}#/);
    expect(lines.join('\n')).not.toContain('sk-abcdefgh12345678');
  });

  it('ServerClient takes its defaults from the declaration and its values from the config', () => {
    expect(DEFAULT_TIMEOUTS).toEqual({ connectMs: 30_000, headersMs: 3_600_000, bodyMs: 3_600_000 });
    expect(DEFAULT_RETRY.maxAttempts).toBe(GLOBAL_SETTINGS.http_retry_max_attempts.default);
    expect(DEFAULT_RETRY.maxElapsedMs).toBe(GLOBAL_SETTINGS.http_retry_max_elapsed_s.default * 1000);
    const client = new ServerClient({ globalConfig: { http_headers_timeout_s: 5, http_connect_timeout_s: 'x' } });
    const timeouts = (client as unknown as { timeouts: { connectMs: number; headersMs: number } }).timeouts;
    expect(timeouts.headersMs).toBe(5000);
    expect(timeouts.connectMs).toBe(30_000);
    void client.close();
  });
  it('the head server is found by one rule: its block, defaulted to 127.0.0.1 and DEFAULT_HEAD_PORT', () => {
    expect(DEFAULT_HEAD_PORT).toBe(11000);
    expect(headServerOf({})).toEqual({ host: '127.0.0.1', port: 11000 });
    expect(headServerOf({ head_server: { port: 12000 } })).toEqual({ host: '127.0.0.1', port: 12000 });
    expect(originOf(headServerOf({ head_server: { host: '10.0.0.2', port: 12000, token: 't' } }))).toBe('http://10.0.0.2:12000');
    expect(GLOBAL_SETTINGS.head_server.default).toEqual(headServerOf({}));
  });
});
