// coding_repo's /verify on its five example rows: the right fix (as a git diff) scores 1.0, no
// change or a broken change 0.0, editing the tests does not count, a diff that does not apply 0.0.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonl, startTestServer, type TestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';

const rows = readJsonl(new URL('../data/example.jsonl', import.meta.url).pathname) as Array<Record<string, any>>;

/** Per row: the file to change, and the text replaced. */
const FIXES: Record<string, [string, string, string]> = {
  'coding-repo-1': ['calc.py', 'return a - b', 'return a + b'],
  'coding-repo-2': ['text_utils.py', 'return sentence[::-1]', "return ' '.join(sentence.split()[::-1])"],
  'coding-repo-3': ['fizzbuzz.py', 'range(1, n)', 'range(1, n + 1)'],
  'coding-repo-4': ['stack.py', 'pop(0)', 'pop()'],
  'coding-repo-5': ['temperature.js', 'celsius * 5 / 9 + 32', 'celsius * 9 / 5 + 32'],
};

/** The `git diff` of the row's repository after `edit` (file → new text). */
function diffOf(row: Record<string, any>, edit: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'coding-repo-test-'));
  try {
    for (const [p, t] of Object.entries(row.workspace.files as Record<string, string>)) {
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      writeFileSync(join(dir, p), t);
    }
    const git = (...a: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { cwd: dir, encoding: 'utf8' });
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'base');
    for (const [p, t] of Object.entries(edit)) writeFileSync(join(dir, p), t);
    git('add', '-A');
    return git('diff', '--cached', '--binary');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function fixed(row: Record<string, any>): Record<string, string> {
  const [file, from, to] = FIXES[row.id]!;
  const text = row.workspace.files[file] as string;
  expect(text).toContain(from);
  return { [file]: text.replace(from, to) };
}

const answer = { id: 'resp_1', created_at: 0, model: 'm', object: 'response', output: [], parallel_tool_calls: true, tool_choice: 'auto', tools: [] };

describe('coding_repo', () => {
  let app: TestServer;
  beforeAll(async () => {
    app = await startTestServer(server, { config: { name: 'coding_repo', domain: 'coding' } });
  });
  afterAll(async () => {
    await app?.close();
  });
  const verify = (row: Record<string, any>, patch: string | null) => app.post('/verify', { ...row, response: answer, ...(patch === null ? {} : { harness: { patch } }) });

  it('the config names app.ts and the example file; 5 rows, each with a failing test', () => {
    const cfg = readFileSync(new URL('../configs/coding_repo.yaml', import.meta.url), 'utf8');
    expect(cfg).toContain('entrypoint: app.ts');
    expect(existsSync(new URL('../data/example.jsonl', import.meta.url))).toBe(true);
    expect(rows).toHaveLength(5);
    expect(rows.map((r) => r.id).sort()).toEqual(Object.keys(FIXES));
  });

  it('every row: the right fix scores 1.0, no change scores 0.0', async () => {
    for (const row of rows) {
      const none = await verify(row, null);
      expect(none.json.reward, `${row.id}: ${none.text}`).toBe(0);
      expect(none.json.tests_passed).toBe(false);
      const good = await verify(row, diffOf(row, fixed(row)));
      expect(good.json.reward, `${row.id}: ${good.json.test_output}`).toBe(1);
      expect(good.json.changed_files).toEqual([FIXES[row.id]![0]]);
      expect(good.json.id).toBe(row.id);
    }
  }, 60_000);

  it('rewriting the tests to pass does not count: the row\'s test files are put back', async () => {
    const row = rows[0]!;
    const cheat = diffOf(row, { 'test_calc.py': 'import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n' });
    const r = await verify(row, cheat);
    expect(r.json.patch_applied).toBe(true);
    expect(r.json.reward).toBe(0);
  });

  it('a diff that does not apply scores 0.0 with patch_applied false; a syntax error 0.0', async () => {
    const row = rows[3]!;
    const r = await verify(row, 'diff --git a/stack.py b/stack.py\n--- a/stack.py\n+++ b/stack.py\n@@ -1,1 +1,1 @@\n-nothing like this\n+x\n');
    expect(r.json.patch_applied).toBe(false);
    expect(r.json.reward).toBe(0);
    const broken = await verify(row, diffOf(row, { 'stack.py': 'class Stack(:\n' }));
    expect(broken.json.reward).toBe(0);
    expect(broken.json.test_output).toContain('SyntaxError');
  });

  it('test files the row does not have are refused with 422', async () => {
    const r = await app.post('/verify', { ...rows[0], response: answer, verifier_metadata: { test_command: ['true'], test_files: ['nope.py'] } });
    expect(r.status).toBe(422);
  });
});
