/**
 * The command line of every ng-* command: commander options and help around the Hydra-style
 * settings, which reach the config parser unchanged.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ConfigDict } from '@nemo-gym/core/config';
import { COMMANDS } from '../src/commands/index.js';
import { commandNames, exitCodeOf, pnpmScriptOf, runCli, type CommandSpec } from '../src/runtime.js';
import { ConfigError, NgError, UsageError } from '@nemo-gym/core/errors';
import { TestRunError } from '../src/errors.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const dirs: string[] = [];

afterEach(() => {
  vi.restoreAllMocks();
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

function capture(): { out: () => string; err: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => (out.push(String(c)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => (err.push(String(c)), true));
  return { out: () => out.join(''), err: () => err.join('') };
}

/** The parameters of the probe command below. */
const PROBE_FLAGS = ['x', 'f', 'n', 't', 's', 'l', 'd', 'k', 'm', 'p', 'a', 'other'].map((name) => ({ name, type: 'any', description: `setting ${name}` }));

/** A command that records the config it was given. */
function recorder(flags: CommandSpec['flags'] = PROBE_FLAGS): { spec: CommandSpec; seen: ConfigDict[] } {
  const seen: ConfigDict[] = [];
  const spec: CommandSpec = {
    name: 'probe',
    summary: 'Records its config',
    flags,
    main: async (config) => {
      seen.push(config);
      return 0;
    },
  };
  return { spec, seen };
}

function yamlFiles(files: Record<string, string>): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'ng-cli-args-'));
  dirs.push(dir);
  const paths: Record<string, string> = {};
  for (const [name, text] of Object.entries(files)) {
    paths[name] = join(dir, name);
    writeFileSync(paths[name]!, text);
  }
  return paths;
}

describe('Hydra-style settings through commander', () => {
  it('config_paths lists, +, ++, ~, dotted keys and typed values reach the config', async () => {
    const f = yamlFiles({ 'a.yaml': 'from_a: 1\nshared: a\ngone: x\n', 'b.yaml': 'from_b: [1, 2]\nshared: b\n' });
    const { spec, seen } = recorder();
    const code = await runCli(
      spec,
      [`+config_paths=[${f['a.yaml']},${f['b.yaml']}]`, '+x.y.z=3', '++shared=cli', '~gone', '+f=0.5', '+n=null', '+t=true', "+s='007'", '+l=[a,1]', '+d={k: v}'],
      { skipEnv: true },
    );
    expect(code).toBe(0);
    const c = seen[0]!;
    expect(c).toMatchObject({ from_a: 1, from_b: [1, 2], shared: 'cli', x: { y: { z: 3 } }, f: 0.5, n: null, t: true, s: '007', l: ['a', 1], d: { k: 'v' } });
    expect('gone' in c).toBe(false);
  });

  it('--config, -c and --set (both spellings) work as before', async () => {
    const f = yamlFiles({ 'a.yaml': 'from_a: 1\n', 'b.yaml': 'from_b: 2\n', 'c.yaml': 'from_c: 3\n' });
    const { spec, seen } = recorder();
    const code = await runCli(spec, ['--config', f['a.yaml']!, '-c', f['b.yaml']!, `--config=${f['c.yaml']}`, '--set', 'k=1', '--set=m.n=[x]', '+p=2'], { skipEnv: true });
    expect(code).toBe(0);
    expect(seen[0]).toMatchObject({ from_a: 1, from_b: 2, from_c: 3, k: 1, m: { n: ['x'] }, p: 2 });
  });

  it('--set overrides a +key of the same name, as ++key does', async () => {
    const { spec, seen } = recorder();
    expect(await runCli(spec, ['--set', 'a=2', '+a=1'], { skipEnv: true })).toBe(0);
    expect(seen[0]!.a).toBe(2);
  });

  it('one exit rule: 2 for usage and config problems (the run never started), 1 for a failed run', () => {
    for (const err of [new UsageError('x'), new ConfigError('x'), new NgError('NG_ERR_PREFLIGHT', 'x'), new NgError('NG_ERR_COLLECT_FILE', 'x')]) expect(exitCodeOf(err), err.code).toBe(2);
    for (const err of [new TestRunError('x'), new NgError('NG_ERR_INTERNAL', 'x'), new Error('x')]) expect(exitCodeOf(err)).toBe(1);
  });

  it('a key without a plus is refused as before (a usage exit, how to write it)', async () => {
    const io = capture();
    const { spec, seen } = recorder();
    expect(await runCli(spec, ['foo=bar'], { skipEnv: true })).toBe(2);
    expect(seen).toHaveLength(0);
    expect(io.err()).toMatch(/ng-probe: Command-line override `foo=bar`: could not override `foo`.*`\+foo=bar`/);
  });

  it('--help, -h and +h=true print the help with the parameters; the command does not run', async () => {
    const { spec, seen } = recorder([{ name: 'rows', type: 'int', description: 'how many rows', required: true }]);
    for (const argv of [['--help'], ['-h'], ['+h=true'], ['+help=true', '+typo=1']]) {
      const io = capture();
      expect(await runCli(spec, argv, { skipEnv: true })).toBe(0);
      expect(io.out()).toMatch(/^Usage: ng-probe \[options\] \[settings\.\.\.\]/);
      expect(io.out()).toMatch(/--config <path>/);
      expect(io.out()).toMatch(/- rows \(int\)\s+\[required\] how many rows/);
      vi.restoreAllMocks();
    }
    expect(seen).toHaveLength(0);
  });

  it('+h=false is an ordinary setting', async () => {
    const { spec, seen } = recorder();
    expect(await runCli(spec, ['+h=false'], { skipEnv: true })).toBe(0);
    expect(seen[0]!.h).toBe(false);
  });

  it('an unknown flag is a usage error (exit 2) with a suggestion', async () => {
    const io = capture();
    const { spec, seen } = recorder();
    expect(await runCli(spec, ['--conifg', 'a.yaml'], { skipEnv: true })).toBe(2);
    expect(io.err()).toMatch(/ng-probe: Unknown flag `--conifg`\. Did you mean `--config`\? Settings are given as `\+key=value`/);
    expect(await runCli(spec, ['--set'], { skipEnv: true })).toBe(2);
    expect(io.err()).toMatch(/Flag --set needs a value, e.g. `--set key=value`/);
    expect(seen).toHaveLength(0);
  });

  it('a missing required parameter is a usage error that names it', async () => {
    const io = capture();
    const { spec } = recorder([{ name: 'rows', type: 'int', description: 'how many rows', required: true }]);
    expect(await runCli(spec, ['+head_server.port=1'], { skipEnv: true })).toBe(2);
    expect(io.err()).toMatch(/ng-probe needs \+rows=<int>: how many rows\. See `ng-probe --help`/);
  });
});

describe('strict parameters', () => {
  it('an unknown +key is a usage error (exit 2) naming it, with a suggestion; the command does not run', async () => {
    const io = capture();
    const { spec, seen } = recorder([
      { name: 'num_repeats', type: 'int', description: 'repeats' },
      { name: 'agent_name', type: 'str', description: 'agent' },
    ]);
    expect(await runCli(spec, ['+num_repeat=4', '+agent_name=a', '--set', 'foo.bar=1'], { skipEnv: true })).toBe(2);
    expect(seen).toHaveLength(0);
    const err = io.err();
    expect(err).toMatch(/unknown parameter `\+num_repeat=4` \(did you mean `\+num_repeats`\?\)/);
    expect(err).toMatch(/unknown parameter `\+\+foo\.bar=1`/);
    expect(err).toMatch(/ng-probe takes \+num_repeats, \+agent_name \(see `ng-probe --help`\)/);
    expect(err).not.toMatch(/agent_name=a`/);
  });

  it('keys the config knows are accepted: from its files, env.yaml, instances, interpolations, and global settings', async () => {
    const f = yamlFiles({
      'a.yaml': 'custom_setting: 1\nsrv:\n  resources_servers:\n    simple_weather:\n      entrypoint: app.ts\n      domain: other\n      note: ${shared_note}\n',
      'env.yaml': 'team_key: x\n',
    });
    const { spec, seen } = recorder([]);
    const argv = [
      `+config_paths=[${f['a.yaml']}]`,
      '++custom_setting=2',
      '+srv.resources_servers.simple_weather.port=1234',
      '+shared_note=hello',
      '++team_key=y',
      '+policy_model_name=m',
      '+head_server.port=0',
      '"+new_server={resources_servers: {simple_weather: {entrypoint: app.ts, domain: other}}}"'.slice(1, -1),
    ];
    expect(await runCli(spec, argv, { envPath: f['env.yaml'] })).toBe(0);
    expect(seen[0]).toMatchObject({ custom_setting: 2, team_key: 'y', shared_note: 'hello', policy_model_name: 'm' });
  });

  it('a misspelled instance name gets a suggestion', async () => {
    const io = capture();
    const f = yamlFiles({ 'a.yaml': 'simple_weather:\n  resources_servers:\n    simple_weather:\n      entrypoint: app.ts\n      domain: other\n' });
    const { spec } = recorder([]);
    expect(await runCli(spec, [`+config_paths=[${f['a.yaml']}]`, '+simple_wether.resources_servers.simple_weather.port=1'], { skipEnv: true })).toBe(2);
    expect(io.err()).toMatch(/\(did you mean `\+simple_weather\.resources_servers\.simple_weather\.port`\?\)/);
    expect(io.err()).toMatch(/ng-probe has no parameters of its own/);
  });
});

describe('command names', () => {
  const bins = (JSON.parse(readFileSync(join(repo, 'packages/cli/package.json'), 'utf8')) as { bin: Record<string, string> }).bin;
  const scripts = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

  it('every name a help text gives exists: the bins and the pnpm script', async () => {
    for (const c of COMMANDS) {
      const io = capture();
      expect(await runCli(c, ['--help'])).toBe(0);
      const help = io.out();
      vi.restoreAllMocks();
      for (const name of commandNames(c)) {
        expect(bins[name], `${name} in packages/cli/package.json bin`).toBe(`./bin/ng-${c.name}.js`);
        expect(help).toContain(name);
      }
      expect(scripts[pnpmScriptOf(c)], `root script ${pnpmScriptOf(c)}`).toContain(`packages/cli/bin/ng-${c.name}.js`);
      expect(help).toContain(`pnpm ${pnpmScriptOf(c)}`);
      // No mixed spellings such as ng_collect-rollouts.
      expect(help).not.toMatch(/\bng_[a-z_]*-|nemo_gym_[a-z_]*-/);
    }
  });
});
