/**
 * What the data checks of ng-prepare-data and ng-test hold task rows against, without running a
 * server: the resources server's own description (its tools and verify-request schema, see
 * @nemo-gym/core/server describe.ts), read from its compiled entry module's `server` export.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDict, listLaunchable, repoRoot, type ConfigDict } from '@nemo-gym/core/config';
import { rowChecksOf, type RowChecks } from '@nemo-gym/core/data';
import { offersServerTools, type ResourcesServerDescription } from '@nemo-gym/core/server';
import { compiledEntrypoint } from './commands/run.js';

/** The description a server folder's entry module gives, or null (not built, not a resources server, or it fails to load). */
export async function describeServerFolder(dir: string, entrypoint = 'app.ts'): Promise<ResourcesServerDescription | null> {
  const script = compiledEntrypoint(dir, entrypoint);
  if (!existsSync(script)) return null;
  try {
    const mod = (await import(pathToFileURL(script).href)) as { server?: { describe?: () => ResourcesServerDescription } };
    return mod.server?.describe?.() ?? null;
  } catch {
    return null;
  }
}

/** The checks for the rows of an agent instance of `config`, from its resources server's folder. */
export async function agentRowChecks(config: ConfigDict, agentName: string): Promise<RowChecks | null> {
  const instances = listLaunchable(config);
  const agent = instances.find((i) => i.name === agentName);
  const ref = agent && isDict(agent.inner.resources_server) ? agent.inner.resources_server : null;
  const server = ref ? instances.find((i) => i.name === ref.name && i.serverType === 'resources_servers') : undefined;
  if (!agent || !server) return null;
  const description = await describeServerFolder(join(repoRoot(), server.serverType, server.impl), String(server.inner.entrypoint ?? 'app.ts'));
  if (!description) return null;
  return rowChecksOf(
    `resources server \`${server.name}\``,
    description.verifyRequestSchema,
    description.tools.map((t) => t.name),
    offersServerTools(agent.inner as { offer_server_tools?: boolean | null }, config),
  );
}
