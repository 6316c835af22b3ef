/**
 * mini_swe_resource: the resources server paired with mini_swe_agent. The agent checks out the
 * repository, runs the episode and the tests, and scores the rollout itself; this server only
 * offers the base routes, and `/verify` answers reward 1.0 (as upstream's).
 *
 * Ours: with `example_repo_path` set (the shipped config sets it), the repository the example rows
 * use is made there on first start when it is not there yet, so the example runs without a
 * hand-made checkout (the agent's `repo_path_template` points at it).
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { repoRoot } from '@nemo-gym/core/config';
import { BaseVerifyRequestSchema, defineResourcesServer, ResourcesServerConfigSchema, startIfMain } from '@nemo-gym/core/server';
import { EXAMPLE_REPO, makeExampleRepo } from './src/example_repo.js';

export const MiniSweResourceConfigSchema = ResourcesServerConfigSchema.extend({
  /** Where the example rows' repository is made when missing (relative to the repository root); null: nowhere. */
  example_repo_path: z.string().nullable().default(null),
});

export const server = defineResourcesServer({
  className: 'MiniSWEResourceResourcesServer',
  configSchema: MiniSweResourceConfigSchema,
  setup: ({ config, log }) => {
    const path = config.example_repo_path;
    if (!path) return;
    const dir = isAbsolute(path) ? path : resolve(repoRoot(), path);
    if (existsSync(join(dir, '.git'))) return;
    try {
      makeExampleRepo(dir);
      log.info(`made the example rows' repository ${EXAMPLE_REPO} at ${dir}`);
    } catch (err) {
      log.warn(`could not make the example rows' repository at ${dir} (${(err as Error).message}); make it with node resources_servers/mini_swe_resource/dist/src/example_repo.js ${dir}`);
    }
  },
  verify: {
    body: BaseVerifyRequestSchema,
    handler: (body) => ({ responses_create_params: body.responses_create_params, response: body.response, reward: 1.0 }),
  },
});

startIfMain(import.meta.url, server);
