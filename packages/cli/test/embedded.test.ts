/** The environment a program embedding ng-run (the Python package's RunHelper) hands it. */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { embeddedParseOptions, rangePortFinder } from '../src/embedded.js';

describe('embeddedParseOptions', () => {
  it('reads the initial dict, the env.yaml path and the skip flag, and removes the variables', () => {
    const env: NodeJS.ProcessEnv = {
      NEMO_GYM_INITIAL_CONFIG_JSON: JSON.stringify({ policy_base_url: ['http://a/v1', 'http://b/v1'], port_range_low: 5000, port_range_high: 5999 }),
      NEMO_GYM_DOTENV_PATH: '/somewhere/nemo_gym_env.yaml',
      NEMO_GYM_SKIP_DOTENV: '1',
      OTHER: 'kept',
    };
    const opts = embeddedParseOptions(env);
    expect(opts.initial).toEqual({ policy_base_url: ['http://a/v1', 'http://b/v1'], port_range_low: 5000, port_range_high: 5999 });
    expect(opts.envPath).toBe('/somewhere/nemo_gym_env.yaml');
    expect(opts.skipEnv).toBe(true);
    expect(typeof opts.findPort).toBe('function');
    expect(env).toEqual({ OTHER: 'kept' });
  });

  it('returns nothing when no variable is set, and refuses what is not a JSON object or a sane range', () => {
    expect(embeddedParseOptions({})).toEqual({});
    expect(() => embeddedParseOptions({ NEMO_GYM_INITIAL_CONFIG_JSON: '[1]' })).toThrow(/must hold a JSON object/);
    expect(() => embeddedParseOptions({ NEMO_GYM_INITIAL_CONFIG_JSON: '{' })).toThrow(/is not JSON/);
    expect(() => embeddedParseOptions({ NEMO_GYM_INITIAL_CONFIG_JSON: JSON.stringify({ port_range_low: 6000, port_range_high: 5000 }) })).toThrow(/port_range_low and port_range_high/);
  });

  it('picks free ports inside the range, skipping disallowed and taken ones', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '0.0.0.0', () => r()));
    const busy = (taken.address() as { port: number }).port;
    const find = rangePortFinder(busy, busy + 2);
    for (let i = 0; i < 10; i++) {
      const port = await find([busy + 1]);
      expect(port).toBe(busy + 2);
    }
    taken.close();
    await expect(rangePortFinder(busy + 1, busy + 1, 5)([busy + 1])).rejects.toThrow(/Unable to find an open port/);
  });
});
