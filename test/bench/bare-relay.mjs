#!/usr/bin/env node
/**
 * The yardstick of gateway.bench.mjs: the least an extra process hop costs.
 * An SDK `Server` whose tools/list and tools/call are forwarded, as they are,
 * by an SDK `Client` to server-everything: no hooks, no validation, no
 * timeout of its own, no authentication, no plinth.
 *
 *   node test/bench/bare-relay.mjs <server-everything's index.js>
 *       stdio in, stdio to a server-everything it spawns;
 *   node test/bench/bare-relay.mjs --http <upstream MCP URL>
 *       streamable HTTP on 127.0.0.1 (a port of its own, printed as
 *       `{"url": …}` on stdout; one transport per session, as the SDK's
 *       examples keep them) to the streamable HTTP server at that URL.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { Server, isInitializeRequest } from '@modelcontextprotocol/server';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const http = process.argv[2] === '--http';
const upstream = new Client({ name: 'bare-relay', version: '1.0.0' });
await upstream.connect(http ? new StreamableHTTPClientTransport(new URL(process.argv[3])) : new StdioClientTransport({ command: process.execPath, args: [process.argv[2], 'stdio'], stderr: 'ignore' }));

function relayServer() {
  const server = new Server({ name: 'bare-relay', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', (request) => upstream.listTools(request.params));
  server.setRequestHandler('tools/call', (request, ctx) => upstream.request({ method: 'tools/call', params: request.params }, { signal: ctx.mcpReq.signal }));
  return server;
}

if (!http) {
  const transport = new StdioServerTransport();
  transport.onclose = () => void upstream.close();
  await relayServer().connect(transport);
  process.stdin.on('end', () => void upstream.close().finally(() => process.exit(0)));
} else {
  const sessions = new Map();
  const listener = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    let transport = sessions.get(req.headers['mcp-session-id']);
    if (!transport && req.method === 'POST' && isInitializeRequest(body)) {
      transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (id) => sessions.set(id, transport) });
      transport.onclose = () => sessions.delete(transport.sessionId);
      await relayServer().connect(transport);
    }
    if (!transport) return void res.writeHead(404).end();
    await transport.handleRequest(req, res, body);
  });
  listener.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${listener.address().port}/mcp` })}\n`));
  const stop = () => void upstream.close().finally(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
