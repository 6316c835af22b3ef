/**
 * One small API for the three server kinds. A server is a definition (class name, config
 * schema, routes with zod body schemas); `build` makes a Fastify app for tests, `start` runs it
 * the way ng-run launches it (config from NEMO_GYM_CONFIG_DICT / NEMO_GYM_CONFIG_PATH).
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
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
  constructor(
    readonly text: string,
    /** HTTP status of the answer (200 unless a handler says otherwise). */
    readonly status: number = 200,
  ) {}
}

/** Largest request body accepted (larger ones answer 413). */
const BODY_LIMIT = 512 * 1024 * 1024;

interface Session {
  id: string;
  /** Cookies the request carried. */
  cookies: Record<string, string>;
  /** Cookies a handler asked to set on the response (other servers' sessions). */
  extra: Record<string, string> | null;
}

/**
 * The session id of a request to a custom Fastify route (`routes` in a server definition): the
 * same id the handlers of that session see as `ctx.sessionId`.
 */
export function requestSessionId(request: FastifyRequest): string {
  const session = (request as unknown as { ngSession?: Session | null }).ngSession;
  if (!session) throw new HttpError(500, 'the session hook did not run for this request');
  return session.id;
}

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const semi = value.indexOf(';');
  return (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase() === 'application/json';
}

function jsonInvalid(err: Error): HttpError {
  return new HttpError(422, [{ type: 'json_invalid', loc: ['body', 0], msg: `JSON decode error: ${err.message}`, input: {} }]);
}

function sendJson(res: ServerResponse, out: RawJson, setCookie: string[]): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(out.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(out.text),
    'set-cookie': setCookie,
  });
  res.end(out.text);
}

function tooLarge(res: ServerResponse): void {
  const text = JSON.stringify({ detail: `Request body is larger than the limit of ${BODY_LIMIT} bytes` });
  res.writeHead(413, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), connection: 'close' });
  res.end(text);
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

    // Signing is the same for every response of a session: remember the signed value and the
    // whole Set-Cookie line (bounded; a cleared entry is just signed again).
    const signed = new Map<string, { value: string; setCookie: string }>();
    const signedEntry = (id: string) => {
      let v = signed.get(id);
      if (v === undefined) {
        if (signed.size >= 100_000) signed.clear();
        const value = encodeSession(id, secret);
        v = { value, setCookie: formatSetCookie(cookieName, value) };
        signed.set(id, v);
      }
      return v;
    };
    /** Our session from the Cookie header (a new one if absent or forged); other cookies kept. */
    const openSession = (cookieHeader: string | undefined): Session => {
      const cookies = parseCookieHeader(cookieHeader);
      const value = cookies[cookieName];
      let id: string | null = null;
      if (value !== undefined) {
        const dot = value.lastIndexOf('.');
        const candidate = dot > 0 ? value.slice(0, dot) : '';
        id = signed.get(candidate)?.value === value ? candidate : decodeSession(value, secret);
      }
      return { id: id ?? newSessionId(), cookies, extra: null };
    };
    /** Set-Cookie values for a response: cookies a handler added, then our session (always re-sent). */
    const setCookieValues = (session: Session): string[] => {
      const out: string[] = [];
      if (session.extra) for (const [k, v] of Object.entries(session.extra)) if (k !== cookieName) out.push(formatSetCookie(k, v));
      out.push(signedEntry(session.id).setCookie);
      return out;
    };

    /** Validates the body and runs the handler: the one place a POST route is executed. */
    const execute = async (r: Route<unknown, unknown, z.ZodType>, body: unknown, session: Session): Promise<RawJson> => {
      // No body is fine for a route whose schema accepts {} (e.g. a tool without arguments).
      const raw = body === undefined || body === null ? {} : body;
      const result = r.body.safeParse(raw);
      if (!result.success && raw !== body) throw new HttpError(422, emptyBodyDetail());
      if (!result.success) throw new HttpError(422, zodIssuesToDetail(result.error.issues, body));
      const ctx: HandlerContext<unknown, unknown> = {
        config,
        client,
        globalConfig,
        log,
        state,
        sessionId: session.id,
        cookieName,
        cookies: session.cookies,
        setCookies: (c) => {
          if (c) session.extra = { ...(session.extra ?? {}), ...c };
        },
      };
      const out = await r.handler(result.data, ctx);
      return out instanceof RawJson ? out : new RawJson(JSON.stringify(out ?? null));
    };

    /** The answer for a failed request: HttpError keeps its status; anything else is a logged, short 500. */
    const failure = (err: unknown, method: string, url: string): RawJson => {
      if (err instanceof HttpError) return new RawJson(JSON.stringify({ detail: err.detail }), err.status);
      const e = err as { statusCode?: unknown; message?: string };
      if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
        return new RawJson(JSON.stringify({ detail: e.message ?? 'Bad request' }), e.statusCode === 400 ? 422 : e.statusCode);
      }
      log.error(`${method} ${url} failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      return new RawJson(JSON.stringify(describeError(err)), 500);
    };

    const routes = new Map<string, Route<unknown, unknown, z.ZodType>>();
    for (const { path, route: r } of routesFor(fullCtx)) routes.set(path, r);
    let closing = false;

    /**
     * The hot path: JSON POSTs to our own routes are answered straight from node:http, without
     * Fastify's request/reply/hook machinery (which costs more CPU per call than the rest of a
     * short handler). Everything else — GET /, custom routes, other content types, 404s — goes
     * to Fastify. Both paths run `execute` and answer the same bytes.
     */
    const serveFast = (r: Route<unknown, unknown, z.ZodType>, req: IncomingMessage, res: ServerResponse): void => {
      const declared = Number(req.headers['content-length']);
      if (declared > BODY_LIMIT) {
        tooLarge(res);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > BODY_LIMIT) {
          chunks.length = 0;
          if (!res.headersSent) tooLarge(res);
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => {
        if (res.headersSent) return;
        const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
        const session = openSession(req.headers.cookie);
        let body: unknown;
        let outcome: Promise<RawJson>;
        try {
          body = text.length === 0 ? undefined : JSON.parse(text);
          outcome = execute(r, body, session);
        } catch (err) {
          outcome = Promise.resolve(failure(err instanceof SyntaxError ? jsonInvalid(err) : err, 'POST', req.url ?? ''));
        }
        outcome.then(
          (out) => sendJson(res, out, setCookieValues(session)),
          (err: unknown) => sendJson(res, failure(err, 'POST', req.url ?? ''), setCookieValues(session)),
        );
      });
    };

    const app = Fastify({
      logger: false,
      bodyLimit: BODY_LIMIT,
      requestTimeout: 0,
      connectionTimeout: 0,
      return503OnClosing: true,
      serverFactory: (fastifyHandler) => {
        const server = createServer((req, res) => {
          if (req.method === 'POST') {
            const r = routes.get(req.url ?? '');
            if (r !== undefined && !closing && isJsonContentType(req.headers['content-type'])) {
              serveFast(r, req, res);
              return;
            }
          }
          fastifyHandler(req, res);
        });
        server.keepAliveTimeout = 30_000;
        server.requestTimeout = 0;
        return server;
      },
    });
    app.addHook('preClose', (done) => {
      closing = true;
      done();
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
        done(jsonInvalid(err as Error), undefined);
      }
    });

    app.setErrorHandler((err, request, reply) => {
      const out = failure(err, request.method, request.url);
      void reply.status(out.status).type('application/json').send(out.text);
    });

    app.setNotFoundHandler((request, reply) => {
      void reply.status(404).send({ detail: 'Not Found', path: request.url });
    });

    // Session on Fastify's path: read ours, create one if absent, and always send it back.
    app.decorateRequest('ngSession', null);
    app.addHook('onRequest', (request, _reply, done) => {
      (request as unknown as { ngSession: Session }).ngSession = openSession(request.headers.cookie);
      done();
    });
    app.addHook('onSend', (request, reply, payload, done) => {
      const session = (request as unknown as { ngSession: Session | null }).ngSession;
      if (session) void reply.header('set-cookie', setCookieValues(session));
      done(null, payload);
    });

    app.get('/', async () => ({ status: 'ok' }));

    for (const [path, r] of routes) {
      app.post(path, async (request, reply) => {
        const out = await execute(r, request.body, (request as unknown as { ngSession: Session }).ngSession);
        return reply.status(out.status).type('application/json').send(out.text);
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
