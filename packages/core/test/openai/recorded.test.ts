/**
 * Upstream's recorded rollouts hold full dumps of the request and the Response. Parsing them and
 * dumping them again must give back the same JSON, key order included.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ResponseCreateParamsSchema, ResponseSchema, fullCreateParamsDump, fullResponseDump } from '../../src/openai/index.js';

const dataRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', '..', 'shared', 'upstream-data');
/**
 * The recordings predate three Response fields of the SDK version the spec targets; the API sent
 * two of them as extra keys, at the end. Compare everything else, order included.
 */
const NEWER_KEYS = ['conversation', 'prompt_cache_key', 'safety_identifier'];
function withoutNewerKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([k]) => !NEWER_KEYS.includes(k)));
}

const files: string[] = [];
if (existsSync(dataRoot)) {
  for (const server of readdirSync(dataRoot)) {
    const dir = join(dataRoot, server);
    if (!existsSync(dir)) continue;
    // mini_swe_agent writes its request as it built it (items without `type`), not as a full dump.
    if (server === 'mini_swe_resource') continue;
    for (const f of readdirSync(dir)) if (/rollouts.*\.jsonl$/.test(f)) files.push(join(dir, f));
  }
} else {
  console.log(`skipping recorded dump checks: ${dataRoot} not found`);
}

describe.skipIf(files.length === 0)('full dumps reproduce recorded rollouts', () => {
  it.each(files.map((f) => [f.slice(dataRoot.length + 1), f]))('%s', (_name, file) => {
    const rows = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      const params = ResponseCreateParamsSchema.parse(row.responses_create_params);
      expect(JSON.stringify(fullCreateParamsDump(params))).toBe(JSON.stringify(row.responses_create_params));
      const resp = ResponseSchema.parse(row.response);
      expect(JSON.stringify(withoutNewerKeys(fullResponseDump(resp)))).toBe(JSON.stringify(withoutNewerKeys(row.response)));
    }
  });
});
