// The one way out of a harness's network namespace: a Unix socket in the work folder whose
// every connection the agent joins to the model server's TCP address, and to nothing else.
// Inside the sandbox the runner listens on 127.0.0.1 and forwards to this socket (bubblewrap
// keeps the file system shared, so the socket crosses the namespace boundary).
import { connect, createServer, type Socket } from 'node:net';

export interface ModelBridge {
  /** Connections joined so far. */
  readonly connections: () => number;
  close(): Promise<void>;
}

export async function startModelBridge(socketPath: string, target: { host: string; port: number }): Promise<ModelBridge> {
  const open = new Set<Socket>();
  let count = 0;
  const server = createServer((inner) => {
    count += 1;
    const outer = connect(target.port, target.host);
    open.add(inner);
    open.add(outer);
    const end = () => {
      inner.destroy();
      outer.destroy();
      open.delete(inner);
      open.delete(outer);
    };
    inner.on('error', end).on('close', end);
    outer.on('error', end).on('close', end);
    inner.pipe(outer);
    outer.pipe(inner);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    connections: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
