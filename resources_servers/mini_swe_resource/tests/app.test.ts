import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkExampleData, exampleRows, textResponse, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';
import { makeExampleRepo } from '../src/example_repo.js';

const res = useTestServer(server, { config: { name: 'mini_swe_resource_resources_server', domain: 'coding' } });
const here = new URL('..', import.meta.url);

describe('mini_swe_resource', () => {
  it('verify answers reward 1.0 (the agent scores episodes itself), echoing the request', async () => {
    const r = await res.post('/verify', { responses_create_params: { input: [] }, response: textResponse('anything') });
    expect(r.status).toBe(200);
    expect(r.json.reward).toBe(1);
    expect(Object.keys(r.json).sort()).toEqual(['response', 'responses_create_params', 'reward']);
    expect((await res.post('/seed_session', {})).json).toEqual({});
  });

  it('the example rows are the ones the example repository generator makes (same commits, same patches)', () => {
    const rows = checkExampleData(here);
    const dir = mkdtempSync(join(tmpdir(), 'ng-swe-example-'));
    try {
      expect(makeExampleRepo(join(dir, 'pycalc'))).toEqual(exampleRows(here));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    for (const row of rows) expect(row.instance_id).toMatch(/^NeMo-Gym__pycalc-\d$/);
  });

  it('makes the example repository at example_repo_path on first start, and leaves it alone after', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ng-swe-first-use-'));
    const repo = join(dir, 'swe-repos', 'pycalc');
    try {
      const first = await server.build({ config: { name: 'r', domain: 'coding', example_repo_path: repo } });
      await first.close();
      const branches = execFileSync('git', ['-C', repo, 'branch', '--format=%(refname:short)'], { encoding: 'utf8' }).trim().split('\n').sort();
      expect(branches).toEqual(['main', 'task-1', 'task-2', 'task-3', 'task-4', 'task-5']);
      const made = statSync(join(repo, '.git')).mtimeMs;
      const second = await server.build({ config: { name: 'r', domain: 'coding', example_repo_path: repo } });
      await second.close();
      expect(statSync(join(repo, '.git')).mtimeMs).toBe(made);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(existsSync(repo)).toBe(false);
  });
});
