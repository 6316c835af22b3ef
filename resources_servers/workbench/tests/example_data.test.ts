import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '@nemo-gym/core/config';
import { reward } from '../src/replay.js';
import { TOOL_SCHEMAS } from '../src/schemas.js';
import { TOOLS } from '../src/tools.js';
import { HAVE_DATA, realData, seeded } from './helpers.js';

const rows = readFileSync(new URL('../data/example.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Record<string, any>);

const asCalls = (gt: { name: string; arguments: string }[]) => gt.map((c, i) => ({ type: 'function_call', call_id: `c${i}`, ...c }));

describe('our example rows', () => {
  it('the config names app.ts, max_steps 6 and example files that exist', () => {
    const cfg = readFileSync(new URL('../configs/workbench.yaml', import.meta.url), 'utf8');
    expect(cfg).toContain('entrypoint: app.ts');
    expect(cfg).toContain('max_steps: 6');
    for (const m of cfg.matchAll(/jsonl_fpath: (resources_servers\/workbench\/data\/example\S*)/g)) {
      expect(existsSync(`${repoRoot()}/${m[1]}`), m[1]).toBe(true);
    }
  });

  it('the tool declarations match the tools: names, order and parameters', () => {
    expect(TOOL_SCHEMAS.map((t) => t.name)).toEqual([...TOOLS.keys()]);
    for (const t of TOOL_SCHEMAS) expect(Object.keys(t.parameters.properties), t.name).toEqual(TOOLS.get(t.name)!.params.map(([p]) => p));
    for (const row of rows) expect(row.responses_create_params.tools).toEqual(TOOL_SCHEMAS);
  });

  it.skipIf(!HAVE_DATA)('5 rows; the ground truth changes the state, succeeds in the tools, and only it scores 1.0', () => {
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      expect(row.environment_name).toBe('workbench');
      expect(reward(realData(), asCalls(row.ground_truth), row.ground_truth), row.category).toBe(1);
      expect(reward(realData(), [], row.ground_truth), row.category).toBe(0);
      const { call } = seeded(realData());
      for (const c of row.ground_truth) expect(String(call(c.name, JSON.parse(c.arguments)))).not.toMatch(/Error|not found|not valid|Invalid/);
    }
  });
});
