import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findOpenPort, parseGlobalConfig, parseOverride, redactSecrets, resolveAll } from '@nemo-gym/core/config';
import { getFirstServerConfigDict } from '../src/config/instances.js';
import { getGlobalConfig } from '../src/config/parse.js';
import { ConfigError } from '@nemo-gym/core/errors';
import { mergeAll, parseOverrideValue, resetGlobalConfigCache } from '@nemo-gym/core/internal';

const fixedPort = async () => 12345;
const opts = { skipEnv: true, findPort: fixedPort, warn: () => undefined };

function tmp(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ng-config-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

describe('parseGlobalConfig (upstream test_global_config)', () => {
  it('an empty config gets only the head server defaults', async () => {
    const { config } = await parseGlobalConfig(opts);
    expect(config).toEqual({ head_server: { host: '127.0.0.1', port: 11000 }, disallowed_ports: [11000] });
    expect('config_paths' in config).toBe(false);
  });

  it('NEMO_GYM_CONFIG_DICT is used verbatim', async () => {
    resetGlobalConfigCache();
    process.env.NEMO_GYM_CONFIG_DICT = 'a: 2';
    try {
      expect(await getGlobalConfig()).toEqual({ a: 2 });
    } finally {
      delete process.env.NEMO_GYM_CONFIG_DICT;
      resetGlobalConfigCache();
    }
  });

  it('merges config files and env.yaml, keeping the list', async () => {
    const dir = tmp({ 'a.yaml': 'from_a: 1\nshared: a\n', 'b.yaml': 'from_b: 2\nshared: b\n', 'env.yaml': 'extra_dot_env_key: 2\n' });
    const paths = [join(dir, 'a.yaml'), join(dir, 'b.yaml')];
    const { config } = await parseGlobalConfig({ ...opts, skipEnv: false, envPath: join(dir, 'env.yaml'), initial: { config_paths: paths } });
    expect(config.from_a).toBe(1);
    expect(config.from_b).toBe(2);
    expect(config.shared).toBe('b');
    expect(config.extra_dot_env_key).toBe(2);
    expect(config.config_paths).toEqual(paths);
  });

  it('expands config_paths recursively; a child overrides its parent', async () => {
    const dir = tmp({ 'child.yaml': 'child_key: 1\nshared: child\n', 'parent.yaml': '' });
    writeFileSync(join(dir, 'parent.yaml'), `config_paths: [${join(dir, 'child.yaml')}]\nshared: parent\nparent_key: 1\n`);
    const { config } = await parseGlobalConfig({ ...opts, initial: { config_paths: [join(dir, 'parent.yaml')] } });
    expect(config.config_paths).toEqual([join(dir, 'parent.yaml'), join(dir, 'child.yaml')]);
    expect(config.child_key).toBe(1);
    expect(config.parent_key).toBe(1);
    expect(config.shared).toBe('child');
  });

  it('a cycle of config_paths terminates', async () => {
    const dir = tmp({ 'x.yaml': '', 'y.yaml': '' });
    writeFileSync(join(dir, 'x.yaml'), `config_paths: [${join(dir, 'y.yaml')}]\nx: 1\n`);
    writeFileSync(join(dir, 'y.yaml'), `config_paths: [${join(dir, 'x.yaml')}]\ny: 1\n`);
    const { config } = await parseGlobalConfig({ ...opts, initial: { config_paths: [join(dir, 'x.yaml')] } });
    expect(config.config_paths).toHaveLength(2);
  });

  it('fills host and port of servers only', async () => {
    const { config } = await parseGlobalConfig({ ...opts, initial: { a: { responses_api_models: { c: { entrypoint: 'app.py' } } }, b: { c: { d: {} } }, c: 2 } });
    expect(config.a).toEqual({ responses_api_models: { c: { entrypoint: 'app.py', host: '127.0.0.1', port: 12345 } } });
    expect(config.b).toEqual({ c: { d: {} } });
    expect(config.c).toBe(2);
    expect(config.disallowed_ports).toEqual([11000, 12345]);
  });

  it('accepts a valid server ref and allocates ports in key order', async () => {
    let next = 20000;
    const { config } = await parseGlobalConfig({
      ...opts,
      findPort: async () => next++,
      initial: {
        agent: { responses_api_agents: { a: { entrypoint: 'app.py', resources_server: { type: 'resources_servers', name: 'res' } } } },
        res: { resources_servers: { r: { entrypoint: 'app.py', domain: 'other' } } },
      },
    });
    expect(getFirstServerConfigDict(config, 'agent')?.port).toBe(20000);
    expect(getFirstServerConfigDict(config, 'res')?.port).toBe(20001);
  });

  it('rejects a ref to a missing server, with a suggestion', async () => {
    const initial = {
      agent: { responses_api_agents: { a: { entrypoint: 'app.py', resources_server: { type: 'resources_servers', name: 'ress' } } } },
      res: { resources_servers: { r: { entrypoint: 'app.py', domain: 'other' } } },
    };
    await expect(parseGlobalConfig({ ...opts, initial })).rejects.toThrow(/refers to the resources_servers server `ress`, which is not in the config\. Did you mean `res`\?/);
  });

  it('rejects a ref whose type does not match the instance', async () => {
    const initial = {
      agent: { responses_api_agents: { a: { entrypoint: 'app.py', resources_server: { type: 'resources_servers', name: 'm' } } } },
      m: { responses_api_models: { r: { entrypoint: 'app.py' } } },
    };
    await expect(parseGlobalConfig({ ...opts, initial })).rejects.toThrow(/it is a responses_api_models server, not resources_servers/);
  });

  it('leaves `name: ???` refs alone (unused judge refs)', async () => {
    const initial = { res: { resources_servers: { r: { entrypoint: 'app.py', domain: 'math', judge_model_server: { type: 'responses_api_models', name: '???' } } } } };
    const { config } = await parseGlobalConfig({ ...opts, initial });
    expect(getFirstServerConfigDict(config, 'res')?.port).toBe(12345);
  });

  it('allocated ports never equal the head port', async () => {
    const ports = [11000, 11000, 15000];
    const { config } = await parseGlobalConfig({
      ...opts,
      findPort: (disallowed) => findOpenPortFrom(ports, disallowed),
      initial: { a: { responses_api_models: { c: { entrypoint: 'app.py' } } } },
    });
    expect(getFirstServerConfigDict(config, 'a')?.port).toBe(15000);
  });

  it('almost-servers raise unless error_on_almost_servers is false', async () => {
    const initial = {
      bad_domain: { resources_servers: { r: { entrypoint: 'app.py', domain: 'not_a_domain' } } },
      bad_license: {
        responses_api_agents: {
          a: { entrypoint: 'app.py', datasets: [{ name: 'train', type: 'train', jsonl_fpath: 'x.jsonl', license: 'WTFPL', gitlab_identifier: { dataset_name: 'x', version: '0.0.1', artifact_fpath: 'x' } }] },
        },
      },
    };
    await expect(parseGlobalConfig({ ...opts, initial })).rejects.toThrow(/almost-server.*validation errors/i);
    let printed = '';
    const { config } = await parseGlobalConfig({ ...opts, warn: (t) => (printed += t), initial: { ...initial, error_on_almost_servers: false } });
    expect(printed).toMatch(/Configuration Warnings/);
    expect(printed).toMatch(/Almost-Server/);
    expect(printed).toMatch(/bad_domain/);
    expect(printed).toMatch(/bad_license/);
    expect(printed).toMatch(/domain/);
    expect(printed).toMatch(/license/);
    expect(getFirstServerConfigDict(config, 'bad_domain')?.port).toBeUndefined();
  });

  it('a resources server without a domain is an almost-server', async () => {
    await expect(parseGlobalConfig({ ...opts, initial: { r: { resources_servers: { x: { entrypoint: 'app.py' } } } } })).rejects.toThrow(/A domain is required/);
  });

  it('datasets: num_repeats must be >= 1, and train data needs a license', async () => {
    const agent = (ds: unknown) => ({ a: { responses_api_agents: { s: { entrypoint: 'app.py', datasets: [ds] } } } });
    await expect(parseGlobalConfig({ ...opts, initial: agent({ name: 'e', type: 'example', jsonl_fpath: 'e.jsonl', num_repeats: 0 }) })).rejects.toThrow(/greater than or equal to 1/);
    await expect(parseGlobalConfig({ ...opts, initial: agent({ name: 't', type: 'train', jsonl_fpath: 't.jsonl' }) })).rejects.toThrow(
      /A Gitlab path is required for t \(or a huggingface_identifier: \{repo_id, artifact_fpath\}\)/,
    );
  });

  it('datasets: a huggingface_identifier names where train data is published, its repo id checked', async () => {
    const agent = (hf: unknown) => ({
      a: { responses_api_agents: { s: { entrypoint: 'app.py', datasets: [{ name: 't', type: 'train', jsonl_fpath: 't.jsonl', license: 'Apache 2.0', huggingface_identifier: hf }] } } },
    });
    const parsed = await parseGlobalConfig({ ...opts, initial: agent({ repo_id: 'nvidia/Nemotron-RL-knowledge-mcqa', artifact_fpath: 'train.jsonl' }) });
    const ds = parsed.instances.find((i) => i.name === 'a')!.datasets[0]!;
    expect(ds.huggingface_identifier).toEqual({ repo_id: 'nvidia/Nemotron-RL-knowledge-mcqa', artifact_fpath: 'train.jsonl' });
    // artifact_fpath is optional (a repo read by split), as upstream allows.
    await expect(parseGlobalConfig({ ...opts, initial: agent({ repo_id: 'nvidia/x' }) })).resolves.toBeDefined();
    await expect(parseGlobalConfig({ ...opts, initial: agent({ repo_id: 'just-a-name' }) })).rejects.toThrow(/<owner>\/<name>/);
    await expect(parseGlobalConfig({ ...opts, initial: agent({ artifact_fpath: 'x.jsonl' }) })).rejects.toThrow(/repo_id/);
  });
});

async function findOpenPortFrom(candidates: number[], disallowed: readonly number[]): Promise<number> {
  for (const p of candidates) if (!disallowed.includes(p)) return p;
  throw new Error('none');
}

describe('findOpenPort', () => {
  it('returns a bindable port outside the disallowed list', async () => {
    const p = await findOpenPort([11000]);
    expect(p).toBeGreaterThan(0);
    expect(p).not.toBe(11000);
  });
  it('gives up after the attempt budget', async () => {
    // Every port is disallowed, so each attempt fails.
    const all = Array.from({ length: 65536 }, (_, i) => i);
    await expect(findOpenPort(all, 5)).rejects.toThrow(/Unable to find an open port .* after 5 attempts/);
  });
});

describe('command-line overrides', () => {
  it('types values as Hydra does', () => {
    expect(parseOverrideValue('null')).toBeNull();
    expect(parseOverrideValue('true')).toBe(true);
    expect(parseOverrideValue('False')).toBe(false);
    expect(parseOverrideValue('123')).toBe(123);
    expect(parseOverrideValue('1.5')).toBe(1.5);
    expect(parseOverrideValue('1e-3')).toBe(0.001);
    expect(parseOverrideValue('[a.yaml, b.yaml]')).toEqual(['a.yaml', 'b.yaml']);
    expect(parseOverrideValue('{k: v, n: 1, l: [1, 2]}')).toEqual({ k: 'v', n: 1, l: [1, 2] });
    expect(parseOverrideValue("'123'")).toBe('123');
    expect(parseOverrideValue('"a,b"')).toBe('a,b');
    expect(parseOverrideValue('${simple_weather_config_paths}')).toBe('${simple_weather_config_paths}');
    expect(parseOverrideValue('[${a}, x]')).toEqual(['${a}', 'x']);
    expect(parseOverrideValue('gpt-4o-mini')).toBe('gpt-4o-mini');
    expect(parseOverrideValue('')).toBe('');
  });

  it('parses the three override forms and dotted keys', () => {
    expect(parseOverride('+a.b.c=1')).toMatchObject({ kind: 'add', path: ['a', 'b', 'c'], value: 1 });
    expect(parseOverride('++a=x')).toMatchObject({ kind: 'force', path: ['a'], value: 'x' });
    expect(parseOverride('~a.b')).toMatchObject({ kind: 'delete', path: ['a', 'b'] });
  });

  it('rejects a bare key=value with a hint', () => {
    expect(() => parseOverride('policy_model_name=gpt')).toThrow(/\+policy_model_name=gpt/);
  });

  it('rejects a malformed list with the position', () => {
    expect(() => parseOverride('+config_paths=[a.yaml')).toThrow(ConfigError);
  });

  it('CLI beats env.yaml and files; ~key deletes; --config and --set work', async () => {
    const dir = tmp({ 'a.yaml': 'x: file\ny: file\nz: file\n', 'env.yaml': 'x: env\nw: env\n' });
    const { config } = await parseGlobalConfig({
      ...opts,
      skipEnv: false,
      envPath: join(dir, 'env.yaml'),
      argv: ['--config', join(dir, 'a.yaml'), '+x=cli', '--set', 'y=set', '~z'],
    });
    expect(config.x).toBe('cli');
    expect(config.y).toBe('set');
    expect(config.w).toBe('env');
    expect('z' in config).toBe(false);
  });

  it('a bare string config_paths is rejected with the fix', async () => {
    await expect(parseGlobalConfig({ ...opts, argv: ['+config_paths=a.yaml'] })).rejects.toThrow(/must be a list of paths.*\+config_paths=\[a\.yaml\]/);
  });
});

describe('merge and interpolation', () => {
  it('dicts merge, lists replace, ??? does not overwrite', () => {
    const out = mergeAll([{ dict: { a: { b: 1, c: [1, 2] }, m: 'set' } }, { dict: { a: { d: 2, c: [3] }, m: '???', n: '???' } }]);
    expect(out).toEqual({ a: { b: 1, c: [3], d: 2 }, m: 'set', n: '???' });
  });

  it('resolves whole and embedded references, and env vars', () => {
    process.env.NG_TEST_VAR = 'from-env';
    const out = resolveAll({ base: 'http://x', n: 3, l: [1], url: '${base}/v1', copy: '${n}', list: '${l}', e: '${oc.env:NG_TEST_VAR}', d: '${oc.env:NG_MISSING_VAR,fallback}' });
    expect(out).toMatchObject({ url: 'http://x/v1', copy: 3, list: [1], e: 'from-env', d: 'fallback' });
  });

  it('an unresolvable interpolation in a server names the file and the key', async () => {
    const dir = tmp({ 'm.yaml': 'policy_model:\n  responses_api_models:\n    openai_model:\n      entrypoint: app.ts\n      openai_base_url: ${policy_base_url}\n' });
    const err = await parseGlobalConfig({ ...opts, initial: { config_paths: [join(dir, 'm.yaml')] } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toContain('m.yaml');
    expect(msg).toContain('policy_model.responses_api_models.openai_model.openai_base_url');
    expect(msg).toContain('${policy_base_url}');
  });

  it('a cycle is reported', () => {
    expect(() => resolveAll({ a: '${b}', b: '${a}' })).toThrow(/cycle/);
  });
});

describe('config file errors', () => {
  it('a missing file names the file and who listed it', async () => {
    const dir = tmp({ 'p.yaml': '' });
    writeFileSync(join(dir, 'p.yaml'), `config_paths: [${join(dir, 'nope.yaml')}]\n`);
    await expect(parseGlobalConfig({ ...opts, initial: { config_paths: [join(dir, 'p.yaml')] } })).rejects.toThrow(/Config file not found: .*nope\.yaml \(listed in config_paths by .*p\.yaml\)/);
  });

  it('a YAML syntax error names the file, line and column', async () => {
    const dir = tmp({ 'bad.yaml': 'a:\n  b: 1\n c: [unclosed\n' });
    await expect(parseGlobalConfig({ ...opts, initial: { config_paths: [join(dir, 'bad.yaml')] } })).rejects.toThrow(/YAML syntax error in .*bad\.yaml at line \d+, column \d+/);
  });
});

describe('redactSecrets', () => {
  it('masks api keys, tokens, secrets and passwords at any depth', () => {
    const out = redactSecrets({ policy_api_key: 'sk-123', m: { x: { openai_api_key: 'sk-456', mlflow_tracking_token: 't', db_password: 'p', model: 'gpt' } } });
    expect(JSON.stringify(out)).not.toMatch(/sk-|"t"|"p"/);
    expect(out.m.x.model).toBe('gpt');
  });
});

afterEach(() => {
  delete process.env.NG_TEST_VAR;
});
