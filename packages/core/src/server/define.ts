/**
 * One small API for the three server kinds. A server is a definition (class name, config
 * schema, routes with zod body schemas); `build` makes a Fastify app for tests, `start` runs it
 * the way ng-run launches it (see lifecycle.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CallCapture, rolloutMarkOf } from '../capture/recorder.js';
import { CAPTURE_ROUTES, captureAnswer } from '../capture/routes.js';
import { CaptureStore, RolloutCaptureSettingsSchema } from '../capture/store.js';
import { ServerClient } from '../client/client.js';
import type { ConfigDict } from '../config/merge.js';
import { compiled } from '../compiled-schema.js';
import { ConfigError, HttpError } from '../errors.js';
import { parseJsonBody } from '../http/json-body.js';
import { RawJson } from '../http/raw-json.js';
import { clientGoneSignal } from './client-gone.js';
import { SseReply, writeSse } from '../http/sse.js';
import { emptyBodyDetail, errorAnswer, jsonInvalid, zodIssuesToDetail } from './errors.js';
import { BODY_LIMIT, createFastPathServer, isPromiseLike } from './fast-path.js';
import { startServer } from './lifecycle.js';
import { collectSecretValues } from '../config/redact.js';
import { closest } from '../config/parse.js';
import { loggerOptionsFrom, makeLogger, type Logger } from './logger.js';
import { mountMcpIfEnabled } from './mcp.js';
import type { ResourcesServerDescription } from './describe.js';
import { sessionCookies, type Session } from './session.js';

export { RawJson, SseReply };

/**
 * The session id of a request to a custom Fastify route (`routes` in a server definition): the
 * same id the handlers of that session see as `ctx.sessionId`.
 */
export function requestSessionId(request: FastifyRequest): string {
  const session = (request as unknown as { ngSession?: Session | null }).ngSession;
  if (!session) throw new HttpError(500, 'the session hook did not run for this request');
  return session.id;
}

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
  /**
   * Aborts (with ClientGoneError) when the client closes the connection before the answer is
   * sent: it timed out or was stopped. Pass it to every downstream call (`client.post(..., {
   * signal })`, backend requests) so that work nobody waits for is cancelled. Made on first use.
   */
  readonly signal: AbortSignal;
  /** Model servers: the rollout id of a call made through `/ng-rollout/<id>/…` (null otherwise). */
  readonly rolloutId?: string | null;
  /**
   * Model servers: this call's token capture (a call through `/ng-rollout/<id>/…` with capture on;
   * null otherwise). A backend that reads exact token ids calls `capture.record(...)` there, before
   * streaming or converting; a call that ends without it is recorded as one without ids.
   */
  readonly capture?: CallCapture | null;
}

export interface Route<C, S, B extends z.ZodType = z.ZodType> {
  body: B;
  /** What the route does; a resources server's tools offer it to the model (GET /ng_tools). */
  description?: string;
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
  /** Resources servers: their tools and verify-request schema (see describe.ts). */
  describe?: () => ResourcesServerDescription;
  build(options: BuildOptions): Promise<FastifyInstance & { ngContext: SetupContext<C> & { state: S } }>;
  start(): Promise<FastifyInstance>;
}

type AnyRoute = Route<unknown, unknown, z.ZodType>;

/** The context of one request (a class: its lazily made `signal` costs nothing when unused). */
class RequestContext implements HandlerContext<unknown, unknown> {
  readonly sessionId: string;
  readonly cookies: Record<string, string>;
  rolloutId: string | null = null;
  capture: CallCapture | null = null;
  #signal: AbortSignal | undefined = undefined;
  constructor(
    readonly config: unknown,
    readonly client: ServerClient,
    readonly globalConfig: ConfigDict,
    readonly log: Logger,
    readonly state: unknown,
    private readonly session: Session,
    readonly cookieName: string,
    /** The inbound answer (absent for calls that do not come over HTTP, e.g. MCP tool calls). */
    private readonly res: ServerResponse | undefined,
  ) {
    this.sessionId = session.id;
    this.cookies = session.cookies;
  }
  setCookies(c: Record<string, string> | null | undefined): void {
    if (c) this.session.extra = { ...(this.session.extra ?? {}), ...c };
  }
  get signal(): AbortSignal {
    this.#signal ??= this.res ? clientGoneSignal(this.res) : new AbortController().signal;
    return this.#signal;
  }
}

/** A handler's value as the answer to send: RawJson and SseReply as they are, anything else as JSON. */
function toAnswer(out: unknown): RawJson | SseReply {
  return out instanceof RawJson || out instanceof SseReply ? out : new RawJson(JSON.stringify(out ?? null));
}

interface InternalRoute {
  path: string;
  route: AnyRoute;
}

/** The same event stream, telling the call's capture when it ended (not when it failed or the client left). */
function finishingSse(reply: SseReply, capture: CallCapture): SseReply {
  const source = reply.events;
  async function* events() {
    for await (const e of source) yield e;
    capture.finish(true);
  }
  return new SseReply(events(), reply.onClose, reply.status);
}

/** Keys ng-run itself puts into, or reads from, any instance's block. */
const LAUNCHER_KEYS = new Set(['num_replicas', 'replicas']);

/**
 * A model server's config block may hold only keys its schema declares: a misspelt or
 * unsupported setting (an upstream `chat_template_kwargs` on a server that does not take it)
 * stops the start naming the key, instead of being dropped without a word.
 */
function checkKnownKeys(className: string, schema: z.ZodType, raw: Record<string, unknown>): void {
  if (!(schema instanceof z.ZodObject)) return;
  const known = Object.keys(schema.shape as Record<string, unknown>);
  const knownSet = new Set(known);
  const unknown = Object.keys(raw).filter((k) => !knownSet.has(k) && !LAUNCHER_KEYS.has(k));
  if (unknown.length === 0) return;
  const lines = unknown.map((k) => {
    const near = closest(k, known);
    return `  - \`${k}\`${near ? ` (did you mean \`${near}\`?)` : ''}`;
  });
  throw new ConfigError(
    `Invalid config for ${className} instance \`${String(raw.name)}\`: unknown key${unknown.length > 1 ? 's' : ''} in its block:\n${lines.join('\n')}\n` +
      `Known keys: ${known.sort().join(', ')}. Remove the key or correct its spelling.`,
  );
}

export function defineServer<CS extends z.ZodType, S>(
  kind: ServerKind,
  input: ServerDefinitionInput<CS, S>,
  routesFor: (setupCtx: SetupContext<z.output<CS>> & { state: S }) => InternalRoute[],
): ServerDefinition<z.output<CS>, S> {
  type C = z.output<CS>;
  type App = FastifyInstance & { ngContext: SetupContext<C> & { state: S } };

  const build = async (options: BuildOptions): Promise<App> => {
    const rawConfig = { name: 'test', ...options.config };
    const parsed = input.configSchema.safeParse(rawConfig);
    if (!parsed.success) {
      const lines = parsed.error.issues.map((i) => `  - ${i.path.join('.') || '(root)'}: ${i.message}`);
      throw new ConfigError(`Invalid config for ${input.className} instance \`${String(rawConfig.name)}\`:\n${lines.join('\n')}`);
    }
    if (kind === 'responses_api_models') checkKnownKeys(input.className, input.configSchema, rawConfig);
    const config = parsed.data as C & { name: string };
    const globalConfig = options.globalConfig ?? {};
    const log = makeLogger(config.name, { ...loggerOptionsFrom(globalConfig), secrets: collectSecretValues(config) });
    const client = new ServerClient({ globalConfig });
    const setupCtx: SetupContext<C> = { config, client, globalConfig, log };
    const state = (input.setup ? await input.setup(setupCtx) : undefined) as S;
    const fullCtx = { ...setupCtx, state };
    const cookieName = `${input.className}___${config.name}`;
    const sessions = sessionCookies(cookieName);
    // Model servers serve their routes per rollout too, and keep that rollout's calls (capture/).
    const isModel = kind === 'responses_api_models';
    const captureSettings = isModel ? RolloutCaptureSettingsSchema.parse((config as { rollout_capture?: unknown }).rollout_capture ?? {}) : null;
    const captureStore = captureSettings ? new CaptureStore(captureSettings, config.name) : null;
    const noIdsReason = `model server \`${config.name}\` (${input.className}) gave no token ids for this call: its backend does not return them`;

    /** Requests being executed now (GET /ng_status reports it; ng-status and replica routing read it). */
    let inFlight = 0;
    const startedAt = Date.now();
    /**
     * Validates the body and runs the handler: the one place a POST route is executed. A handler
     * that returns a plain value is answered without a promise; one that returns a promise gives a
     * promise of the answer.
     */
    const execute = (r: AnyRoute, body: unknown, session: Session, res?: ServerResponse): RawJson | SseReply | Promise<RawJson | SseReply> => {
      // No body is fine for a route whose schema accepts {} (e.g. a tool without arguments).
      const raw = body === undefined || body === null ? {} : body;
      const result = compiled(r.body).safeParse(raw);
      if (!result.success) throw new HttpError(422, raw !== body ? emptyBodyDetail() : zodIssuesToDetail(result.error.issues, body));
      const ctx = new RequestContext(config, client, globalConfig, log, state, session, cookieName, res);
      const mark = isModel ? rolloutMarkOf(res?.req) : undefined;
      let capture: CallCapture | null = null;
      if (mark !== undefined) {
        ctx.rolloutId = mark.rolloutId;
        if (captureSettings!.enabled) {
          const bytes = mark.bodyBytes >= 0 ? mark.bodyBytes : Number(res!.req.headers['content-length'] ?? 0) || 0;
          capture = ctx.capture = new CallCapture(captureStore!, mark.rolloutId, routePaths.get(r) ?? '', raw, bytes, noIdsReason);
        }
      }
      inFlight++;
      let out: unknown;
      try {
        out = r.handler(result.data, ctx);
      } catch (err) {
        inFlight--;
        throw err;
      }
      if (isPromiseLike(out)) {
        return Promise.resolve(out).then(
          (v: unknown) => settled(captured(toAnswer(v), capture), res),
          (err: unknown) => {
            inFlight--;
            throw err;
          },
        );
      }
      return settled(captured(toAnswer(out), capture), res);
    };
    /** A call's answer, with its capture finished (an event stream finishes it at its end). */
    const captured = (answer: RawJson | SseReply, capture: CallCapture | null): RawJson | SseReply => {
      if (capture === null) return answer;
      if (answer instanceof SseReply) return finishingSse(answer, capture);
      capture.finish(answer.status < 400);
      return answer;
    };
    /** The request stops counting when its answer is made, or, for an event stream, when the stream ends. */
    const settled = (answer: RawJson | SseReply, res: ServerResponse | undefined): RawJson | SseReply => {
      if (answer instanceof SseReply && res !== undefined && !res.writableFinished && !res.destroyed) res.once('close', () => inFlight--);
      else inFlight--;
      return answer;
    };
    const failure = (err: unknown, method: string, url: string): RawJson => errorAnswer(err, log, method, url);

    const routes = new Map<string, AnyRoute>();
    const routePaths = new Map<AnyRoute, string>();
    for (const { path, route: r } of routesFor(fullCtx)) {
      routes.set(path, r);
      routePaths.set(r, path);
    }
    let closing = false;
    // The capture routes (GET/DELETE, no body) are answered on the fast path only.
    const plainRoutes = captureStore
      ? new Map(CAPTURE_ROUTES.map((route) => [route, (req: IncomingMessage, q: URLSearchParams) => captureAnswer(route, rolloutMarkOf(req)?.rolloutId ?? null, (k) => q.get(k), captureStore, config.name)] as const))
      : undefined;

    const app = Fastify({
      logger: false,
      bodyLimit: BODY_LIMIT,
      requestTimeout: 0,
      connectionTimeout: 0,
      return503OnClosing: true,
      serverFactory: (fastifyHandler) =>
        createFastPathServer({ routes, sessions, execute, failure, closing: () => closing, onAnswer: { all: log.requestsAll, log: log.request }, rolloutRoutes: isModel, plainRoutes }, fastifyHandler),
    });
    // Requests Fastify answers (GET /, custom routes, 404s): the same request lines as the fast path.
    app.addHook('onResponse', (request, reply, done) => {
      if (reply.statusCode >= 400 || log.requestsAll) log.request(request.method, request.url, reply.statusCode, reply.elapsedTime);
      done();
    });
    app.addHook('preClose', (done) => {
      closing = true;
      done();
    });

    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
      try {
        done(null, parseJsonBody(body as string));
      } catch (err) {
        done(err instanceof SyntaxError ? jsonInvalid(err) : (err as Error), undefined);
      }
    });

    app.setErrorHandler((err, request, reply) => {
      const out = failure(err, request.method, request.url);
      if (out.headers !== undefined) void reply.headers(out.headers);
      void reply.status(out.status).type('application/json').send(out.text);
    });

    app.setNotFoundHandler((request, reply) => {
      void reply.status(404).send({ detail: 'Not Found', path: request.url });
    });

    // Session on Fastify's path: read ours, create one if absent, and always send it back.
    app.decorateRequest('ngSession', null);
    app.addHook('onRequest', (request, _reply, done) => {
      (request as unknown as { ngSession: Session }).ngSession = sessions.open(request.headers.cookie);
      done();
    });
    app.addHook('onSend', (request, reply, payload, done) => {
      const session = (request as unknown as { ngSession: Session | null }).ngSession;
      if (session) void reply.header('set-cookie', sessions.setCookieValues(session));
      done(null, payload);
    });

    app.get('/', async () => ({ status: 'ok' }));
    app.get('/ng_status', async () => ({ status: closing ? 'closing' : 'ok', name: config.name, pid: process.pid, in_flight: inFlight, uptime_s: (Date.now() - startedAt) / 1000 }));

    for (const [path, r] of routes) {
      app.post(path, async (request, reply) => {
        const session = (request as unknown as { ngSession: Session }).ngSession;
        const out = await execute(r, request.body, session, reply.raw);
        if (out instanceof SseReply) {
          // The event stream is written straight to the socket, outside Fastify's reply.
          reply.hijack();
          await writeSse(reply.raw, out, { 'set-cookie': sessions.setCookieValues(session) });
          return reply;
        }
        if (out.headers !== undefined) void reply.headers(out.headers);
        return reply.status(out.status).type('application/json').send(out.text);
      });
    }
    if (input.routes) await input.routes(app, fullCtx);
    // MCP tool calls answer with one JSON result, never an event stream.
    const executeJson = async (r: AnyRoute, body: unknown, session: Session): Promise<RawJson> => {
      const out = await execute(r, body, session);
      if (out instanceof SseReply) throw new HttpError(500, 'this route answered with an event stream, which an MCP tool call cannot carry');
      return out;
    };
    await mountMcpIfEnabled(kind, app, { className: input.className, config, routes, bodyOf: (r) => r.body, sessions, execute: executeJson, failure, log });
    app.addHook('onClose', async () => {
      if (input.close) await input.close(fullCtx);
      await client.close();
    });
    return Object.assign(app, { ngContext: fullCtx }) as unknown as App;
  };

  const start = () => startServer(input.className, build);

  return { kind, className: input.className, build, start } as ServerDefinition<C, S>;
}
