#!/usr/bin/env node
/**
 * The plain SDK v2 doing what `plinth call e__echo --args '{"message":"hi"}'`
 * does, in either era: connect (the 2025 `initialize`, or `server/discover`
 * pinned to 2026-07-28), list tools, call `echo`, close, exit. The baseline of
 * eras.bench.mjs's one-shot rows.
 *
 *   node test/bench/eras-sdk-call.mjs legacy|modern stdio
 *       starts test/bench/eras-server.mjs over stdio;
 *   node test/bench/eras-sdk-call.mjs legacy|modern <MCP URL>
 *       streamable HTTP to the server at that URL.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'eras-server.mjs');
const [era, where] = process.argv.slice(2);
const client = new Client({ name: 'eras-sdk-call', version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
await client.connect(where === 'stdio' ? new StdioClientTransport({ command: process.execPath, args: [SERVER, 'stdio'], stderr: 'ignore' }) : new StreamableHTTPClientTransport(new URL(where)));
await client.listTools();
const result = await client.callTool({ name: 'echo', arguments: { message: 'hi' } });
process.stdout.write(`${result.content?.[0]?.text ?? ''}\n`);
await client.close();
