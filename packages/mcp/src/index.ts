/**
 * @nemo-gym/mcp: a resources server's tools over MCP. The core loads this package when an
 * instance config has `mcp: {enabled: true}` (see `@nemo-gym/core`'s server/mcp.ts); a server
 * that does not serve MCP never loads it, and need not install it or the MCP SDK.
 */
export { mountMcp } from './serve.js';
