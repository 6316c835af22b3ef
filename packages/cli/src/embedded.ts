/**
 * A command started by another program (the Python `nemo_gym` package's RunHelper) gets upstream's
 * GlobalConfigDictParserConfig through the environment, since a trainer passes a config dict, not
 * a command line:
 *
 * - `NEMO_GYM_INITIAL_CONFIG_JSON`: the initial global config dict (JSON), merged over the config
 *   files and env.yaml and under the command line, as upstream merges `initial_global_config_dict`;
 * - `NEMO_GYM_DOTENV_PATH`: the env.yaml to read instead of the one at the repo root;
 * - `NEMO_GYM_SKIP_DOTENV=1`: read no env.yaml.
 *
 * `port_range_low`/`port_range_high` in the initial dict bound the ports given to servers without
 * one (upstream picks them at random in the range and checks they are free).
 * The variables are removed from this process's environment once read, so the servers it starts
 * do not see them.
 */
import { createServer } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { ConfigError } from '@nemo-gym/core/errors';
import type { ConfigDict, ParseOptions } from '@nemo-gym/core/config';

export const INITIAL_CONFIG_ENV = 'NEMO_GYM_INITIAL_CONFIG_JSON';
export const DOTENV_PATH_ENV = 'NEMO_GYM_DOTENV_PATH';
export const SKIP_DOTENV_ENV = 'NEMO_GYM_SKIP_DOTENV';

function isDict(v: unknown): v is ConfigDict {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => res(false));
    srv.listen(port, '0.0.0.0', () => srv.close(() => res(true)));
  });
}

/** Upstream's find_open_port over a range: random ports in [low, high], skipping disallowed and taken ones. */
export function rangePortFinder(low: number, high: number, maxAttempts = 50): (disallowed: readonly number[]) => Promise<number> {
  return async (disallowed) => {
    for (let i = 0; i < maxAttempts; i++) {
      const port = low + Math.floor(Math.random() * (high - low + 1));
      if (disallowed.includes(port)) continue;
      if (await portFree(port)) return port;
    }
    throw new ConfigError(`Unable to find an open port in port_range_low..port_range_high (${low}..${high}) that doesn't conflict with disallowed ports [${disallowed.join(', ')}] after ${maxAttempts} attempts.`);
  };
}

/** The parse options the environment asks for (and removes those variables). */
export function embeddedParseOptions(env: NodeJS.ProcessEnv = process.env): ParseOptions {
  const options: ParseOptions = {};
  const text = env[INITIAL_CONFIG_ENV];
  if (text !== undefined) {
    let initial: unknown;
    try {
      initial = JSON.parse(text);
    } catch (err) {
      throw new ConfigError(`${INITIAL_CONFIG_ENV} is not JSON: ${(err as Error).message}.`);
    }
    if (!isDict(initial)) throw new ConfigError(`${INITIAL_CONFIG_ENV} must hold a JSON object (the initial global config dict).`);
    options.initial = initial;
    const low = initial.port_range_low;
    const high = initial.port_range_high;
    if (low !== undefined || high !== undefined) {
      if (!Number.isInteger(low) || !Number.isInteger(high) || (low as number) < 1 || (high as number) > 65535 || (low as number) > (high as number)) {
        throw new ConfigError(`port_range_low and port_range_high must be whole numbers with 1 <= low <= high <= 65535, got ${JSON.stringify(low)} and ${JSON.stringify(high)}.`);
      }
      options.findPort = rangePortFinder(low as number, high as number);
    }
  }
  const dotenv = env[DOTENV_PATH_ENV];
  if (dotenv) options.envPath = isAbsolute(dotenv) ? dotenv : resolve(dotenv);
  if (env[SKIP_DOTENV_ENV] === '1') options.skipEnv = true;
  delete env[INITIAL_CONFIG_ENV];
  delete env[DOTENV_PATH_ENV];
  delete env[SKIP_DOTENV_ENV];
  return options;
}
