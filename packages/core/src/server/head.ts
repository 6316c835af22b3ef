/**
 * The head server ng-run starts: serves the merged config to every process that asks
 * (`GET /global_config_dict_yaml`, a JSON string holding YAML, as upstream) and the list of
 * running instances. The served config is resolved and has every secret masked
 * (`publicConfig`): anyone who can reach the port may read it.
 *
 * Instances started by another ng-run (on another host, or with `+only=[…]`) register here
 * (`POST /server_instances/register`), so `GET /server_instances` lists every replica of the
 * deployment; clients route among them. `POST /stop` asks the ng-run that owns this head server
 * to stop (what ng-stop sends). These three change the deployment: they need the deployment token
 * (`Authorization: Bearer <token>`, see head-token.ts) and answer 401 `NG_ERR_HEAD_TOKEN` without it.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { stringify } from 'yaml';
import { z } from 'zod';
import type { ConfigDict } from '../config/merge.js';
import { groupVerifiers } from '../config/group-verify.js';
import { publicConfig } from '../config/scoped.js';
import { errorMessage } from '../errors.js';
import { bearerToken, generateHeadToken, HEAD_TOKEN_HELP, tokensMatch } from './head-token.js';

export const InstanceInfoSchema = z.object({
  name: z.string().min(1),
  server_type: z.string(),
  impl: z.string(),
  url: z.string().regex(/^https?:\/\/[^/\s]+$/, 'expected an origin like http://10.0.0.2:8000'),
  pid: z.number().int().nullable(),
  /** Index of this replica among the instance's replicas on its host (0 for the first). */
  replica: z.number().int().min(0).optional(),
  /** Host name of the machine that runs it (os.hostname()). */
  host: z.string().optional(),
  /** `running`, or `exited` with its exit code or signal. */
  state: z.enum(['running', 'exited']).optional(),
  exit_code: z.number().int().nullable().optional(),
  signal: z.string().nullable().optional(),
  /** Epoch ms it was started. */
  started_at: z.number().optional(),
  /** Set by the head server on instances another ng-run registered. */
  registered: z.boolean().optional(),
});
export type InstanceInfo = z.infer<typeof InstanceInfoSchema>;

const RegisterSchema = z.object({ instances: z.array(InstanceInfoSchema).max(10_000) });
const DeregisterSchema = z.object({ urls: z.array(z.string()).max(10_000) });

export interface HeadServerOptions {
  /** The instances this ng-run started (asked on every GET /server_instances). */
  instances?: () => InstanceInfo[];
  /** Called once when POST /stop arrives, after the answer was sent. Without it, /stop answers 409. */
  onStop?: (why: string) => void;
  /**
   * The deployment token POST /stop and /server_instances/(de)register require. Without one, a
   * random token no one knows is used: those routes then refuse every caller.
   */
  token?: string;
}

export async function startHeadServer(
  config: ConfigDict,
  host: string,
  port: number,
  options: HeadServerOptions | (() => InstanceInfo[]) = {},
): Promise<FastifyInstance> {
  const opts: HeadServerOptions = typeof options === 'function' ? { instances: options } : options;
  const local = opts.instances ?? (() => []);
  /** Registered by other ng-run processes, by URL. */
  const registered = new Map<string, InstanceInfo>();
  let stopping = false;
  const token = opts.token ?? generateHeadToken();
  const app = Fastify({ logger: false });
  /** Answers 401 unless the request carries the token; the token is never echoed. */
  app.addHook('onRequest', async (req, reply) => {
    if (req.method !== 'POST') return;
    const given = bearerToken(req.headers.authorization);
    if (given !== null && tokensMatch(given, token)) return;
    const what = `POST ${req.url.split('?')[0]} on the head server`;
    const detail = given === null ? `${what} needs the deployment token (header \`Authorization: Bearer <token>\`), and the request carried none. ${HEAD_TOKEN_HELP}` : `${what} was refused: the token sent is not this deployment's token. ${HEAD_TOKEN_HELP}`;
    await reply.status(401).send({ detail: errorMessage('NG_ERR_HEAD_TOKEN', detail), code: 'NG_ERR_HEAD_TOKEN' });
    return reply;
  });
  const yamlText = stringify(publicConfig(config), { aliasDuplicateObjects: false, lineWidth: 0 });
  app.get('/', async () => ({ status: stopping ? 'stopping' : 'ok' }));
  app.get('/global_config_dict_yaml', async (_req, reply) => reply.type('application/json').send(JSON.stringify(yamlText)));
  app.get('/server_instances', async () => [...local(), ...registered.values()]);
  // The agents whose rollouts are scored as groups (docs/group-rewards.md), for collectors that read no YAML (the Python surface).
  app.get('/group_verifiers', async () => groupVerifiers(config));
  app.post('/server_instances/register', async (req, reply) => {
    const parsed = RegisterSchema.safeParse(req.body);
    if (!parsed.success) return reply.status(422).send({ detail: `expected {instances: [{name, server_type, impl, url, pid}, …]}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` });
    for (const inst of parsed.data.instances) registered.set(inst.url, { ...inst, registered: true });
    return { registered: parsed.data.instances.length };
  });
  app.post('/server_instances/deregister', async (req, reply) => {
    const parsed = DeregisterSchema.safeParse(req.body);
    if (!parsed.success) return reply.status(422).send({ detail: 'expected {urls: [string, …]}' });
    let removed = 0;
    for (const url of parsed.data.urls) if (registered.delete(url)) removed++;
    return { deregistered: removed };
  });
  app.post('/stop', async (req, reply) => {
    if (!opts.onStop) return reply.status(409).send({ detail: 'This head server was not started by ng-run; stop its process instead.' });
    const first = !stopping;
    stopping = true;
    if (first) {
      const from = req.ip;
      reply.raw.once('finish', () => opts.onStop!(`Stop requested through the head server (from ${from})`));
    }
    return { stopping: true, instances: local().length };
  });
  await app.listen({ host, port });
  return app;
}
