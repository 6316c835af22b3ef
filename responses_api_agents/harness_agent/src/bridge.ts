// The one way out of a harness's network namespace: an HTTP proxy on a Unix socket in the work
// folder that forwards every request to the model server, and to nothing else. Inside the
// sandbox the runner listens on 127.0.0.1 and pipes each connection to this socket (bubblewrap
// keeps the file system shared, so the socket crosses the namespace boundary). Where the harness
// shares the host's network (local provider) the same proxy listens on 127.0.0.1 instead.
// Requests pass through unchanged except for a preset's request shim (fields a CLI adds for its
// own vendor that our model servers refuse); answers, streamed or not, pass back as they come.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';

type Json = Record<string, unknown>;

/** Rewrites a JSON request body for `path` (returns the body to send). */
export type RequestShim = (path: string, body: Json) => Json;

export interface ModelProxy {
  /** `http://127.0.0.1:<port>` when listening on TCP, else null. */
  readonly url: string | null;
  /** HTTP requests forwarded so far. */
  readonly calls: () => number;
  close(): Promise<void>;
}

export interface ProxyOptions {
  /** A Unix socket path, or null for 127.0.0.1 on a free port. */
  socketPath: string | null;
  /** The model server: `http://host:port` (or https: the harness still speaks plain HTTP to the proxy). */
  target: URL;
  shim?: RequestShim;
  /** Largest request body forwarded, bytes. */
  maxBodyBytes?: number;
}

const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'proxy-connection', 'upgrade']);

export async function startModelProxy(opts: ProxyOptions): Promise<ModelProxy> {
  const maxBody = opts.maxBodyBytes ?? 64 * 1024 * 1024;
  let calls = 0;
  const host = opts.target.hostname === '0.0.0.0' ? '127.0.0.1' : opts.target.hostname;
  const tls = opts.target.protocol === 'https:';
  const port = Number(opts.target.port || (tls ? 443 : 80));
  const request = tls ? httpsRequest : httpRequest;
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    calls += 1;
    const path = req.url ?? '/';
    let out = body;
    if (opts.shim && body.length > 0 && String(req.headers['content-type'] ?? '').includes('json')) {
      try {
        out = Buffer.from(JSON.stringify(opts.shim(path.split('?')[0]!, JSON.parse(body.toString('utf8')) as Json)));
      } catch {
        // not JSON: sent as it is, the model server answers it
      }
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_HEADERS.has(k)) headers[k] = v;
    headers['content-length'] = String(out.length);
    const up = request({ host, port, method: req.method, path, headers, ...(tls ? { servername: host } : {}) }, (answer) => {
      const back: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP_HEADERS.has(k)) back[k] = v;
      res.writeHead(answer.statusCode ?? 502, back);
      answer.pipe(res);
    });
    up.on('error', (err) => {
      if (res.headersSent) res.destroy();
      else {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `the model server at ${host}:${port} could not be reached: ${err.message}` } }));
      }
    });
    res.on('close', () => up.destroy());
    up.end(out);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBody) {
        res.writeHead(413, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `request body over ${maxBody} bytes` } }));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (size <= maxBody) forward(req, res, Buffer.concat(chunks));
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const done = () => {
      server.off('error', reject);
      resolve();
    };
    if (opts.socketPath) server.listen(opts.socketPath, done);
    else server.listen(0, '127.0.0.1', done);
  });
  return {
    url: opts.socketPath ? null : `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
