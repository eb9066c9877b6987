#!/usr/bin/env node
/**
 * The yardstick of eras.bench.mjs for the modern era: the least an extra
 * process hop costs at 2026-07-28. A v2 `Server` whose tools/list and
 * tools/call are forwarded, as they are, by a v2 `Client` pinned to
 * 2026-07-28: no hooks, no validation, no timeout of its own, no
 * authentication, no plinth. (The legacy era's yardstick is bare-relay.mjs.)
 *
 *   node test/bench/eras-relay.mjs <server.mjs>
 *       serveStdio in (its era chosen by the client's opening), a v2 Client
 *       over stdio to `node <server.mjs> stdio`, which it spawns;
 *   node test/bench/eras-relay.mjs --http <upstream MCP URL>
 *       createMcpHandler on 127.0.0.1 (a port of its own, printed as
 *       `{"url": …}` on stdout), a v2 Client over streamable HTTP to the URL.
 */
import { createServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { Server, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const http = process.argv[2] === '--http';
const upstream = new Client({ name: 'eras-relay', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
await upstream.connect(http ? new StreamableHTTPClientTransport(new URL(process.argv[3])) : new StdioClientTransport({ command: process.execPath, args: [process.argv[2], 'stdio'], stderr: 'ignore' }));

function relayServer() {
  const server = new Server({ name: 'eras-relay', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', (request) => upstream.listTools(request.params));
  server.setRequestHandler('tools/call', (request, ctx) => upstream.request({ method: 'tools/call', params: request.params }, { signal: ctx.mcpReq.signal }));
  return server;
}

const stop = () => void upstream.close().finally(() => process.exit(0));
if (!http) {
  serveStdio(relayServer);
  process.stdin.on('end', stop);
} else {
  const handler = createMcpHandler(relayServer);
  const node = toNodeHandler(handler);
  const listener = createServer((req, res) => void node(req, res));
  listener.keepAliveTimeout = 60_000;
  listener.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${listener.address().port}/mcp` })}\n`));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
