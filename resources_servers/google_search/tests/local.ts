/** Small HTTP servers on 127.0.0.1 (free ports) for the search and browse tests. */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export interface LocalServer {
  port: number;
  /** http://127.0.0.1:<port> */
  origin: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

export async function serve(handler: (req: IncomingMessage, res: ServerResponse, url: URL) => void): Promise<LocalServer> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res, new URL(req.url ?? '/', 'http://127.0.0.1'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on (bound once, then released). */
export async function closedPort(): Promise<number> {
  const s = await serve(() => undefined);
  await s.close();
  return s.port;
}
