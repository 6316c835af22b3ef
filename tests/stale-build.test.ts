/**
 * A server edited without `pnpm build`: ng-run compiles the stale package before it starts the
 * servers, so it runs the code as it is in the sources (what ng-test runs), and says so.
 * The checkout is a temporary copy of simple_weather beside links to the real packages.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOpenPort } from '@nemo-gym/core/config';
import { BIN, requireBuild, ROOT } from './helpers/stack.js';

interface BuildLib {
  stalePackages(root: string): { dir: string; reason: string }[];
}

let copy: string;
const server = () => join(copy, 'resources_servers', 'simple_weather');

beforeAll(() => {
  requireBuild();
  copy = mkdtempSync(join(tmpdir(), 'ng-stale-'));
  for (const f of ['package.json', 'pnpm-workspace.yaml']) cpSync(join(ROOT, f), join(copy, f));
  for (const d of ['packages', 'node_modules', 'scripts']) symlinkSync(join(ROOT, d), join(copy, d), 'dir');
  mkdirSync(join(copy, 'resources_servers'));
  // As built: the copy keeps the times of the sources and of dist/.
  cpSync(join(ROOT, 'resources_servers', 'simple_weather'), server(), { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
});

afterAll(() => rmSync(copy, { recursive: true, force: true }));

function edit(from: string, to: string): void {
  const app = join(server(), 'app.ts');
  writeFileSync(app, readFileSync(app, 'utf8').replace(from, to));
}

async function runUntil(args: string[], ready: RegExp): Promise<{ out: string; code: number | null; stop: () => Promise<void> }> {
  const proc = spawn(process.execPath, [BIN('run'), ...args], { cwd: copy, env: { ...process.env, NEMO_GYM_ROOT: copy }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  await new Promise<void>((resolve) => {
    const check = () => ready.test(out) && resolve();
    proc.stdout.on('data', (d: Buffer) => ((out += d.toString()), check()));
    proc.stderr.on('data', (d: Buffer) => ((out += d.toString()), check()));
    void exited.then(() => resolve());
  });
  return {
    out,
    code: proc.exitCode,
    stop: async () => {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

describe('a server source newer than its build', () => {
  it('is found stale in well under a second, and ng-run serves the edited code', async () => {
    const lib = (await import(pathToFileURL(join(ROOT, 'scripts', 'build-lib.mjs')).href)) as BuildLib;
    let started = performance.now();
    expect(lib.stalePackages(copy)).toEqual([]);
    const cleanMs = performance.now() - started;
    expect(cleanMs).toBeLessThan(1000);

    edit('is cold.', 'is warm.');
    started = performance.now();
    const stale = lib.stalePackages(copy);
    expect(stale.map((s) => [s.dir, s.reason])).toEqual([[server(), 'app.ts changed']]);
    expect(performance.now() - started).toBeLessThan(1000);

    const [head, port] = [await findOpenPort([]), await findOpenPort([])];
    const config = join(copy, 'weather.yaml');
    writeFileSync(config, `simple_weather:\n  resources_servers:\n    simple_weather:\n      entrypoint: app.ts\n      domain: agent\n      port: ${port}\n`);
    const run = await runUntil([`+config_paths=[${config}]`, `+head_server.port=${head}`, '+head_server.host=127.0.0.1'], /server\(s\) ready in/);
    try {
      expect(run.out).toMatch(/ng-run: rebuilt resources_servers\/simple_weather \(app\.ts changed\) in \d+ ms/);
      const answer = await fetch(`http://127.0.0.1:${port}/get_weather`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"city":"Lima"}' });
      expect(((await answer.json()) as { weather_description: string }).weather_description).toBe('The weather in Lima is warm.');
    } finally {
      await run.stop();
    }
    expect(lib.stalePackages(copy)).toEqual([]);
  });

  it('that does not compile is refused before any server starts, with the command to run', async () => {
    edit('handler: ({ city })', 'handler: ({ city ');
    try {
      const run = await runUntil([`+config_paths=[${join(copy, 'weather.yaml')}]`], /$^/);
      expect(run.code).toBe(1);
      expect(run.out).toMatch(/ng-run: resources_servers\/simple_weather \(app\.ts changed\) is newer than the build and could not be compiled \(errors above\)\. Fix the sources, then run `pnpm build`\./);
      expect(run.out).not.toMatch(/ready in/);
    } finally {
      edit('handler: ({ city ', 'handler: ({ city })');
    }
  });
});
