/**
 * The core's side of MCP serving: the `mcp` block is checked by the core, and the serving package
 * (@nemo-gym/mcp) is loaded only when the block enables it, with a clear error when it is absent.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/errors.js';
import { loadMcpPackage, mcpServeConfig, MCP_PACKAGE } from '../src/server/mcp.js';

describe('the mcp block of an instance config', () => {
  it('is off when absent, null or not enabled; on with its defaults when enabled', () => {
    expect(mcpServeConfig('S', { name: 'a' })).toBeNull();
    expect(mcpServeConfig('S', { name: 'a', mcp: null })).toBeNull();
    expect(mcpServeConfig('S', { name: 'a', mcp: { enabled: false, idle_ttl_s: 5 } })).toBeNull();
    expect(mcpServeConfig('S', { name: 'a', mcp: { enabled: true } })).toEqual({
      enabled: true,
      session_tools: false,
      idle_ttl_s: 3600,
      max_sessions: 10_000,
      allowed_hosts: null,
      max_body_bytes: 16 * 1024 * 1024,
    });
  });

  it('a bad block is a ConfigError naming the key, whether or not it enables MCP', () => {
    expect(() => mcpServeConfig('S', { name: 'a', mcp: { enabled: false, idle_tl_s: 5 } })).toThrow(ConfigError);
    expect(() => mcpServeConfig('S', { name: 'a', mcp: { enabled: true, max_sessions: 0 } })).toThrow(/mcp\.max_sessions/);
  });
});

describe('loading the MCP package', () => {
  it('loads @nemo-gym/mcp and its mountMcp', async () => {
    const pkg = await loadMcpPackage('S instance `a`');
    expect(typeof pkg.mountMcp).toBe('function');
    expect(MCP_PACKAGE).toBe('@nemo-gym/mcp');
  });

  it('a package that is not installed is a ConfigError naming it, the instance and how to install it', async () => {
    const err = await loadMcpPackage('S instance `a`', '@nemo-gym/not-installed-mcp').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('NG_ERR_CONFIG');
    expect((err as Error).message).toMatch(/S instance `a` has `mcp: \{enabled: true\}`, which needs the package @nemo-gym\/not-installed-mcp, and it is not installed/);
    expect((err as Error).message).toMatch(/"@nemo-gym\/not-installed-mcp": "workspace:\*".*pnpm install/);
  });
});
