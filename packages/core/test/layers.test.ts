/**
 * The import layering of packages/core/src: a module may import from its own folder or from a
 * lower layer, never from a higher one, and no set of modules imports itself in a circle.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/** Layer of each top-level folder or file of src/ (lower numbers are imported by higher ones). */
const LAYERS: Record<string, number> = {
  // The one secret rule imports nothing; errors.ts masks every coded error's message with it.
  'secret-rule.ts': -1,
  'errors.ts': 0,
  // The public subpath /errors: the names of errors.ts used outside the core.
  'errors-api.ts': 0.5,
  'errors-doc.ts': 1,
  py: 1,
  http: 1,
  'responses.ts': 1,
  'compiled-schema.ts': 1,
  workers: 1,
  files: 1,
  config: 2,
  client: 3,
  openai: 4,
  // Per-rollout routes, token capture and the trajectory builder: read by the server runtime.
  capture: 4.5,
  server: 5,
  data: 5,
  rollouts: 6,
  testing: 7,
  internal: 7,
};

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) sources(full, out);
    else if (name.endsWith('.ts')) out.push(full);
  }
  return out;
}

/** Relative imports and re-exports of a module, resolved to .ts paths under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/gms)) {
    out.push(resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')));
  }
  return out;
}

function unitOf(file: string): string {
  return relative(SRC, file).split('/')[0]!;
}

const files = sources(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f)]));

describe('core import layering', () => {
  it('knows the layer of every top-level module', () => {
    const unknown = [...new Set(files.map(unitOf))].filter((u) => !(u in LAYERS));
    expect(unknown).toEqual([]);
  });

  it('no module imports from a higher layer', () => {
    const against: string[] = [];
    for (const [file, deps] of graph) {
      const from = unitOf(file);
      for (const dep of deps) {
        const to = unitOf(dep);
        if (to !== from && LAYERS[to]! >= LAYERS[from]!) against.push(`${relative(SRC, file)} -> ${relative(SRC, dep)}`);
      }
    }
    expect(against).toEqual([]);
  });

  it('has no import circle between modules', () => {
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (f: string) => {
      state.set(f, 'open');
      stack.push(f);
      for (const d of graph.get(f) ?? []) {
        if (state.get(d) === 'open') circles.push(stack.slice(stack.indexOf(d)).concat(d).map((p) => relative(SRC, p)).join(' -> '));
        else if (!state.has(d)) visit(d);
      }
      stack.pop();
      state.set(f, 'done');
    };
    for (const f of files) if (!state.has(f)) visit(f);
    expect(circles).toEqual([]);
  });
});

const REPO = resolve(SRC, '../../..');
/** The subpaths of the core, as its package.json `exports` lists them (the one list; `/internal` is not public). */
const SUBPATHS = Object.keys((JSON.parse(readFileSync(resolve(SRC, '../package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports).map((k) => k.slice(1));
const PUBLIC_SUBPATHS = SUBPATHS.filter((s) => s !== '/internal');

function tree(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) tree(full, out);
    else if (name.endsWith('.ts')) out.push(full);
  }
  return out;
}

/** Every TypeScript file under these top-level folders, with its path relative to the repository. */
function filesOf(groups: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (const group of groups) {
    if (!existsSync(join(REPO, group))) continue;
    for (const file of tree(join(REPO, group))) out.push([file, relative(REPO, file)]);
  }
  return out;
}

describe('the public API of @nemo-gym/core', () => {
  it('has no root entry: every import names a subpath, and /internal shares no name with a public subpath', async () => {
    expect(SUBPATHS).not.toContain('');
    expect(existsSync(join(SRC, 'index.ts'))).toBe(false);
    const load = (subpath: string) => import(`@nemo-gym/core${subpath}`) as Promise<Record<string, unknown>>;
    const parts = await Promise.all(PUBLIC_SUBPATHS.map(load));
    const union = new Set(parts.flatMap((m) => Object.keys(m)));
    expect(Object.keys(await load('/internal')).filter((k) => union.has(k))).toEqual([]);
  });

  it('code outside the core imports only public paths (internal only from the core\'s own tests)', () => {
    const bad: string[] = [];
    for (const [file, rel] of filesOf(['packages', 'resources_servers', 'responses_api_models', 'responses_api_agents', 'tests'])) {
      if (rel.startsWith('packages/core/')) continue;
      for (const m of readFileSync(file, 'utf8').matchAll(/from '@nemo-gym\/core([^']*)'/g)) {
        if (!PUBLIC_SUBPATHS.includes(m[1]!)) bad.push(`${rel}: @nemo-gym/core${m[1]}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('test tooling (@nemo-gym/trainer-vllm) is used by tests only: no server, command or library depends on it', () => {
    const bad: string[] = [];
    const groups = ['packages', 'resources_servers', 'responses_api_models', 'responses_api_agents'];
    for (const [file, rel] of filesOf(groups)) {
      if (rel.startsWith('packages/trainer-vllm/') || /(^|\/)tests?\//.test(rel)) continue;
      if (/from '@nemo-gym\/trainer-vllm'|import\('@nemo-gym\/trainer-vllm'\)/.test(readFileSync(file, 'utf8'))) bad.push(rel);
    }
    for (const group of groups) {
      for (const pkg of readdirSync(join(REPO, group))) {
        let manifest: { dependencies?: Record<string, string> };
        try {
          manifest = JSON.parse(readFileSync(join(REPO, group, pkg, 'package.json'), 'utf8')) as typeof manifest;
        } catch {
          continue;
        }
        if (manifest.dependencies && '@nemo-gym/trainer-vllm' in manifest.dependencies) bad.push(`${group}/${pkg}/package.json: dependencies`);
      }
    }
    expect(bad).toEqual([]);
  });
});

/** Comments out of a module's text (a commented-out import is not a use). */
function uncommented(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** The names in an `{ a, type B, c as d }` list: the exported (`as`) name when `exported`, else the imported one. */
function listNames(list: string, exported: boolean): string[] {
  return list
    .split(',')
    .map((part) => part.trim().replace(/^type\s+/, ''))
    .filter((part) => part !== '')
    .map((part) => {
      const [name, alias] = part.split(/\s+as\s+/);
      return (exported ? (alias ?? name) : name)!.trim();
    });
}

/** Every name a module exports (declarations and `export { … }` lists); `*` for an `export *`, which cannot be checked. */
function exportedNames(text: string): string[] {
  const code = uncommented(text);
  const names: string[] = [];
  for (const m of code.matchAll(/^export\s+(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:class|const|let|var|function\*?|type|interface|enum)\s+([A-Za-z_$][\w$]*)/gm)) names.push(m[1]!);
  for (const m of code.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}/gm)) names.push(...listNames(m[1]!, true));
  if (/^export\s+\*/m.test(code)) names.push('*');
  return names;
}

/** `<subpath>:<name>` for every name a module imports or re-exports from a subpath of the core (`import type` too). */
function coreNamesUsed(text: string): string[] {
  const out: string[] = [];
  for (const m of uncommented(text).matchAll(/\b(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['"]@nemo-gym\/core(\/[\w-]+)?['"]/g)) {
    for (const name of listNames(m[1]!, false)) out.push(`${m[2] ?? ''}:${name}`);
  }
  return out;
}

describe('every name of the public API of @nemo-gym/core is used outside it', () => {
  it('reads names from the forms imports and exports take', () => {
    const sample = `import { a, type B, c as d } from '@nemo-gym/core/server';
import type {
  E,
  F,
} from '@nemo-gym/core/openai';
export { g } from '@nemo-gym/core/py';
export type { H as I } from "@nemo-gym/core/errors";
// import { commented } from '@nemo-gym/core/server';
import { other } from '@nemo-gym/corex/server';`;
    expect(coreNamesUsed(sample)).toEqual(['/server:a', '/server:B', '/server:c', '/openai:E', '/openai:F', '/py:g', '/errors:H']);
    expect(exportedNames("export { a, type B, c as d } from './x.js';\nexport const e = 1;\nexport interface F {}\n/** export const not = 1; */\nexport * from './y.js';")).toEqual(['e', 'F', 'a', 'B', 'd', '*']);
  });

  it('each subpath exports only names that servers, packages, commands or tests outside the core import from it', () => {
    const used = new Set<string>();
    for (const [file, rel] of filesOf(['packages', 'resources_servers', 'responses_api_models', 'responses_api_agents', 'tests'])) {
      if (!rel.startsWith('packages/core/')) for (const key of coreNamesUsed(readFileSync(file, 'utf8'))) used.add(key);
    }
    const manifest = JSON.parse(readFileSync(resolve(SRC, '../package.json'), 'utf8')) as { exports: Record<string, { types: string }> };
    const unused: string[] = [];
    for (const subpath of PUBLIC_SUBPATHS) {
      const names = exportedNames(readFileSync(resolve(SRC, '..', manifest.exports[`.${subpath}`]!.types), 'utf8'));
      expect(names.length, `${subpath} exports nothing`).toBeGreaterThan(0);
      for (const name of names) if (!used.has(`${subpath}:${name}`)) unused.push(`@nemo-gym/core${subpath}: ${name}`);
    }
    // A name used only inside the core stays exported from its module, not from the subpath.
    expect(unused).toEqual([]);
  });
});

describe('the Redis queue (@nemo-gym/queue) stays out of the core and the servers', () => {
  it('no core source imports ioredis or the queue, and the core does not depend on them', () => {
    const bad = tree(SRC)
      .filter((file) => /from '(ioredis|@nemo-gym\/queue[^']*)'|import\('(ioredis|@nemo-gym\/queue)/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(REPO, file));
    const manifest = JSON.parse(readFileSync(resolve(SRC, '../package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    expect(bad).toEqual([]);
    expect(Object.keys(manifest.dependencies ?? {}).filter((d) => d === 'ioredis' || d === '@nemo-gym/queue')).toEqual([]);
  });

  it('no server (resources, model, agent) depends on ioredis or the queue', () => {
    const bad: string[] = [];
    for (const group of ['resources_servers', 'responses_api_models', 'responses_api_agents']) {
      for (const pkg of readdirSync(join(REPO, group))) {
        const path = join(REPO, group, pkg, 'package.json');
        if (!existsSync(path)) continue;
        const manifest = JSON.parse(readFileSync(path, 'utf8')) as { dependencies?: Record<string, string> };
        for (const dep of ['ioredis', '@nemo-gym/queue']) if (manifest.dependencies && dep in manifest.dependencies) bad.push(`${group}/${pkg}: ${dep}`);
      }
    }
    expect(bad).toEqual([]);
  });
});

/** ng-bench's command: the one file outside packages/bench that reaches the benchmarks. */
const BENCH_COMMAND = 'packages/cli/src/commands/bench.ts';

describe('benchmark tooling (@nemo-gym/bench)', () => {
  it('is imported only by ng-bench, and is no server\'s or library\'s dependency', () => {
    const bad: string[] = [];
    const groups = ['packages', 'resources_servers', 'responses_api_models', 'responses_api_agents'];
    for (const [file, rel] of filesOf(groups)) {
      if (rel.startsWith('packages/bench/') || rel === BENCH_COMMAND) continue;
      if (/from '@nemo-gym\/bench'|import\('@nemo-gym\/bench'\)/.test(readFileSync(file, 'utf8'))) bad.push(rel);
    }
    for (const group of groups) {
      for (const pkg of readdirSync(join(REPO, group))) {
        const path = join(REPO, group, pkg, 'package.json');
        if (!existsSync(path) || `${group}/${pkg}` === 'packages/cli') continue;
        const manifest = JSON.parse(readFileSync(path, 'utf8')) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
        for (const field of ['dependencies', 'devDependencies'] as const) {
          if (manifest[field] && '@nemo-gym/bench' in manifest[field]) bad.push(`${group}/${pkg}/package.json: ${field}`);
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it('holds every benchmark: no server or library keeps a bench script of its own', () => {
    const groups = ['packages', 'resources_servers', 'responses_api_models', 'responses_api_agents'];
    const stray = filesOf(groups)
      .map(([, rel]) => rel)
      .filter((rel) => !rel.startsWith('packages/bench/') && rel !== BENCH_COMMAND && /(^|\/)bench[^/]*\.ts$/.test(rel));
    expect(stray).toEqual([]);
  });
});

describe('MCP serving (@nemo-gym/mcp) stays out of the core and the plain servers', () => {
  it('no core source imports the MCP SDK or the MCP package statically, and the core does not depend on them', () => {
    const bad = tree(SRC)
      .filter((file) => /from '(@modelcontextprotocol\/[^']*|@nemo-gym\/mcp)'|import\('@modelcontextprotocol\//.test(readFileSync(file, 'utf8')))
      .map((file) => relative(REPO, file));
    const manifest = JSON.parse(readFileSync(resolve(SRC, '../package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    expect(bad).toEqual([]);
    expect(Object.keys(manifest.dependencies ?? {}).filter((d) => d.startsWith('@modelcontextprotocol/') || d === '@nemo-gym/mcp')).toEqual([]);
  });

  it('no server depends on the MCP SDK or the MCP package, but mcp_tools (an MCP client)', () => {
    const bad: string[] = [];
    for (const group of ['resources_servers', 'responses_api_models', 'responses_api_agents']) {
      for (const pkg of readdirSync(join(REPO, group))) {
        const path = join(REPO, group, pkg, 'package.json');
        if (!existsSync(path) || `${group}/${pkg}` === 'resources_servers/mcp_tools') continue;
        const manifest = JSON.parse(readFileSync(path, 'utf8')) as { dependencies?: Record<string, string> };
        for (const dep of Object.keys(manifest.dependencies ?? {})) if (dep.startsWith('@modelcontextprotocol/') || dep === '@nemo-gym/mcp') bad.push(`${group}/${pkg}: ${dep}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
