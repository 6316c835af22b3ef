/**
 * The Python package classifies an error answer by its NG_ERR_* code with its own copy of the
 * collector's table (it cannot import TypeScript): every code the collector classifies must mean the
 * same class there, so a trainer and ng-collect-rollouts name a failure alike.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CODE_CLASSES } from '@nemo-gym/core/rollouts';
import { ROOT } from './helpers/stack.js';

function pythonTable(): Record<string, string> {
  const text = readFileSync(join(ROOT, 'nemo_gym/server_utils.py'), 'utf8');
  const start = text.indexOf('_REASON_BY_CODE = {');
  const body = text.slice(start, text.indexOf('\n}', start));
  return Object.fromEntries([...body.matchAll(/^\s*"(NG_ERR_[A-Z0-9_]+)":\s*"([a-z_]+)",?\s*$/gm)].map((m) => [m[1]!, m[2]!]));
}

describe('failure classes by code: Python surface and collector agree', () => {
  it('every code the collector classifies has the same class in nemo_gym/server_utils.py', () => {
    const py = pythonTable();
    expect(Object.keys(py).length).toBeGreaterThan(5);
    const differ = Object.entries(CODE_CLASSES).filter(([code, cls]) => py[code] !== cls).map(([code, cls]) => `${code}: collector ${cls}, python ${py[code] ?? '(missing)'}`);
    expect(differ).toEqual([]);
  });
});
