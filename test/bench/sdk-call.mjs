#!/usr/bin/env node
/**
 * The plain SDK doing what `plinth call everything__echo --args '{"message":"hi"}'`
 * does: start server-everything over stdio, initialize, list tools, call
 * `echo`, close, exit. The baseline of one-shot.bench.mjs (and of any
 * whole-process timer): `node test/bench/sdk-call.mjs`.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/client';

const require = createRequire(import.meta.url);
const EVERYTHING = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

const client = new Client({ name: 'sdk-call', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }));
await client.listTools();
const result = await client.callTool({ name: 'echo', arguments: { message: 'hi' } });
process.stdout.write(`${result.content?.[0]?.text ?? ''}\n`);
await client.close();
