#!/usr/bin/env node
/**
 * The upstream of eras.bench.mjs and gateway-scale.bench.mjs: a dual-era MCP
 * server on the SDK v2 (it answers 2026-07-28 and, for a legacy client, the
 * 2025 protocol) with one tool, `echo` ({ message } → "Echo: <message>"),
 * the same one server-everything has, so that every side of a comparison
 * makes the same call.
 *
 *   node test/bench/eras-server.mjs stdio    serveStdio: the era is chosen by
 *                                            the connection's opening exchange
 *   node test/bench/eras-server.mjs http     createMcpHandler (per request,
 *                                            stateless in both eras) on
 *                                            127.0.0.1, a port of its own,
 *                                            printed as {"url","port"} on stdout
 */
import { createServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

function build() {
  const server = new McpServer({ name: 'eras-bench', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('echo', { description: 'Echoes the message back', inputSchema: z.object({ message: z.string() }) }, ({ message }) => ({
    content: [{ type: 'text', text: `Echo: ${message}` }],
  }));
  return server;
}

if (process.argv[2] === 'http') {
  const handler = createMcpHandler(build);
  const node = toNodeHandler(handler);
  const listener = createServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== '/mcp') return void res.writeHead(404).end();
    void node(req, res);
  });
  listener.keepAliveTimeout = 60_000;
  listener.listen(0, '127.0.0.1', () => {
    const { port } = listener.address();
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp`, port })}\n`);
  });
  const stop = () => void handler.close().finally(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  serveStdio(build);
}
