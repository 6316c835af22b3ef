import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJsonl } from '@nemo-gym/core/data';
import { parseJsonl } from '../../src/data/jsonl.js';
import { NgError } from '@nemo-gym/core/errors';

const dir = mkdtempSync(join(tmpdir(), 'ng-jsonl-'));

describe('the JSONL reader', () => {
  it('numbers every line, skips blank ones and says why a line is not an object', async () => {
    const path = join(dir, 'rows.jsonl');
    writeFileSync(path, '{"a": 1}\r\n\n  \n[1, 2]\r{"b": {"c": null}}\n{"torn": \nnull\n"x"\n{"last": true}');
    const got = [];
    for await (const l of readJsonl(path)) got.push(l.row === null ? [l.lineNo, l.problem] : [l.lineNo, l.row]);
    expect(got).toEqual([
      [1, { a: 1 }],
      [4, 'a JSON array, not an object'],
      [5, { b: { c: null } }],
      [6, expect.stringMatching(/^not JSON \(.+\)$/)],
      [7, 'a JSON null, not an object'],
      [8, 'a JSON string, not an object'],
      [9, { last: true }],
    ]);
  });

  it('a text read whole stops at the first line that is not an object, naming it', () => {
    expect(parseJsonl('{"a": 1}\n\n{"b": 2}\n', 'x.jsonl')).toEqual([{ a: 1 }, { b: 2 }]);
    let err: unknown;
    try {
      parseJsonl('{"a": 1}\n\n[3]\n', 'x.jsonl');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NgError);
    expect((err as NgError).code).toBe('NG_ERR_BAD_ROW');
    expect((err as Error).message).toBe('line 3 of x.jsonl is not a JSON object (a JSON array, not an object)');
  });
});
