/**
 * One small API for the three server kinds. A server is a definition (class name, config
 * schema, routes with zod body schemas); `build` makes a Fastify app for tests, `start` runs it
 * the way ng-run launches it (config from NEMO_GYM_CONFIG_DICT / NEMO_GYM_CONFIG_PATH).
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { fileURLToPath } from 'node:url';
import { realpathSync } from 'node:fs';
import { z } from 'zod';
import { ServerClient } from '../client/client.js';
import { getFirstServerConfigDict, ModelServerRefSchema, ResourcesServerRefSchema, DomainSchema } from '../config/instances.js';
import { resolveValue } from '../config/interpolate.js';
import { getGlobalConfig } from '../config/parse.js';
import { ConfigError, HttpError, NgError, describeError } from '../errors.js';
import type { ConfigDict } from '../config/merge.js';
import { zodIssuesToDetail } from './errors.js';
import { decodeSession, encodeSession, formatSetCookie, newSessionId, parseCookieHeader } from './session.js';

/** Return this from a handler to send an already-serialized JSON body as is. */
export class RawJson {
  constructor(readonly text: string) {}
}

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export function makeLogger(name: string): Logger {
  // Under ng-run every line is already prefixed with the instance name.
  const prefix = process.env.NEMO_GYM_LOG_PREFIXED ? '' : `(${name}) `;
  const line = (level: string, msg: string) => `${prefix}${level}${msg}\n`;
  return {
    info: (msg) => void process.stdout.write(line('', msg)),
    warn: (msg) => void process.stderr.write(line('WARNING: ', msg)),
    error: (msg) => void process.stderr.write(line('ERROR: ', msg)),
  };
}

export const BaseServerConfigSchema = z
  .object({
    name: z.string(),
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(0),
    entrypoint: z.string().default('app.ts'),
  })
  .loose();
export const ResourcesServerConfigSchema = BaseServerConfigSchema.extend({ domain: DomainSchema });
export const ModelServerConfigSchema = BaseServerConfigSchema;
export const AgentServerConfigSchema = BaseServerConfigSchema.extend({
  resources_server: ResourcesServerRefSchema.optional(),
  model_server: ModelServerRefSchema.optional(),
});

export interface SetupContext<C> {
  config: C;
  client: ServerClient;
  globalConfig: ConfigDict;
  log: Logger;
}

export interface HandlerContext<C, S> extends SetupContext<C> {
  state: S;
  /** Stable across every call of one rollout (carried by this server's session cookie). */
  sessionId: string;
  /** Cookie name of this server's session (`<ClassName>___<instance>`). */
  cookieName: string;
  /** Cookies the request carried. */
  cookies: Record<string, string>;
  /** Adds cookies (other servers' sessions) to this response. */
  setCookies(cookies: Record<string, string> | null | undefined): void;
  request: FastifyRequest;
  reply: FastifyReply;
}

export interface Route<C, S, B extends z.ZodType = z.ZodType> {
  body: B;
  handler: (body: z.output<B>, ctx: HandlerContext<C, S>) => unknown;
}

/** Helper so that `body` types flow into `handler` when routes are written inline. */
export function route<C, S, B extends z.ZodType>(r: Route<C, S, B>): Route<C, S, B> {
  return r;
}

export type ServerKind = 'responses_api_models' | 'resources_servers' | 'responses_api_agents';

export interface ServerDefinitionInput<CS extends z.ZodType, S> {
  className: string;
  configSchema: CS;
  setup?: (ctx: SetupContext<z.output<CS>>) => S | Promise<S>;
  routes?: (app: FastifyInstance, ctx: SetupContext<z.output<CS>> & { state: S }) => void | Promise<void>;
  close?: (ctx: SetupContext<z.output<CS>> & { state: S }) => void | Promise<void>;
}

export interface BuildOptions {
  /** This server's own config (the inner dict); `name` defaults to "test". */
  config: Record<string, unknown>;
  /** The whole config, for ServerClient (other instances, head server). */
  globalConfig?: ConfigDict;
  /** Log to stdout/stderr (default: only errors). */
  verbose?: boolean;
}

export interface ServerDefinition<C = unknown, S = unknown> {
  kind: ServerKind;
  className: string;
  build(options: BuildOptions): Promise<FastifyInstance & { ngContext: SetupContext<C> & { state: S } }>;
  start(): Promise<FastifyInstance>;
}

interface InternalRoute {
  path: string;
  route: Route<unknown, unknown, z.ZodType>;
}

function emptyBodyDetail() {
  return [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }];
}

export function defineServer<CS extends z.ZodType, S>(
  kind: ServerKind,
  input: ServerDefinitionInput<CS, S>,
  routesFor: (setupCtx: SetupContext<z.output<CS>> & { state: S }) => InternalRoute[],
): ServerDefinition<z.output<CS>, S> {
  type C = z.output<CS>;

  const build = async (options: BuildOptions) => {
    const rawConfig = { name: 'test', ...options.config };
    const parsed = input.configSchema.safeParse(rawConfig);
    if (!parsed.success) {
      const lines = parsed.error.issues.map((i) => `  - ${i.path.join('.') || '(root)'}: ${i.message}`);
      throw new ConfigError(`Invalid config for ${input.className} instance \`${String(rawConfig.name)}\`:\n${lines.join('\n')}`);
    }
    const config = parsed.data as C & { name: string };
    const globalConfig = options.globalConfig ?? {};
    const log = makeLogger(config.name);
    const client = new ServerClient({ globalConfig });
    const setupCtx: SetupContext<C> = { config, client, globalConfig, log };
    const state = (input.setup ? await input.setup(setupCtx) : undefined) as S;
    const fullCtx = { ...setupCtx, state };
    const cookieName = `${input.className}___${config.name}`;
    const secret = process.env.NEMO_GYM_SESSION_SECRET ? `${process.env.NEMO_GYM_SESSION_SECRET}:${cookieName}` : cookieName;

    const app = Fastify({
      logger: false,
      bodyLimit: 512 * 1024 * 1024,
      keepAliveTimeout: 30_000,
      requestTimeout: 0,
      connectionTimeout: 0,
      return503OnClosing: true,
    });

    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
      const text = body as string;
      if (text.length === 0) {
        done(null, undefined);
        return;
      }
      try {
        done(null, JSON.parse(text));
      } catch (err) {
        const e = new HttpError(422, [{ type: 'json_invalid', loc: ['body', 0], msg: `JSON decode error: ${(err as Error).message}`, input: {} }]);
        done(e, undefined);
      }
    });

    app.setErrorHandler((err, request, reply) => {
      if (err instanceof HttpError) {
        void reply.status(err.status).send({ detail: err.detail });
        return;
      }
      const e = err as { statusCode?: number; code?: string; message?: string };
      if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
        void reply.status(e.statusCode === 400 ? 422 : e.statusCode).send({ detail: e.message ?? 'Bad request' });
        return;
      }
      log.error(`${request.method} ${request.url} failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      void reply.status(500).type('application/json').send(JSON.stringify(describeError(err)));
    });

    app.setNotFoundHandler((request, reply) => {
      void reply.status(404).send({ detail: 'Not Found', path: request.url });
    });

    // Session: read ours, create one if absent, and always send it back.
    app.decorateRequest('ngSessionId', '');
    app.decorateRequest('ngExtraCookies', null);
    // Signing is the same for every response of a session: remember the signed value.
    const signed = new Map<string, string>();
    const sign = (id: string) => {
      let v = signed.get(id);
      if (v === undefined) {
        if (signed.size >= 100_000) signed.clear();
        v = encodeSession(id, secret);
        signed.set(id, v);
      }
      return v;
    };
    app.addHook('onRequest', (request, _reply, done) => {
      const cookies = parseCookieHeader(request.headers.cookie);
      const value = cookies[cookieName];
      let id: string | null = null;
      if (value !== undefined) {
        const dot = value.lastIndexOf('.');
        const candidate = dot > 0 ? value.slice(0, dot) : '';
        id = signed.get(candidate) === value ? candidate : decodeSession(value, secret);
      }
      (request as unknown as { ngSessionId: string }).ngSessionId = id ?? newSessionId();
      done();
    });
    app.addHook('onSend', (request, reply, payload, done) => {
      const id = (request as unknown as { ngSessionId: string }).ngSessionId;
      const extra = (request as unknown as { ngExtraCookies: Record<string, string> | null }).ngExtraCookies;
      const headers: string[] = [];
      if (extra) for (const [k, v] of Object.entries(extra)) if (k !== cookieName) headers.push(formatSetCookie(k, v));
      if (id) headers.push(formatSetCookie(cookieName, sign(id)));
      if (headers.length) void reply.header('set-cookie', headers);
      done(null, payload);
    });

    app.get('/', async () => ({ status: 'ok' }));

    for (const { path, route: r } of routesFor(fullCtx)) {
      app.post(path, async (request, reply) => {
        // No body is fine for a route whose schema accepts {} (e.g. a tool without arguments).
        const raw = request.body === undefined || request.body === null ? {} : request.body;
        const result = r.body.safeParse(raw);
        if (!result.success && raw !== request.body) throw new HttpError(422, emptyBodyDetail());
        if (!result.success) throw new HttpError(422, zodIssuesToDetail(result.error.issues, request.body));
        const ctx: HandlerContext<unknown, unknown> = {
          ...fullCtx,
          sessionId: (request as unknown as { ngSessionId: string }).ngSessionId,
          cookieName,
          cookies: parseCookieHeader(request.headers.cookie),
          setCookies: (c) => {
            if (!c) return;
            const req = request as unknown as { ngExtraCookies: Record<string, string> | null };
            req.ngExtraCookies = { ...(req.ngExtraCookies ?? {}), ...c };
          },
          request,
          reply,
        };
        const out = await r.handler(result.data, ctx);
        if (out instanceof RawJson) return reply.type('application/json').send(out.text);
        if (reply.sent) return reply;
        return reply.type('application/json').send(JSON.stringify(out ?? null));
      });
    }
    if (input.routes) await input.routes(app, fullCtx);
    app.addHook('onClose', async () => {
      if (input.close) await input.close(fullCtx);
      await client.close();
    });
    return Object.assign(app, { ngContext: fullCtx }) as unknown as FastifyInstance & { ngContext: SetupContext<C> & { state: S } };
  };

  const start = async () => {
    const name = process.env.NEMO_GYM_CONFIG_PATH;
    if (!name) {
      throw new ConfigError(
        `${input.className}: NEMO_GYM_CONFIG_PATH is not set. Servers are started by ng-run (\`pnpm ng-run "+config_paths=[...]"\`), which sets it to the instance name.`,
      );
    }
    const globalConfig = await getGlobalConfig();
    const inner = getFirstServerConfigDict(globalConfig, name);
    if (!inner) throw new ConfigError(`${input.className}: the config has no server instance named \`${name}\`.`);
    const own = resolveValue(globalConfig, inner, name) as Record<string, unknown>;
    const app = await build({ config: { ...own, name }, globalConfig });
    const cfg = app.ngContext.config as unknown as { host: string; port: number };
    // Thousands of rollouts may connect at once: a deep accept queue, and no header deadline
    // (a busy event loop can take longer than Node's default 60 s to read queued requests).
    app.server.headersTimeout = 0;
    await app.listen({ host: cfg.host, port: cfg.port, backlog: 65535 });
    app.ngContext.log.info(`${input.className} listening on http://${cfg.host}:${cfg.port}`);
    let closing = false;
    const stop = (signal: string) => {
      if (closing) return;
      closing = true;
      app.ngContext.log.info(`received ${signal}, closing`);
      const force = setTimeout(() => process.exit(0), 5000);
      force.unref();
      void app.close().then(() => process.exit(0), () => process.exit(1));
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
    if (process.env.NEMO_GYM_EXIT_ON_STDIN_CLOSE) {
      // ng-run holds our stdin open; if it dies without stopping us, we stop too (no orphans).
      process.stdin.on('end', () => stop('parent exit'));
      process.stdin.on('error', () => stop('parent exit'));
      process.stdin.resume();
    }
    return app;
  };

  return { kind, className: input.className, build, start } as ServerDefinition<C, S>;
}

/** Starts `server` when the calling module is the process entry point (`node dist/app.js`). */
export function startIfMain(importMetaUrl: string, server: ServerDefinition<never, never> | ServerDefinition<any, any>): void {
  const main = process.argv[1];
  if (!main) return;
  let self: string;
  let entry: string;
  try {
    self = realpathSync(fileURLToPath(importMetaUrl));
    entry = realpathSync(main);
  } catch {
    return;
  }
  if (self !== entry) return;
  server.start().catch((err: unknown) => {
    const msg = err instanceof NgError ? err.message : err instanceof Error ? err.stack ?? err.message : String(err);
    process.stderr.write(`(${process.env.NEMO_GYM_CONFIG_PATH ?? server.className}) failed to start: ${msg}\n`);
    process.exit(1);
  });
}
