/**
 * The tutorials in docs/ are executed: every fenced block carries a `<!-- doc-test: … -->` marker
 * (run, file PATH, output, skip REASON; docs/README.md explains them) and a block without one
 * fails. The chapters run in order in one bash session (chapter 6 uses the servers chapter 5
 * started), in a scratch workspace whose
 * server folders and packages link to this repository (so nothing is written into the tree), with
 * an env.yaml that moves the head server to a free port. Commands are run as the docs write them,
 * except that `pnpm ng-x` / `pnpm quickstart` call the compiled bin directly (what the pnpm script
 * does, without pnpm's start-up time).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputMatches, parseDocBlocks, type DocBlock } from './helpers/doc-blocks.js';
import { findOpenPort } from '@nemo-gym/core/config';
import { findRedisServer } from '@nemo-gym/queue/redis-server';
import { requireBuild, ROOT } from './helpers/stack.js';

const DOCS = join(ROOT, 'docs');
const CHAPTERS = readdirSync(DOCS).filter((f) => /^\d\d-.*\.md$/.test(f)).sort();
/** Guides whose runnable sections run too, in a session of their own next to the chapters'. */
const GUIDES = ['deployment.md'];

type Block = DocBlock;

/** The marked blocks of a chapter; throws naming any fenced block without a marker. */
function parseChapter(file: string): Block[] {
  return parseDocBlocks(readFileSync(join(DOCS, file), 'utf8'), file);
}

const DELIM = 'NG_DOC_TEST_EOF';

function rewrite(code: string): string {
  return code
    .replace(/\bpnpm quickstart\b/g, 'node "$NG_REPO/packages/cli/bin/ng-quickstart.js"')
    .replace(/\bpnpm (ng-[a-z-]+)/g, (_, name: string) => `node "$NG_REPO/packages/cli/bin/${name}.js"`);
}

/** One bash script for a chapter: files written in place, each run block in a strict subshell with markers. */
function script(blocks: Block[], headYaml: string): string {
  const out: string[] = [];
  for (const [n, b] of blocks.entries()) {
    if (b.kind === 'file') {
      const body = b.path === 'env.yaml' ? `${b.code}\n${headYaml}` : b.code;
      out.push(`mkdir -p "$(dirname '${b.path}')"`, `cat > '${b.path}' <<'${DELIM}'`, body, DELIM);
    } else if (b.kind === 'run') {
      out.push(`echo "@@begin ${n}@@"`, `( set -euo pipefail`, rewrite(b.code), `) 2>&1`, `echo "@@end ${n} $?@@"`);
    }
  }
  return out.join('\n') + '\n';
}

function runScript(cwd: string, text: string, env: Record<string, string>, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    // A reader types the commands in a terminal: no package-runner variables from `pnpm test`
    // (with them, ng-run would stop when the block's subshell that started it exits).
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('npm_')));
    const child = spawn('bash', ['-c', text], { cwd, env: { ...base, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
      reject(new Error(`the chapter did not finish within ${timeoutMs} ms; output so far:\n${out}`));
    }, timeoutMs);
    child.on('exit', () => {
      clearTimeout(timer);
      // Anything a chapter left in the background goes with it.
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        /* none left */
      }
      resolve(out);
    });
  });
}


interface Workspace {
  dir: string;
  headYaml: string;
  headPort: number;
}
/** The chapters' workspace, and the guides' own (the sessions run side by side). */
let chaptersWs: Workspace;
let guidesWs: Workspace;
let mcpWs: Workspace;

function link(target: string, at: string) {
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at);
}

async function makeWorkspace(otherPorts: number[] = []): Promise<Workspace> {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'ng-docs-')));
  for (const group of ['resources_servers', 'responses_api_models', 'responses_api_agents']) {
    mkdirSync(join(ws, group));
    for (const name of readdirSync(join(ROOT, group))) link(join(ROOT, group, name), join(ws, group, name));
  }
  link(join(ROOT, 'packages'), join(ws, 'packages'));
  link(join(ROOT, 'scripts'), join(ws, 'scripts'));
  for (const f of ['pnpm-workspace.yaml', 'package.json', 'tsconfig.base.json']) link(join(ROOT, f), join(ws, f));
  // Modules a new server folder resolves from the workspace root, as pnpm install would link them.
  const fromCore = createRequire(join(ROOT, 'packages/core/package.json'));
  link(dirname(fromCore.resolve('zod/package.json')), join(ws, 'node_modules/zod'));
  link(realpathSync(join(ROOT, 'node_modules/vitest')), join(ws, 'node_modules/vitest'));
  link(join(ROOT, 'packages/core'), join(ws, 'node_modules/@nemo-gym/core'));
  // The MCP SDK a client of mcp.md installs in its own project (the copy the lockfile pins).
  link(realpathSync(join(ROOT, 'packages/mcp/node_modules/@modelcontextprotocol/sdk')), join(ws, 'node_modules/@modelcontextprotocol/sdk'));
  const core = join(ROOT, 'packages/core/src');
  writeFileSync(
    join(ws, 'vitest.config.mjs'),
    `import { defineConfig } from 'vitest/config';
export default defineConfig({
  resolve: { alias: [
    { find: /^@nemo-gym\\/core\\/errors$/, replacement: ${JSON.stringify(join(core, 'errors-api.ts'))} },
    { find: /^@nemo-gym\\/core\\/([a-z]+)$/, replacement: ${JSON.stringify(core)} + '/$1/index.ts' },
  ] },
  test: { include: ['resources_servers/*/tests/**/*.test.ts'], pool: 'forks', maxWorkers: 1 },
});
`,
  );
  // A head port of its own: the other session's servers are not in its way.
  const headPort = await findOpenPort(otherPorts);
  const headYaml = `head_server:\n  host: 127.0.0.1\n  port: ${headPort}\n`;
  writeFileSync(join(ws, 'env.yaml'), headYaml);
  return { dir: ws, headYaml, headPort };
}

beforeAll(async () => {
  requireBuild();
  chaptersWs = await makeWorkspace();
  guidesWs = await makeWorkspace([chaptersWs.headPort]);
  mcpWs = await makeWorkspace([chaptersWs.headPort, guidesWs.headPort]);
});

afterAll(() => {
  for (const w of [chaptersWs, guidesWs, mcpWs]) if (w && existsSync(w.dir)) rmSync(w.dir, { recursive: true, force: true });
});

/** Runs the marked blocks of `files` in order in one bash session and checks every block's exit code and output. */
async function runAndCheck(files: string[], w: Workspace, timeoutMs: number): Promise<void> {
  const chapters = files.map((c) => ({ name: c, blocks: parseChapter(c) }));
  for (const c of chapters) for (const b of c.blocks) if (b.kind === 'skip') console.log(`${c.name}:${b.line}: not run (${b.reason})`);
  // One numbering across chapters, so each run block has its own markers in the one session.
  const all = chapters.flatMap((c) => c.blocks.map((b) => ({ chapter: c.name, b })));
  const raw = await runScript(w.dir, script(all.map((x) => x.b), w.headYaml), { NG_REPO: ROOT, NEMO_GYM_ROOT: w.dir, CI: '1', NO_COLOR: '1' }, timeoutMs);
  const out = raw.replace(/\x1b\[[0-9;]*m/g, '');
  let last: { lines: string[] } | undefined;
  for (const [n, { chapter, b }] of all.entries()) {
    if (b.kind === 'run') {
      const m = new RegExp(`@@begin ${n}@@\\n([\\s\\S]*?)@@end ${n} (\\d+)@@`).exec(out);
      expect(m, `${chapter}:${b.line}: the block did not finish; output:\n${out.slice(-4000)}`).not.toBeNull();
      expect(Number(m![2]), `${chapter}:${b.line} exited with ${m![2]}:\n${m![1]}`).toBe(0);
      last = { lines: m![1]!.split('\n') };
    } else if (b.kind === 'output') {
      expect(last, `${chapter}:${b.line}: an output block with no command before it`).toBeDefined();
      for (const want of b.code.split('\n').filter((l) => l.trim())) {
        expect(outputMatches(last!.lines, want), `${chapter}:${b.line}: expected a line like ${JSON.stringify(want)} in:\n${last!.lines.join('\n')}`).toBe(true);
      }
    }
  }
}

describe('docs/ tutorials', () => {
  it('has the chapters in newcomer order, and the README links to docs/', () => {
    expect(CHAPTERS.map((c) => c.slice(3, -3))).toEqual([
      'concepts',
      'set-up',
      'first-rollouts',
      'resources-server',
      'collecting-at-scale',
      'training-data',
      'configuration',
      'deployment',
    ]);
    const index = readFileSync(join(DOCS, 'README.md'), 'utf8');
    for (const c of CHAPTERS) expect(index).toContain(`(${c})`);
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('(docs/README.md)');
  });

  it.concurrent('every block of every chapter runs and prints what the text says', { timeout: 240_000 }, async () => {
    await runAndCheck(CHAPTERS, chaptersWs, 230_000);
  });

  it.concurrent('the one-host and loopback sections of deployment.md run and print what the text says', { timeout: 240_000 }, async (ctx) => {
    const redis = findRedisServer();
    if (redis.path === null) {
      console.log(`deployment.md: not run (${redis.reason})`);
      ctx.skip();
    }
    await runAndCheck(GUIDES, guidesWs, 230_000);
  });

  it.concurrent('every runnable block of mcp.md runs (serving over MCP, the SDK client, mcp_tools offline) and prints what the text says', { timeout: 120_000 }, async () => {
    await runAndCheck(['mcp.md'], mcpWs, 110_000);
  });
});
