/**
 * The `mcp` block of a resources server's instance config, and the hook that serves `/mcp` when it
 * says `enabled: true`. Serving itself lives in the package `@nemo-gym/mcp` (with the MCP SDK): it
 * is loaded only then, so a server that does not serve MCP installs neither. See docs/mcp.md.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { RawJson } from '../http/raw-json.js';
import type { Logger } from './logger.js';
import type { Session, SessionCookies } from './session.js';

/** The package that serves MCP, loaded by name when an instance config enables it. */
export const MCP_PACKAGE = '@nemo-gym/mcp';

export const McpServeConfigSchema = z
  .object({
    enabled: z.boolean().default(false),
    /** Also list `seed_session` and `verify` as MCP tools (for clients that speak only MCP). */
    session_tools: z.boolean().default(false),
    /** An MCP session unused this long is closed (its client must initialize again). */
    idle_ttl_s: z.number().positive().default(3600),
    /** Most MCP sessions open at once; beyond it the least recently used one is closed. */
    max_sessions: z.number().int().positive().default(10_000),
    /**
     * Host header names accepted on /mcp (protection against DNS rebinding from a browser).
     * Default: when the server binds a loopback address, only loopback names.
     */
    allowed_hosts: z.array(z.string()).nullable().default(null),
    /** Largest request body on /mcp, in bytes (a larger one is refused before it is read in full). */
    max_body_bytes: z.number().int().positive().default(16 * 1024 * 1024),
  })
  .strict();
export type McpServeConfig = z.output<typeof McpServeConfigSchema>;

/** What the MCP package needs of a built server: its routes and the one function that runs them. */
export interface McpMountOptions<R> {
  className: string;
  config: { name: string; host?: unknown; mcp?: unknown };
  /** POST routes by path (`/seed_session`, `/verify`, `/<tool>`). */
  routes: ReadonlyMap<string, R>;
  /** The zod body schema of a route. */
  bodyOf: (route: R) => z.ZodType;
  sessions: SessionCookies;
  execute: (route: R, body: unknown, session: Session) => Promise<RawJson>;
  failure: (err: unknown, method: string, url: string) => RawJson;
  log: Logger;
}

/** The one entry point of the MCP package. */
interface McpPackage {
  mountMcp<R>(app: FastifyInstance, options: McpMountOptions<R>, mcp: McpServeConfig): Promise<void>;
}

/** The validated `mcp` block of an instance config, or null when MCP is off. */
export function mcpServeConfig(className: string, config: { name: string; mcp?: unknown }): McpServeConfig | null {
  if (config.mcp === undefined || config.mcp === null) return null;
  const parsed = McpServeConfigSchema.safeParse(config.mcp);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  - mcp.${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(`Invalid config for ${className} instance \`${config.name}\`:\n${lines.join('\n')}\nExpected e.g. \`mcp: {enabled: true}\`.`);
  }
  return parsed.data.enabled ? parsed.data : null;
}

/**
 * Imports the MCP package (`specifier`, the real one unless a test names another); when it is not
 * installed, a ConfigError that says which instance asked for it and how to install it.
 */
export async function loadMcpPackage(who: string, specifier: string = MCP_PACKAGE): Promise<McpPackage> {
  let loaded: Partial<McpPackage>;
  try {
    loaded = (await import(specifier)) as Partial<McpPackage>;
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    const missing = (e?.code === 'ERR_MODULE_NOT_FOUND' || /cannot find (package|module)|failed to (load|resolve)/i.test(String(e?.message))) && String(e?.message).includes(specifier);
    if (!missing) throw err;
    throw new ConfigError(
      `${who} has \`mcp: {enabled: true}\`, which needs the package ${specifier}, and it is not installed. ` +
        `Add "${specifier}": "workspace:*" to the devDependencies of the workspace's root package.json and run \`pnpm install\`, or remove the \`mcp\` block.`,
    );
  }
  if (typeof loaded.mountMcp !== 'function') throw new ConfigError(`${specifier} was loaded for ${who}, but it exports no mountMcp function; reinstall it.`);
  return loaded as McpPackage;
}

/**
 * Adds `/mcp` to `app` when the instance config switches MCP on (the one hook defineServer
 * calls, after the server's own routes are known). Only resources servers serve MCP.
 */
export async function mountMcpIfEnabled<R>(kind: string, app: FastifyInstance, options: McpMountOptions<R>): Promise<void> {
  const mcp = mcpServeConfig(options.className, options.config);
  if (mcp === null) return;
  if (kind !== 'resources_servers') {
    throw new ConfigError(`${options.className} instance \`${options.config.name}\`: \`mcp\` serves a resources server's tools; remove it from this ${kind} config.`);
  }
  const { mountMcp } = await loadMcpPackage(`${options.className} instance \`${options.config.name}\``);
  await mountMcp(app, options, mcp);
}
