/** The error codes resources_servers/mcp_tools owns, registered into the one table (docs/errors.md is generated from it). */
import { createError, registerErrorCodes } from '@nemo-gym/core/errors';

export const MCP_TOOLS_ERRORS = registerErrorCodes('resources_servers/mcp_tools', {
  NG_ERR_MCP_SERVER: {
    message: '%s',
    meaning:
      'mcp_tools: an MCP server of `mcp_servers` could not be started (stdio) or reached (HTTP), or it did not answer the MCP handshake within `connect_timeout_s`. The message names the server, its command or URL, and the end of its stderr (secrets masked).',
    fix: 'Run the command by hand to see it start, check `args`, `cwd` and `env` (or the URL and `headers`), or raise `connect_timeout_s` for a slow server.',
  },
});

/** An MCP server that could not be started, or that did not complete the handshake. */
export const McpServerError = createError(MCP_TOOLS_ERRORS.NG_ERR_MCP_SERVER, 'McpServerError');
