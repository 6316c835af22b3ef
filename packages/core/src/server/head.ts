/**
 * The head server ng-run starts: serves the merged config to every process that asks
 * (`GET /global_config_dict_yaml`, a JSON string holding YAML, as upstream) and the list of
 * running instances. The served config is resolved and has every secret masked
 * (`publicConfig`): anyone who can reach the port may read it.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { stringify } from 'yaml';
import type { ConfigDict } from '../config/merge.js';
import { publicConfig } from '../config/scoped.js';

export interface InstanceInfo {
  name: string;
  server_type: string;
  impl: string;
  url: string;
  pid: number | null;
}

export async function startHeadServer(
  config: ConfigDict,
  host: string,
  port: number,
  instances: () => InstanceInfo[] = () => [],
): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  const yamlText = stringify(publicConfig(config), { aliasDuplicateObjects: false, lineWidth: 0 });
  app.get('/', async () => ({ status: 'ok' }));
  app.get('/global_config_dict_yaml', async (_req, reply) => reply.type('application/json').send(JSON.stringify(yamlText)));
  app.get('/server_instances', async () => instances());
  await app.listen({ host, port });
  return app;
}
