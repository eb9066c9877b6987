/**
 * The `transport:http` service: a TransportFactory for servers that speak
 * streamable HTTP. The SDK is imported on the first `create()`.
 */
import type { McpServerDefinition, TransportContext, TransportFactory } from 'plinth/sdk';
import { remoteRequestInit, remoteServerUrl } from 'plinth/sdk';
import { HTTP_DEFAULTS, type HttpSettings } from './settings.js';

/** Creates the factory that `transport:http` provides. */
export function createHttpTransportFactory(settings: HttpSettings = HTTP_DEFAULTS): TransportFactory {
  return {
    async create(server: McpServerDefinition, context: TransportContext) {
      const url = remoteServerUrl(server, 'http', context);
      const { SessionHttpTransport } = await import('./session-transport.js');
      const init = remoteRequestInit(server);
      const transport = new SessionHttpTransport(
        url,
        {
          ...(init && { requestInit: init }),
          ...(context.authProvider && { authProvider: context.authProvider }),
          // A broken SSE stream is reopened with Last-Event-ID, so the server replays what was missed.
          reconnectionOptions: {
            initialReconnectionDelay: settings.reconnectDelayMs,
            maxReconnectionDelay: settings.reconnectMaxDelayMs,
            reconnectionDelayGrowFactor: settings.reconnectGrowFactor,
            maxRetries: settings.reconnectRetries,
          },
        },
        { terminateTimeoutMs: settings.terminateTimeoutMs, renewTimeoutMs: server.connectTimeoutMs, log: context.log, redact: context.redact, server: server.name },
      );
      // A server that cannot be reached once connected is down: the health plugin reacts at once.
      return { transport, onDown: (listener) => transport.onDown(listener) };
    },
  };
}
