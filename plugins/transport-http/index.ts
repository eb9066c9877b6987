/**
 * The transport-http plugin: provides `transport:http`, the MCP streamable
 * HTTP transport (the SDK's StreamableHTTPClientTransport): one session per
 * connection, kept while connected and terminated on close; broken streams
 * resumed with Last-Event-ID. Lazy: imported when the mcp plugin first asks
 * for this transport.
 */
import { definePlugin } from 'plinth/sdk';
import { createHttpTransportFactory } from './factory.js';
import { httpSettings } from './settings.js';

export { createHttpTransportFactory } from './factory.js';
export { HTTP_DEFAULTS, type HttpSettings } from './settings.js';

export default definePlugin({
  setup(kernel, ctx) {
    kernel.provide('transport:http', createHttpTransportFactory(httpSettings(ctx.settings)));
  },
});
