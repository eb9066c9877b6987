/**
 * The `transport:stdio` service: a TransportFactory that starts a local MCP
 * server as a child process, through the `launcher` service. The SDK (and the module that uses it) is
 * imported on the first `create()`, not when the plugin loads.
 */
import { PlinthError } from 'plinth/sdk';
import type { McpServerDefinition, TransportContext, TransportFactory } from 'plinth/sdk';
import type { StdioLaunch } from './connection.js';
import { STDIO_DEFAULTS, type StdioSettings } from './settings.js';

/** Creates the factory that `transport:stdio` provides; servers start through `launch.launcher`. */
export function createStdioTransportFactory(settings: StdioSettings = STDIO_DEFAULTS, launch: StdioLaunch): TransportFactory {
  return {
    async create(server: McpServerDefinition, context: TransportContext) {
      if (server.command === undefined || server.command.trim() === '') {
        throw new PlinthError('PLN_E_MCP_TRANSPORT_CONFIG', `MCP server "${server.name}" has no "command": the stdio transport starts a local program`, {
          plugin: 'transport-stdio',
          hint: 'Set "command" (and "args") in its mcpServers entry, or "url" and a remote transport',
          details: { server: server.name, transport: 'stdio' },
        });
      }
      const { openStdioConnection } = await import('./connection.js');
      return openStdioConnection(server, context, settings, launch);
    },
  };
}
