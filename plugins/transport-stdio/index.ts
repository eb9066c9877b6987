/**
 * The transport-stdio plugin: provides `transport:stdio`, which runs a local
 * MCP server as a child process and speaks to it over stdin/stdout through the
 * SDK's StdioClientTransport. Lazy: imported when the mcp plugin first asks
 * for this transport.
 */
import { definePlugin } from 'plinth/sdk';
import { createStdioTransportFactory } from './factory.js';
import { stdioSettings } from './settings.js';

export { createStdioTransportFactory } from './factory.js';
export { STDIO_DEFAULTS, type StdioSettings } from './settings.js';

export default definePlugin({
  setup(kernel, ctx) {
    kernel.provide('transport:stdio', createStdioTransportFactory(stdioSettings(ctx.settings)));
  },
});
