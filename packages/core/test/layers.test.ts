/**
 * The import layering of packages/core/src: a module may import from its own folder or from a
 * lower layer, never from a higher one, and no set of modules imports itself in a circle.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as root from '@nemo-gym/core';
import * as capture from '@nemo-gym/core/capture';
import * as client from '@nemo-gym/core/client';
import * as config from '@nemo-gym/core/config';
import * as data from '@nemo-gym/core/data';
import * as errors from '@nemo-gym/core/errors';
import * as filesApi from '@nemo-gym/core/files';
import * as openai from '@nemo-gym/core/openai';
import * as py from '@nemo-gym/core/py';
import * as rollouts from '@nemo-gym/core/rollouts';
import * as server from '@nemo-gym/core/server';
import * as workers from '@nemo-gym/core/workers';
import * as internal from '@nemo-gym/core/internal';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/** Layer of each top-level folder or file of src/ (lower numbers are imported by higher ones). */
const LAYERS: Record<string, number> = {
  // The one secret rule imports nothing; errors.ts masks every coded error's message with it.
  'secret-rule.ts': -1,
  'errors.ts': 0,
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
  'index.ts': 8,
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
const PUBLIC_SUBPATHS = ['', '/capture', '/server', '/client', '/openai', '/py', '/data', '/rollouts', '/config', '/workers', '/errors', '/files', '/testing'];

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
  it('the root exports exactly the union of the subpaths, and nothing internal', () => {
    const union = new Set([capture, client, config, data, errors, filesApi, openai, py, rollouts, server, workers].flatMap((m) => Object.keys(m)));
    expect(Object.keys(root).sort()).toEqual([...union].sort());
    expect(Object.keys(internal).filter((k) => k in root)).toEqual([]);
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
