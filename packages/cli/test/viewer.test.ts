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
});
