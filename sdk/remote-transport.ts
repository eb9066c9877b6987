/**
 * What a remote transport (http, sse, or a third party's) needs from a server
 * definition: an http(s) URL and the request options that carry its headers.
 * In the sdk so that every transport plugin shares it.
 * Header values are secrets: they go into requests only, never into a message.
 */
import { PlinthError } from './errors.js';
import type { McpServerDefinition } from './contracts/mcp-server.js';
import type { TransportContext } from './contracts/transport.js';

/** The server's URL, or `PLN_E_MCP_TRANSPORT_CONFIG` naming what is wrong (the URL itself redacted). */
export function remoteServerUrl(server: McpServerDefinition, transport: string, context: TransportContext): URL {
  const fail = (problem: string): never => {
    throw new PlinthError('PLN_E_MCP_TRANSPORT_CONFIG', context.redact(`MCP server "${server.name}" ${problem}: the ${transport} transport connects to a remote server`), {
      plugin: `transport-${transport}`,
      hint: 'Set "url" to the server\'s http:// or https:// endpoint in its mcpServers entry, or "command" for a local server',
      details: { server: server.name, transport },
    });
  };
  if (server.url === undefined || server.url.trim() === '') return fail('has no "url"');
  let url: URL;
  try {
    url = new URL(server.url);
  } catch {
    return fail(`has a "url" that is not a URL (${server.url})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(`has a "url" whose scheme is ${url.protocol} rather than http: or https:`);
  return url;
}

/** `requestInit` with the server's headers, or undefined when it has none. */
export function remoteRequestInit(server: McpServerDefinition): RequestInit | undefined {
  return Object.keys(server.headers).length === 0 ? undefined : { headers: { ...server.headers } };
}
