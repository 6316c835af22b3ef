// Our example rows: a correct program scores 1.0 on each, a wrong one 0.0; the config names files that exist.
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@nemo-gym/core/config';
import { buildApp, answer, hasPython, py, verify, type App } from './helpers.js';

const rows = readFileSync(new URL('../data/example.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Record<string, any>);

const SOLUTIONS: Record<string, string> = {
  'cc-example-1': 'print(sum(int(c) for c in input().strip()))',
  'cc-example-2': 'import sys\nlines = sys.stdin.read().split("\\n")\nfor l in lines[1:int(lines[0]) + 1]:\n    print(" ".join(l.split()[::-1]))',
  'cc-example-3': 'n = int(input())\na = list(map(int, input().split()))\nbest = cur = a[0]\nfor x in a[1:]:\n    cur = max(x, cur + x)\n    best = max(best, cur)\nprint(best)',
  'cc-example-4':
    'import sys\ndata = sys.stdin.read().split("\\n")\nfor s in data[1:int(data[0]) + 1]:\n    st = []\n    ok = True\n    for ch in s:\n        if ch in "([{":\n            st.append(ch)\n        elif not st or st.pop() + ch not in ("()", "[]", "{}"):\n            ok = False\n    print("YES" if ok and not st else "NO")',
  'cc-example-5': 'class Solution:\n    def countPairs(self, nums, target):\n        return sum(1 for i in range(len(nums)) for j in range(i + 1, len(nums)) if nums[i] + nums[j] == target)',
};

describe('example rows', () => {
  it('the config names app.ts and an example file that exists; 5 rows with unit tests', () => {
    const cfg = readFileSync(new URL('../configs/comp_coding.yaml', import.meta.url), 'utf8');
    expect(cfg).toContain('entrypoint: app.ts');
    for (const m of cfg.matchAll(/jsonl_fpath: (resources_servers\/comp_coding\/data\/example\S*)/g)) expect(existsSync(`${repoRoot()}/${m[1]}`)).toBe(true);
    expect(rows).toHaveLength(5);
    for (const r of rows) expect(r.verifier_metadata.unit_tests.inputs.length).toBe(r.verifier_metadata.unit_tests.outputs.length);
  });

  describe.skipIf(!hasPython)('scored', () => {
    let app: App;
    beforeAll(async () => {
      app = await buildApp();
    });
    afterAll(async () => {
      await app?.close();
    });
    it('a correct program scores 1.0 and a wrong one 0.0 on every row', async () => {
      for (const row of rows) {
        const good = await verify(app, { ...row, response: answer(`Here it is.\n${py(SOLUTIONS[row.id]!)}`) });
        expect(good.body.reward, row.id).toBe(1);
        expect(good.body.result.every((r: unknown) => r === true)).toBe(true);
        const bad = await verify(app, { ...row, response: answer(py(row.verifier_metadata.unit_tests.fn_name ? 'class Solution:\n    def countPairs(self, nums, target):\n        return -1' : 'print("nope")')) });
        expect(bad.body.reward, row.id).toBe(0);
      }
    });
  });
});
