/**
 * Real HTTP stubs on 127.0.0.1 for what cannot run in a test (a remote model): scripted JSON
 * answers per route, every request recorded.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StubRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The body parsed as JSON (undefined when empty or not JSON). */
  body: any;
  text: string;
}

export interface StubAnswer {
  status?: number;
  /** Serialized as the JSON body. */
  json?: unknown;
  /** A body sent as is (takes precedence over `json`). */
  text?: string;
  headers?: Record<string, string | string[]>;
}

export type StubHandler = (req: StubRequest, index: number) => StubAnswer | Promise<StubAnswer>;

export interface StubServer {
  url: string;
  port: number;
  /** Every request, in arrival order. */
  requests: StubRequest[];
  /** Requests to one path. */
  requestsTo(path: string): StubRequest[];
  close(): Promise<void>;
}

/**
 * Serves `routes` (path -> handler, called with the request and its index among that path's
 * requests); other paths answer 404.
 */
export async function startStubServer(routes: Record<string, StubHandler>): Promise<StubServer> {
  const requests: StubRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      const path = req.url ?? '';
      const entry: StubRequest = { method: req.method ?? '', path, headers: req.headers, body, text };
      const index = requests.filter((r) => r.path === path).length;
      requests.push(entry);
      const handler = routes[path];
      const reply = (a: StubAnswer) => {
        const out = a.text ?? JSON.stringify(a.json ?? null);
        res.writeHead(a.status ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out), ...(a.headers ?? {}) });
        res.end(out);
      };
      if (!handler) return reply({ status: 404, json: { detail: 'Not Found', path } });
      Promise.resolve()
        .then(() => handler(entry, index))
        .then(reply, (err: unknown) => reply({ status: 500, json: { detail: `stub handler failed: ${String(err)}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    requestsTo: (path) => requests.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A global config naming running servers, as ng-run writes it: `name -> kind -> impl -> {host, port}`. */
export function globalConfigFor(instances: Record<string, { kind: string; impl: string; port: number; host?: string } & Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, { kind, impl, host, ...rest }] of Object.entries(instances)) {
    out[name] = { [kind]: { [impl]: { host: host ?? '127.0.0.1', ...rest } } };
  }
  return out;
}
