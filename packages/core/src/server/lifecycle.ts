/**
 * Running a server as ng-run launches it: config from the head server or NEMO_GYM_CONFIG_DICT
 * (instance name in NEMO_GYM_CONFIG_PATH), listen, and close cleanly on SIGINT/SIGTERM or when
 * ng-run goes away.
 */
import type { FastifyInstance } from 'fastify';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { getFirstServerConfigDict } from '../config/instances.js';
import { resolveValue } from '../config/interpolate.js';
import type { ConfigDict } from '../config/merge.js';
import { getGlobalConfig } from '../config/parse.js';
import { ConfigError, NgError } from '../errors.js';
import type { Logger } from './logger.js';

/** What lifecycle needs of a built server. */
export type BuiltApp = FastifyInstance & { ngContext: { config: unknown; log: Logger } };

/** How long a server may take to close after a signal before the process exits anyway. */
const FORCED_EXIT_MS = 5000;

/** Loads this instance's config, builds the app, listens, and installs the stop handlers. */
export async function startServer<A extends BuiltApp>(
  className: string,
  build: (options: { config: Record<string, unknown>; globalConfig: ConfigDict }) => Promise<A>,
): Promise<A> {
  const name = process.env.NEMO_GYM_CONFIG_PATH;
  if (!name) {
    throw new ConfigError(
      `${className}: NEMO_GYM_CONFIG_PATH is not set. Servers are started by ng-run (\`pnpm ng-run "+config_paths=[...]"\`), which sets it to the instance name.`,
    );
  }
  const globalConfig = await getGlobalConfig();
  const inner = getFirstServerConfigDict(globalConfig, name);
  if (!inner) throw new ConfigError(`${className}: the config has no server instance named \`${name}\`.`);
  const own = resolveValue(globalConfig, inner, name) as Record<string, unknown>;
  const app = await build({ config: { ...own, name }, globalConfig });
  const cfg = app.ngContext.config as { host: string; port: number };
  // Thousands of rollouts may connect at once: a deep accept queue, and no header deadline
  // (a busy event loop can take longer than Node's default 60 s to read queued requests).
  app.server.headersTimeout = 0;
  await app.listen({ host: cfg.host, port: cfg.port, backlog: 65535 });
  app.ngContext.log.info(`${className} listening on http://${cfg.host}:${cfg.port}`);
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    app.ngContext.log.info(`received ${signal}, closing`);
    const force = setTimeout(() => process.exit(0), FORCED_EXIT_MS);
    force.unref();
    void app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
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
}

/** Starts `server` when the calling module is the process entry point (`node dist/app.js`). */
export function startIfMain(importMetaUrl: string, server: { className: string; start(): Promise<unknown> }): void {
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
