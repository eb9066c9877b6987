/**
 * The `transport:sse` service: a TransportFactory for servers that speak the
 * older HTTP+SSE transport (protocol 2024-11-05): an SSE stream from `url`
 * and POSTs to the endpoint it names. The SDK's SSEClientTransport, with a
 * fetch that gives each request its own abort signal (the SDK shares one per
 * connection: see ../mcp/request-signals.ts); it sends the headers on the
 * stream's GET and on every POST. The SDK is imported on the first `create()`.
 */
import type { McpServerDefinition, TransportContext, TransportFactory } from '../mcp/types.js';
import { requestInit, serverUrl } from '../mcp/remote-transport.js';
import { fetchWithOwnSignals } from '../mcp/request-signals.js';

/** Creates the factory that `transport:sse` provides. */
export function createSseTransportFactory(): TransportFactory {
  return {
    async create(server: McpServerDefinition, context: TransportContext) {
      const url = serverUrl(server, 'sse', context);
      const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
      const init = requestInit(server);
      const transport = new SSEClientTransport(url, {
        fetch: fetchWithOwnSignals(),
        ...(init && { requestInit: init }),
        ...(context.authProvider && { authProvider: context.authProvider }),
      });
      return { transport };
    },
  };
}
