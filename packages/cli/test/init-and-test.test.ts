/**
 * ng-init-resources-server, ng-test and ng-test-all in a temporary workspace: a folder with
 * node_modules links to this repository's vitest, zod and @nemo-gym/core, and a vitest config
 * like the repository's. The generated server is built with esbuild and its tests are run by
 * ng-test in a child vitest.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { parse as parseYaml } from 'yaml';
import { initResourcesServerMain, parseEntrypoint, pascalCase } from '../src/commands/init-resources-server.js';
import { checkExampleRows, runFolderTests, testAllMain, testMain, validateData, DataValidationError } from '../src/commands/test.js';
import { COMMANDS } from '../src/commands/index.js';
import { pnpmScriptOf, runCli } from '../src/runtime.js';

/** Splits a printed command line into words as a POSIX shell would (double quotes, no expansions). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/"([^"]*)"|(\S+)/g)) words.push(m[1] ?? m[2]!);
  return words;
}

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const coreDir = join(repo, 'packages/core');
let ws: string;
const startCwd = process.cwd();

function link(name: string, target: string) {
  const at = join(ws, 'node_modules', name);
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at, 'dir');
}

beforeAll(() => {
  ws = realpathSync(mkdtempSync(join(tmpdir(), 'ng-init-test-')));
  writeFileSync(join(ws, 'package.json'), JSON.stringify({ name: 'init-test-workspace', private: true, type: 'module' }));
  writeFileSync(join(ws, 'pnpm-workspace.yaml'), 'packages:\n  - resources_servers/*\n  - responses_api_agents/*\n  - responses_api_models/*\n');
  writeFileSync(
    join(ws, 'vitest.config.mjs'),
    `import { defineConfig } from 'vitest/config';
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@nemo-gym\\/core\\/errors$/, replacement: ${JSON.stringify(join(coreDir, 'src/errors-api.ts'))} },
      { find: /^@nemo-gym\\/core\\/([a-z]+)$/, replacement: ${JSON.stringify(join(coreDir, 'src'))} + '/$1/index.ts' },
    ],
  },
  test: { include: ['resources_servers/*/tests/**/*.test.ts', 'responses_api_agents/*/tests/**/*.test.ts', 'responses_api_models/*/tests/**/*.test.ts'], pool: 'forks', maxWorkers: 1 },
});
`,
  );
  const fromCore = createRequire(join(coreDir, 'package.json'));
  link('zod', dirname(fromCore.resolve('zod/package.json')));
  link('vitest', realpathSync(join(repo, 'node_modules/vitest')));
  link('@nemo-gym/core', coreDir);
  link('esbuild', realpathSync(join(repo, 'node_modules/esbuild')));
  mkdirSync(join(ws, 'scripts'));
  for (const f of ['build.mjs', 'build-lib.mjs']) writeFileSync(join(ws, 'scripts', f), readFileSync(join(repo, 'scripts', f)));
  process.chdir(ws);
});

afterAll(() => {
  process.chdir(startCwd);
  rmSync(ws, { recursive: true, force: true });
});

afterEach(() => {
  vi.restoreAllMocks();
});

function captureStdout(): { text: () => string } {
  const chunks: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => {
    chunks.push(String(c));
    return true;
  });
  return { text: () => chunks.join('') };
}

/** What ng-init-resources-server printed for resources_servers/my_env. */
let printed = '';

describe('ng-init-resources-server', () => {
  it('writes a complete server folder with a domain, 5 example rows, README and tests', async () => {
    const out = captureStdout();
    expect(await initResourcesServerMain({ entrypoint: 'resources_servers/my_env' })).toBe(0);
    printed = out.text();
    expect(printed).toContain('Created resources_servers/my_env');
    const dir = join(ws, 'resources_servers/my_env');
    for (const f of ['package.json', 'app.ts', 'tests/app.test.ts', 'configs/my_env.yaml', 'data/example.jsonl', 'data/.gitignore', 'README.md']) {
      expect(existsSync(join(dir, f)), f).toBe(true);
    }
    const cfg = parseYaml(readFileSync(join(dir, 'configs/my_env.yaml'), 'utf8')) as any;
    expect(cfg.my_env_resources_server.resources_servers.my_env).toEqual({ entrypoint: 'app.ts', domain: 'other' });
    const agent = cfg.my_env_simple_agent.responses_api_agents.simple_agent;
    expect(agent.resources_server).toEqual({ type: 'resources_servers', name: 'my_env_resources_server' });
    expect(agent.datasets.map((d: any) => [d.type, d.license ?? null, d.gitlab_identifier?.artifact_fpath ?? null])).toEqual([
      ['train', 'Apache 2.0', 'train.jsonl'],
      ['validation', 'Apache 2.0', 'validation.jsonl'],
      ['example', null, null],
    ]);
    const rows = readFileSync(join(dir, 'data/example.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows).toHaveLength(5);
    for (const r of rows) expect(r.responses_create_params.input[0].role).toBe('user');
    const app = readFileSync(join(dir, 'app.ts'), 'utf8');
    expect(app).toContain("className: 'MyEnvResourcesServer'");
    expect(app).not.toMatch(/__NAME__|__TITLE__/);
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name).toBe('@nemo-gym/my_env');
    expect(readFileSync(join(dir, 'data/.gitignore'), 'utf8')).toContain('*train.jsonl\n');
  });

  it('refuses an existing folder (a usage error) and leaves it alone', async () => {
    const before = readFileSync(join(ws, 'resources_servers/my_env/app.ts'), 'utf8');
    await expect(initResourcesServerMain({ entrypoint: 'resources_servers/my_env' })).rejects.toThrow(
      expect.objectContaining({ code: 'NG_ERR_USAGE', message: 'resources_servers/my_env already exists; nothing was written. Choose another name, or move the folder away first.' }),
    );
    expect(readFileSync(join(ws, 'resources_servers/my_env/app.ts'), 'utf8')).toBe(before);
  });

  it('rejects bad entrypoints with a clear error', async () => {
    await expect(initResourcesServerMain({})).rejects.toThrow(/needs \+entrypoint=/);
    await expect(initResourcesServerMain({ entrypoint: 'resources_servers' })).rejects.toThrow(/exactly 2 parts/);
    await expect(initResourcesServerMain({ entrypoint: 'resources_servers/a/b' })).rejects.toThrow(/exactly 2 parts/);
    await expect(initResourcesServerMain({ entrypoint: '/tmp/x/y' })).rejects.toThrow(/relative/);
    await expect(initResourcesServerMain({ entrypoint: 'responses_api_models/x' })).rejects.toThrow(/must start with resources_servers\//);
    await expect(initResourcesServerMain({ entrypoint: 'resources_servers/9-lives' })).rejects.toThrow(/start with a letter/);
    expect(existsSync(join(ws, 'resources_servers/9-lives'))).toBe(false);
    expect(parseEntrypoint('resources_servers/x/', 'ng-test').dir).toBe('resources_servers/x');
    expect(pascalCase('my_cool_env')).toBe('MyCoolEnv');
  });

  it('the generated server builds and its module loads', async () => {
    const dir = join(ws, 'resources_servers/my_env');
    const result = await build({
      entryPoints: [join(dir, 'app.ts')],
      outdir: join(dir, 'dist'),
      format: 'esm',
      platform: 'node',
      target: 'node20',
      logLevel: 'silent',
    });
    expect(result.errors).toHaveLength(0);
    expect(existsSync(join(dir, 'dist/app.js'))).toBe(true);
    if (existsSync(join(coreDir, 'dist/src/server/index.js'))) {
      const name = execFileSync(process.execPath, ['--input-type=module', '-e', "const m = await import('./resources_servers/my_env/dist/app.js'); console.log(m.server.className)"], { cwd: ws })
        .toString()
        .trim();
      expect(name).toBe('MyEnvResourcesServer');
    }
  });
});

describe('ng-test', () => {
  it('the printed next steps run, in order, from the repository root, and each succeeds', async () => {
    const steps = printed
      .split('\n')
      .filter((l) => l.startsWith('  pnpm '))
      .map((l) => shellWords(l.trim()));
    expect(steps.map((w) => w.slice(0, 2).join(' '))).toEqual(['pnpm install', 'pnpm build', 'pnpm ng-test', 'pnpm ng-prepare-data', 'pnpm ng-test']);
    // The model server config the prepare step names, as in a clone of the repository.
    const modelCfg = 'responses_api_models/openai_model/configs/openai_model.yaml';
    mkdirSync(join(ws, dirname(modelCfg)), { recursive: true });
    writeFileSync(join(ws, modelCfg), readFileSync(join(repo, modelCfg)));
    const outputs: string[] = [];
    // This workspace is the repository root the commands resolve config paths against.
    const savedRoot = process.env.NEMO_GYM_ROOT;
    process.env.NEMO_GYM_ROOT = ws;
    try {
      for (const [, script, ...args] of steps) {
        if (script === 'install') {
          // This workspace's node_modules already links what `pnpm install` would (core, zod, vitest).
          expect(existsSync(join(ws, 'node_modules/@nemo-gym/core/package.json'))).toBe(true);
          continue;
        }
        if (script === 'build') {
          // The root script `build` is scripts/build.mjs: run the repository's script over this workspace.
          execFileSync(process.execPath, [join(ws, 'scripts/build.mjs')], { cwd: ws, stdio: 'pipe' });
          expect(existsSync(join(ws, 'resources_servers/my_env/dist/app.js'))).toBe(true);
          continue;
        }
        const spec = COMMANDS.find((c) => pnpmScriptOf(c) === script);
        expect(spec, `pnpm ${script} is a command`).toBeDefined();
        const out = captureStdout();
        const err: string[] = [];
        vi.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => {
          err.push(String(c));
          return true;
        });
        const code = await runCli(spec!, args, { skipEnv: true });
        outputs.push(out.text());
        vi.restoreAllMocks();
        expect(code, `pnpm ${script} ${args.join(' ')}\n${out.text()}\n${err.join('')}`).toBe(0);
      }
    } finally {
      if (savedRoot === undefined) delete process.env.NEMO_GYM_ROOT;
      else process.env.NEMO_GYM_ROOT = savedRoot;
      rmSync(join(ws, 'responses_api_models'), { recursive: true, force: true });
    }
    expect(existsSync(join(ws, 'resources_servers/my_env/data/example_metrics.json'))).toBe(true);
    expect(existsSync(join(ws, 'resources_servers/my_env/data/prepared/example.jsonl'))).toBe(true);
    // Before any rollouts exist, the data checks pass and say what is still to do.
    expect(outputs.at(-1)).toContain('The example data for resources_servers/my_env has been validated. Example rollouts are not collected yet');
    expect(outputs.at(-1)).toContain('+output_jsonl_fpath=resources_servers/my_env/data/example_rollouts.jsonl');
    expect(readFileSync(join(ws, 'resources_servers/my_env/data/.gitignore'), 'utf8')).toContain('prepared/\n');
  }, 120_000); // two child test runs

  it('without the example metrics, data validation names the command that writes them', () => {
    const metrics = join(ws, 'resources_servers/my_env/data/example_metrics.json');
    const saved = readFileSync(metrics);
    rmSync(metrics);
    try {
      expect(() => validateData('resources_servers/my_env')).toThrow(DataValidationError);
      expect(() => validateData('resources_servers/my_env')).toThrow(
        /You must run the example data validation for the example data found at resources_servers\/my_env\/data\/example.jsonl[\s\S]*pnpm ng-prepare-data "\+config_paths=\[responses_api_models\/openai_model\/configs\/openai_model.yaml,resources_servers\/my_env\/configs\/my_env.yaml\]" \+output_dirpath=resources_servers\/my_env\/data\/prepared \+mode=example_validation/,
      );
    } finally {
      writeFileSync(metrics, saved);
    }
  });

  it('validates complete data, and names each problem', () => {
    const data = join(ws, 'resources_servers/my_env/data');
    writeFileSync(join(data, 'example_metrics.json'), JSON.stringify({ 'Number of examples': 4 }));
    expect(() => validateData('resources_servers/my_env')).toThrow(/Expected 5 examples in the metrics at resources_servers\/my_env\/data\/example_metrics.json, but got 4/);
    writeFileSync(join(data, 'example_metrics.json'), JSON.stringify({ 'Number of examples': 5 }));
    writeFileSync(join(data, 'example_rollouts.jsonl'), '{}\n{}\n{}\n{}\n');
    expect(() => validateData('resources_servers/my_env')).toThrow('Expected 5 example rollouts in resources_servers/my_env/data/example_rollouts.jsonl, but got 4');
    writeFileSync(join(data, 'example_rollouts.jsonl'), '{}\n{}\n{}\n{}\n{}');
    const out = captureStdout();
    validateData('resources_servers/my_env');
    expect(out.text()).toBe('The data for resources_servers/my_env has been successfully validated!\n');
    writeFileSync(join(data, 'example_conflict.jsonl'), '');
    expect(() => validateData('resources_servers/my_env')).toThrow('Found 1 conflicting paths: \n- resources_servers/my_env/data/example_conflict.jsonl');
    rmSync(join(data, 'example_conflict.jsonl'));
    // other kinds have no data checks
    expect(() => validateData('responses_api_agents/anything')).not.toThrow();
  });

  it("checks the example rows against the server's verify request and tools", async () => {
    const example = join(ws, 'resources_servers/my_env/data/example.jsonl');
    const config = join(ws, 'resources_servers/my_env/configs/my_env.yaml');
    const [rows, yaml] = [readFileSync(example, 'utf8'), readFileSync(config, 'utf8')];
    try {
      // The scaffolded rows list no tools; its agent offers the server's own.
      expect(yaml).toContain('offer_server_tools: true');
      let out = captureStdout();
      await checkExampleRows('resources_servers/my_env');
      expect(out.text()).toBe('');
      vi.restoreAllMocks();
      writeFileSync(config, yaml.replace('offer_server_tools: true', 'offer_server_tools: false'));
      out = captureStdout();
      await checkExampleRows('resources_servers/my_env');
      expect(out.text()).toBe(
        "Warning: 5 row(s) of resources_servers/my_env/data/example.jsonl offer none of resources server my_env's tools (echo), so the model cannot call them. List them in responses_create_params.tools, or set offer_server_tools: true on the agent.\n",
      );
      vi.restoreAllMocks();
      const lines = rows.split('\n');
      lines[3] = lines[3]!.replace('"expected_answer"', '"expected_anwser"');
      writeFileSync(example, lines.join('\n'));
      await expect(checkExampleRows('resources_servers/my_env')).rejects.toThrow(
        "The rows of resources_servers/my_env/data/example.jsonl do not fit the verify request of resources_servers/my_env:\n  line 4: `expected_answer` missing: resources server my_env's verify request requires `expected_answer`; the row has `expected_anwser` (did you mean `expected_answer`?)",
      );
    } finally {
      writeFileSync(example, rows);
      writeFileSync(config, yaml);
    }
  });

  it('links a new folder’s missing workspace dependency without installing or touching the lock file', async () => {
    const helper = join(ws, 'packages/helper');
    const env = join(ws, 'resources_servers/linked_env');
    const lock = join(ws, 'pnpm-lock.yaml');
    try {
      mkdirSync(helper, { recursive: true });
      writeFileSync(join(helper, 'package.json'), JSON.stringify({ name: '@nemo-gym/helper', type: 'module', main: 'index.js' }));
      writeFileSync(join(helper, 'index.js'), 'export const answer = 42;\n');
      mkdirSync(join(env, 'tests'), { recursive: true });
      writeFileSync(join(env, 'package.json'), JSON.stringify({ name: '@nemo-gym/linked_env', type: 'module', dependencies: { '@nemo-gym/helper': 'workspace:*', zod: '^4.6.7' } }));
      writeFileSync(join(env, 'tests/helper.test.ts'), "import { expect, it } from 'vitest';\nimport { answer } from '@nemo-gym/helper';\nit('imports the workspace helper', () => expect(answer).toBe(42));\n");
      writeFileSync(lock, "lockfileVersion: '9.0'\n");
      const out = captureStdout();
      expect(await runFolderTests('resources_servers/linked_env')).toBe(0);
      expect(out.text()).toContain('resources_servers/linked_env: linked its dependencies (@nemo-gym/helper) from the workspace');
      expect(realpathSync(join(env, 'node_modules/@nemo-gym/helper'))).toBe(helper);
      expect(readFileSync(lock, 'utf8')).toBe("lockfileVersion: '9.0'\n");
    } finally {
      for (const d of [helper, env, lock]) rmSync(d, { recursive: true, force: true });
    }
  });

  it('rejects a missing folder and a bad flag value', async () => {
    await expect(testMain({ entrypoint: 'resources_servers/nope' })).rejects.toThrow(/does not exist/);
    await expect(testMain({ entrypoint: 'resources_servers/my_env', should_validate_data: 'maybe' })).rejects.toThrow(/true or false/);
  });
});

describe('ng-test-all', () => {
  it('runs every folder with a README and prints upstream-style totals', async () => {
    captureStdout();
    expect(await initResourcesServerMain({ entrypoint: 'resources_servers/broken_env' })).toBe(0);
    vi.restoreAllMocks();
    const testFile = join(ws, 'resources_servers/broken_env/tests/app.test.ts');
    writeFileSync(testFile, readFileSync(testFile, 'utf8').replace("toEqual({ text: 'hello' })", "toEqual({ text: 'goodbye' })"));
    mkdirSync(join(ws, 'responses_api_agents/no_tests'), { recursive: true });
    writeFileSync(join(ws, 'responses_api_agents/no_tests/README.md'), '# no tests\n');
    mkdirSync(join(ws, 'responses_api_models/no_readme'), { recursive: true });

    const out = captureStdout();
    const code = await testAllMain({});
    const text = out.text();
    expect(code).toBe(1);
    expect(text).toContain('Found 4 total modules:\n- resources_servers/broken_env\n- resources_servers/my_env\n- responses_api_agents/no_tests\n- responses_api_models/no_readme\n');
    expect(text).toContain('Tests passed 1 / 3 (33.33%):\n- resources_servers/my_env\n');
    expect(text).toContain('Tests failed 1 / 3 (33.33%):\n- resources_servers/broken_env\n');
    expect(text).toContain('Tests missing 1 / 3 (33.33%):\n- responses_api_agents/no_tests\n');
    expect(text).toContain('Data validation failed 1 / 3 (33.33%):\n- resources_servers/broken_env\n');
    expect(text).toContain('ng-test +entrypoint=resources_servers/broken_env\n');
    expect(text).toContain('ng-test +entrypoint=resources_servers/broken_env +should_validate_data=true');

    vi.restoreAllMocks();
    const err: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => {
      err.push(String(c));
      return true;
    });
    captureStdout();
    // only the passing folder left: exit 0, unless every candidate must have a README
    rmSync(join(ws, 'resources_servers/broken_env'), { recursive: true });
    rmSync(join(ws, 'responses_api_agents/no_tests/README.md'));
    expect(await testAllMain({})).toBe(0);
    expect(await testAllMain({ fail_on_total_and_test_mismatch: true })).toBe(1);
    expect(err.join('')).toContain('Extra candidate paths:\n- responses_api_agents/no_tests\n- responses_api_models/no_readme');
  }, 120_000); // five child test runs in a row
});
