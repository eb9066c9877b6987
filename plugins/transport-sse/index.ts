/**
 * The transport-sse plugin: provides `transport:sse`, the legacy MCP
 * HTTP+SSE transport (the SDK's SSEClientTransport), for servers that do not
 * speak streamable HTTP yet. Lazy: imported when the mcp plugin first asks for
 * this transport (with `transport: "sse"`, or falling back from `http`).
 */
import { definePlugin } from 'plinth/sdk';
import { createSseTransportFactory } from './factory.js';

export { createSseTransportFactory } from './factory.js';

export default definePlugin({
  setup(kernel) {
    kernel.provide('transport:sse', createSseTransportFactory());
  },
});
