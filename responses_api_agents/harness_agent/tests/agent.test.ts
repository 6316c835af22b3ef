// harness_agent in this process with coding_repo, a stand-in harness (tests/fixtures/fake_harness.py,
// through the `generic` preset) and the scripted model: what a harness can see, what happens when
// it hangs, crashes or does nothing, and what is left behind afterwards.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globalConfigFor } from '@nemo-gym/core/testing';
import { startStubModel, type StubModel } from '../src/stub_model.js';
import { inProcessStack, processesWith, rows, type InProcess } from './helpers.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const FAKE = join(FIXTURES, 'fake_harness.py');
const CANARY = 'sk-canary-policy-key-7d1e0b';
const hasDebianPython = existsSync('/usr/bin/python3');

function fake(args: string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { preset: 'generic', command: '/usr/bin/python3', args: [FAKE, ...args], readable_paths: [FIXTURES], ...extra };
}

/** The agent's sandbox folders (ng-harness-<pid>-*) that still hold a work folder. */
function liveWorkFolders(): string[] {
  const out: string[] = [];
  for (const root of readdirSync(tmpdir()).filter((n) => n.startsWith(`ng-harness-${process.pid}-`))) {
    for (const n of readdirSync(join(tmpdir(), root))) out.push(join(root, n));
  }
  return out;
}

describe.skipIf(!hasDebianPython)('harness_agent with a stand-in harness', () => {
  let model: StubModel;
  const calc = () => rows()[0]!;
  const savedKey = process.env.OPENAI_API_KEY;

  beforeAll(async () => {
    model = await startStubModel(() => ({ text: 'stub answer' }));
    // The server's own environment holds the policy key, as a deployed agent's may.
    process.env.OPENAI_API_KEY = CANARY;
  });
  afterAll(async () => {
    if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = savedKey;
    await model?.close();
  });

  describe.each(['bwrap', 'local'] as const)('%s provider', (provider) => {
    let stack: InProcess;
    beforeAll(async () => {
      stack = await inProcessStack({ ...fake(['dump', String(model.port)]), model_base_url: model.url, sandbox_provider: provider, env: { NG_TEST_MARK: 'present' } }, { policy_api_key: CANARY });
    }, 60_000);
    afterAll(async () => {
      await stack?.close();
    });

    it('the canary policy key is nowhere the harness can look; it gets a per-rollout dummy key and the model URL', async () => {
      const before = model.calls.length;
      const r = await stack.agent.post('/run', calc());
      expect(r.status, r.text).toBe(200);
      const seen = JSON.parse(r.json.harness.final_text) as Record<string, any>;
      expect(r.text).not.toContain(CANARY);
      expect(JSON.stringify(seen.env)).not.toContain(CANARY);
      expect(JSON.stringify(seen.argv)).not.toContain(CANARY);
      expect(JSON.stringify(seen.files)).not.toContain(CANARY);
      expect(JSON.stringify(seen.procs)).not.toContain(CANARY);
      expect(Object.keys(seen.files).length).toBeGreaterThan(2);
      expect(seen.env.OPENAI_API_KEY).toMatch(/^ng-harness-[0-9a-f]{24}$/);
      expect(seen.env.OPENAI_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      expect(seen.env.NG_TEST_MARK).toBe('present');
      expect(seen.answer).toBe('stub answer');
      // The model saw the dummy key, not the policy's.
      const call = model.calls[before]!;
      expect(call.headers.authorization).toBe(`Bearer ${seen.env.OPENAI_API_KEY}`);
      expect(r.json.harness.model_calls).toBe(1);
      expect(r.json.reward).toBe(1);
      if (provider === 'bwrap') {
        // Its own network namespace: the host's loopback (where the model really listens) is unreachable.
        expect(seen.host_loopback).toMatch(/^unreachable/);
      } else {
        expect(seen.host_loopback).toBe('reachable');
      }
    }, 60_000);
  });

  describe('failures are recorded with NG_ERR_HARNESS, never scored', () => {
    let stacks: Record<string, InProcess>;
    beforeAll(async () => {
      stacks = {
        hang: await inProcessStack({ ...fake(['hang', 'ng-hang-marker-51c3']), model_base_url: model.url, timeout_s: 2 }),
        crash: await inProcessStack({ ...fake(['crash']), model_base_url: model.url }),
        nothing: await inProcessStack({ ...fake(['nothing']), model_base_url: model.url }),
        spam: await inProcessStack({ ...fake(['spam']), model_base_url: model.url, max_output_bytes: 65536 }),
      };
    }, 60_000);
    afterAll(async () => {
      for (const s of Object.values(stacks ?? {})) await s.close();
    });

    it('a harness that hangs (ignoring SIGTERM) is killed at timeout_s; no process or work folder is left', async () => {
      const t0 = Date.now();
      const r = await stacks.hang!.agent.post('/run', calc());
      expect(Date.now() - t0).toBeLessThan(15_000);
      expect(r.status).toBe(500);
      expect(r.text).toContain('NG_ERR_HARNESS');
      expect(r.text).toContain('timed out after 2 s');
      expect(r.json.detail.code).toBe('NG_ERR_HARNESS');
      expect(r.json.detail.timed_out).toBe(true);
      expect(r.json.reward).toBeUndefined();
      expect(processesWith('ng-hang-marker-51c3')).toEqual([]);
      expect(liveWorkFolders()).toEqual([]);
    }, 30_000);

    it('a crash is a failure with the exit code and the stderr tail', async () => {
      const r = await stacks.crash!.agent.post('/run', calc());
      expect(r.status).toBe(500);
      expect(r.text).toContain('NG_ERR_HARNESS');
      expect(r.text).toContain('exited with code 3');
      expect(r.text).toContain('something broke');
    }, 30_000);

    it('a harness that answers nothing and changes nothing is a failure', async () => {
      const r = await stacks.nothing!.agent.post('/run', calc());
      expect(r.status).toBe(500);
      expect(r.text).toContain('produced no answer and changed no file');
    }, 30_000);

    it('output over max_output_bytes stops the harness', async () => {
      const r = await stacks.spam!.agent.post('/run', calc());
      expect(r.status).toBe(500);
      expect(r.text).toContain('more than max_output_bytes (65536 bytes)');
    }, 30_000);
  });

  it('a malformed _ng_rollout_id or workspace path is refused with 422 before anything runs', async () => {
    const stack = await inProcessStack({ ...fake(['nothing']), model_base_url: model.url });
    try {
      const bad = await stack.agent.post('/run', { ...calc(), _ng_rollout_id: '../etc' });
      expect(bad.status).toBe(422);
      const path = await stack.agent.post('/run', { ...calc(), workspace: { files: { '../x.py': '' } } });
      expect(path.status).toBe(422);
      expect(path.text).toContain('must be a relative path inside the repository');
    } finally {
      await stack.close();
    }
  }, 30_000);

  it('the work folder: a folder from the row (its .git kept), then a tarball, then files; the diff covers new files', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ng-harness-ws-'));
    try {
      const src = join(root, 'src-repo');
      mkdirSync(join(src, 'lib'), { recursive: true });
      writeFileSync(join(src, 'calc.py'), calc().workspace.files['calc.py']);
      writeFileSync(join(src, 'lib', 'util.py'), 'X = 1\n');
      const git = (...a: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { cwd: src, encoding: 'utf8' });
      git('init', '-q');
      git('add', '-A');
      git('commit', '-qm', 'upstream history');
      mkdirSync(join(root, 'extra', 'data'), { recursive: true });
      writeFileSync(join(root, 'extra', 'data', 'extra.txt'), 'from the tarball\n');
      execFileSync('tar', ['-czf', join(root, 'extra.tar.gz'), '-C', join(root, 'extra'), '.']);
      const stack = await inProcessStack({ ...fake(['dump', String(model.port)]), model_base_url: model.url, repo_root: root });
      try {
        const row = { ...calc(), verifier_metadata: { test_command: ['true'], test_files: [] }, workspace: { dir: 'src-repo', tarball: 'extra.tar.gz', files: { 'notes.md': 'row file\n', 'lib/util.py': 'X = 2\n' } } };
        const r = await stack.agent.post('/run', row);
        expect(r.status, r.text).toBe(200);
        const seen = JSON.parse(r.json.harness.final_text) as { files: Record<string, string> };
        const byName = Object.fromEntries(Object.entries(seen.files).filter(([p]) => p.includes('/repo/')).map(([p, t]) => [p.slice(p.indexOf('/repo/') + 6), t]));
        expect(Object.keys(byName).sort()).toEqual(['calc.py', 'data/extra.txt', 'lib/util.py', 'notes.md']);
        // The row's files win over the folder's.
        expect(byName['lib/util.py']).toBe('X = 2\n');
        expect(byName['data/extra.txt']).toBe('from the tarball\n');
        // Only the harness's change is in the diff (the set-up is the baseline).
        expect(r.json.harness.patch).toMatch(/^diff --git a\/calc.py b\/calc.py/);
        expect(r.json.harness.patch).not.toContain('extra.txt');
        // The source folder is read, never written.
        expect(git('status', '--porcelain')).toBe('');
      } finally {
        await stack.close();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);

  it('capture: true where the harness does not reach model_server through per-rollout routes is refused at start-up', async () => {
    for (const extra of [{ model_base_url: model.url }, { per_rollout_routes: false }]) {
      await expect(inProcessStack({ ...fake(['calls', '1']), capture: true, ...extra })).rejects.toThrow(/capture: true needs the harness to reach `model_server` through per-rollout routes/);
    }
  });

  it('per_rollout_routes: the harness calls the model server under /ng-rollout/<rollout_id>/v1 (switch for the per-rollout routes)', async () => {
    const policy = globalConfigFor({ policy_model: { kind: 'responses_api_models', impl: 'openai_model', port: model.port } });
    for (const [on, path] of [
      [true, '/ng-rollout/task7-r0/v1/chat/completions'],
      [false, '/v1/chat/completions'],
    ] as const) {
      const stack = await inProcessStack({ ...fake(['calls', '1']), per_rollout_routes: on, capture: false }, policy);
      try {
        const before = model.calls.length;
        const r = await stack.agent.post('/run', { ...calc(), _ng_rollout_id: 'task7-r0' });
        expect(r.status, r.text).toBe(200);
        expect(r.json.harness.rollout_id).toBe('task7-r0');
        expect(model.calls.slice(before).map((c) => c.path)).toEqual([path]);
      } finally {
        await stack.close();
      }
    }
  }, 60_000);
});
