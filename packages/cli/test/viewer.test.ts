import { describe, expect, it } from 'vitest';
import { viewerFlags } from '../src/commands/viewer.js';

describe('ng-viewer flags', () => {
  it('requires jsonl_fpath, defaults to 127.0.0.1:7860 and checks the port', () => {
    expect(() => viewerFlags({})).toThrow(/\+jsonl_fpath=<rollouts.jsonl>/);
    expect(viewerFlags({ jsonl_fpath: 'r.jsonl' })).toEqual({ jsonl_fpath: 'r.jsonl', host: '127.0.0.1', port: 7860 });
    expect(viewerFlags({ jsonl_fpath: 'r.jsonl', port: 0 }).port).toBe(0);
    expect(() => viewerFlags({ jsonl_fpath: 'r.jsonl', port: 'http' })).toThrow(/not a port number/);
    expect(() => viewerFlags({ jsonl_fpath: 'r.jsonl', port: 70000 })).toThrow(/0 to 65535/);
  });

  it('takes a second file to compare with, and refuses an empty one', () => {
    expect(viewerFlags({ jsonl_fpath: 'a.jsonl', compare_jsonl_fpath: 'b.jsonl' }).compare_jsonl_fpath).toBe('b.jsonl');
    expect(viewerFlags({ jsonl_fpath: 'a.jsonl' })).not.toHaveProperty('compare_jsonl_fpath');
    expect(() => viewerFlags({ jsonl_fpath: 'a.jsonl', compare_jsonl_fpath: '' })).toThrow(/\+compare_jsonl_fpath must name a second rollouts JSONL file/);
  });

  it('takes several runs to show beside the first as a list', () => {
    expect(viewerFlags({ jsonl_fpath: 'a.jsonl', compare_jsonl_fpath: ['b.jsonl', 'c.jsonl'] })).toEqual({ jsonl_fpath: 'a.jsonl', host: '127.0.0.1', port: 7860, compare_jsonl_fpaths: ['b.jsonl', 'c.jsonl'] });
    expect(() => viewerFlags({ jsonl_fpath: 'a.jsonl', compare_jsonl_fpath: [] })).toThrow(/several runs/);
    expect(() => viewerFlags({ jsonl_fpath: 'a.jsonl', compare_jsonl_fpath: ['b.jsonl', 3] })).toThrow(/several runs/);
  });
});
