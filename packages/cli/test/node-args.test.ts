import { describe, expect, it } from 'vitest';
import { serverNodeArgs } from '../src/runtime.js';

describe('serverNodeArgs: the node flags of every server process (and of the bench\'s bare chain)', () => {
  it('defaults to a larger young generation', () => {
    expect(serverNodeArgs({})).toEqual(['--max-semi-space-size=64']);
  });
  it('adds NEMO_GYM_NODE_ARGS after the defaults', () => {
    expect(serverNodeArgs({ NEMO_GYM_NODE_ARGS: ' --cpu-prof  --max-old-space-size=8192 ' })).toEqual(['--max-semi-space-size=64', '--cpu-prof', '--max-old-space-size=8192']);
  });
  it('lets NEMO_GYM_NODE_ARGS choose the young generation size itself', () => {
    expect(serverNodeArgs({ NEMO_GYM_NODE_ARGS: '--max-semi-space-size=8' })).toEqual(['--max-semi-space-size=8']);
  });
});
