/**
 * The `transport:sse` service: a TransportFactory for servers that speak the
 * older HTTP+SSE transport (protocol 2024-11-05): an SSE stream from `url`
 * and POSTs to the endpoint it names. The SDK's SSEClientTransport, with a
 * fetch that gives each request its own abort signal (the SDK shares one per
 * connection: see ../mcp/request-signals.ts); it sends the headers on the
 * stream's GET and on every POST. The SDK is imported on the first `create()`.
 */
import type { McpServerDefinition, TransportContext, TransportFactory } from 'plinth/sdk';
import { remoteRequestInit, remoteServerUrl } from 'plinth/sdk';
import { fetchWithOwnSignals } from 'plinth/sdk';

/** Creates the factory that `transport:sse` provides. */
export function createSseTransportFactory(): TransportFactory {
  return {
    async create(server: McpServerDefinition, context: TransportContext) {
      const url = remoteServerUrl(server, 'sse', context);
      const { SSEClientTransport } = await import('@modelcontextprotocol/client');
      const init = remoteRequestInit(server);
      const transport = new SSEClientTransport(url, {
        fetch: fetchWithOwnSignals(),
        ...(init && { requestInit: init }),
        ...(context.authProvider && { authProvider: context.authProvider }),
      });
      return { transport };
    },
  };
}
