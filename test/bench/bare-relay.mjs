#!/usr/bin/env node
/**
 * The yardstick of gateway.bench.mjs: the least an extra process hop costs.
 * An SDK `Server` on stdio whose tools/list and tools/call are forwarded, as
 * they are, by an SDK `Client` to server-everything over stdio: no hooks, no
 * validation, no timeout of its own, no plinth.
 * `node test/bench/bare-relay.mjs <server-everything's index.js>`
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, CallToolResultSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const upstream = new Client({ name: 'bare-relay', version: '1.0.0' });
await upstream.connect(new StdioClientTransport({ command: process.execPath, args: [process.argv[2], 'stdio'], stderr: 'ignore' }));
const server = new Server({ name: 'bare-relay', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, (request) => upstream.listTools(request.params));
server.setRequestHandler(CallToolRequestSchema, (request, extra) => upstream.request({ method: 'tools/call', params: request.params }, CallToolResultSchema, { signal: extra.signal }));
const transport = new StdioServerTransport();
transport.onclose = () => void upstream.close();
await server.connect(transport);
process.stdin.on('end', () => void upstream.close().finally(() => process.exit(0)));
