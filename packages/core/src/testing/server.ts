/**
 * A server under test, in-process: built from its definition, posted to through Fastify's
 * inject (no socket) or, with `listen: true`, over real HTTP on 127.0.0.1 (the node:http fast
 * path every deployed server answers on). Sessions keep the server's cookies between posts.
 */
import { strict as assert } from 'node:assert';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll } from 'vitest';
import { formatCookieHeader, parseSetCookies } from '../http/cookies.js';
import type { BuildOptions, ServerDefinition, SetupContext } from '../server/define.js';

type Headers = Record<string, string | string[] | undefined>;

/** One answer of the server under test. */
export interface Posted<T = any> {
  status: number;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: T;
  text: string;
  headers: Headers;
  /** Cookies the answer set (name -> value). */
  cookies: Record<string, string>;
  /** `<name>=<value>` of this server's own session cookie, for a Cookie header. */
  cookie: string;
}

export interface PostOptions {
  /** A Cookie header to send. */
  cookie?: string;
  headers?: Record<string, string>;
}

/** A cookie jar bound to one server: every post sends the cookies earlier answers set. */
export interface TestSession {
  post<T = any>(path: string, body?: unknown): Promise<Posted<T>>;
  /** The jar (name -> value). */
  readonly cookies: Record<string, string>;
  /** The Cookie header the next post sends. */
  readonly cookieHeader: string | undefined;
}

export interface TestServer<C = unknown, S = unknown> {
  /** The built Fastify app (its `ngContext` holds config, state and client). */
  readonly app: Awaited<ReturnType<ServerDefinition<C, S>['build']>>;
  readonly context: SetupContext<C> & { state: S };
  /** This server's session cookie name (`<ClassName>___<instance name>`). */
  readonly cookieName: string;
  /** `http://127.0.0.1:<port>` when started with `listen: true`. */
  readonly url: string;
  readonly port: number;
  post<T = any>(path: string, body?: unknown, options?: PostOptions): Promise<Posted<T>>;
  /** A new cookie jar for this server. */
  session(): TestSession;
  close(): Promise<void>;
}

export interface TestServerOptions extends BuildOptions {
  /** Serve on 127.0.0.1 (a free port) and post over HTTP instead of injecting. */
  listen?: boolean;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Builds `server` and returns a handle to post to it. Close it when done. */
export async function startTestServer<C, S>(server: ServerDefinition<C, S>, options: TestServerOptions): Promise<TestServer<C, S>> {
  const { listen, ...build } = options;
  const app = await server.build(build);
  const config = app.ngContext.config as { name: string };
  const cookieName = `${server.className}___${config.name}`;
  let port = 0;
  if (listen) {
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  }
  const url = listen ? `http://127.0.0.1:${port}` : '';

  const answer = (status: number, text: string, headers: Headers): Posted => {
    const cookies = parseSetCookies(headers['set-cookie'] as string | string[] | undefined);
    const own = cookies[cookieName];
    return { status, text, json: parseJson(text), headers, cookies, cookie: own === undefined ? '' : `${cookieName}=${own}` };
  };

  const post = async (path: string, body?: unknown, opts: PostOptions = {}): Promise<Posted> => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.cookie) headers.cookie = opts.cookie;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) headers['content-type'] ??= 'application/json';
    if (listen) {
      const res = await request(`${url}${path}`, { method: 'POST', headers, body: payload });
      return answer(res.statusCode, await res.body.text(), res.headers as Headers);
    }
    const res = await app.inject({ method: 'POST', url: path, headers, ...(payload === undefined ? {} : { payload }) });
    return answer(res.statusCode, res.body, res.headers as Headers);
  };

  const session = (): TestSession => {
    const jar: Record<string, string> = {};
    return {
      get cookies() {
        return { ...jar };
      },
      get cookieHeader() {
        return formatCookieHeader(jar);
      },
      async post(path, body) {
        const cookie = formatCookieHeader(jar);
        const res = await post(path, body, cookie ? { cookie } : {});
        Object.assign(jar, res.cookies);
        return res;
      },
    };
  };

  return {
    app,
    context: app.ngContext,
    cookieName,
    url,
    port,
    post: post as TestServer<C, S>['post'],
    session,
    close: () => app.close(),
  };
}

/**
 * The test file's server: built before its tests (vitest `beforeAll`) and closed after them.
 * Every member is usable inside tests and hooks that run after the build.
 */
export function useTestServer<C, S>(server: ServerDefinition<C, S>, options: TestServerOptions | (() => TestServerOptions | Promise<TestServerOptions>)): TestServer<C, S> {
  let started: TestServer<C, S> | undefined;
  beforeAll(async () => {
    started = await startTestServer(server, typeof options === 'function' ? await options() : options);
  });
  afterAll(async () => {
    await started?.close();
  });
  const live = (): TestServer<C, S> => {
    assert(started, `${server.className} is used before its beforeAll hook built it (use it inside tests or later hooks)`);
    return started;
  };
  return {
    get app() {
      return live().app;
    },
    get context() {
      return live().context;
    },
    get cookieName() {
      return live().cookieName;
    },
    get url() {
      return live().url;
    },
    get port() {
      return live().port;
    },
    post: ((path: string, body?: unknown, opts?: PostOptions) => live().post(path, body, opts)) as TestServer<C, S>['post'],
    session: () => live().session(),
    close: () => live().close(),
  };
}
