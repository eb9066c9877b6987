/**
 * A tiny MCP server as an npm package, for `npx -y <name>` against a test
 * registry: a `bin` with no dependencies that speaks MCP over stdio
 * (newline-delimited JSON-RPC: `initialize`, `ping`, `tools/list`,
 * `tools/call` of one `hello` tool), as a server published for Claude Desktop
 * configs is started.
 */
import { join } from 'node:path';
import { write } from './peer-folders.js';

const SERVER = `#!/usr/bin/env node
'use strict';
let buffer = '';
const send = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  for (let end = buffer.indexOf('\\n'); end !== -1; end = buffer.indexOf('\\n')) {
    const line = buffer.slice(0, end).trim();
    buffer = buffer.slice(end + 1);
    if (line === '') continue;
    const request = JSON.parse(line);
    if (request.id === undefined) continue; // a notification
    const reply = (result) => send({ jsonrpc: '2.0', id: request.id, result });
    if (request.method === 'initialize') reply({ protocolVersion: request.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'tiny-npx-server', version: '1.0.0' } });
    else if (request.method === 'ping') reply({});
    else if (request.method === 'tools/list') reply({ tools: [{ name: 'hello', description: 'says hello', inputSchema: { type: 'object', properties: {} } }] });
    else if (request.method === 'tools/call') reply({ content: [{ type: 'text', text: 'hello from a package npx fetched' }] });
    else send({ jsonrpc: '2.0', id: request.id, error: { code: -32601, message: 'Method not found' } });
  }
});
`;

/** Writes the package folder `dir` (name `name`, version 1.0.0), ready for `npm publish`. */
export async function tinyServerPackage(dir: string, name: string): Promise<void> {
  await write(join(dir, 'package.json'), { name, version: '1.0.0', description: 'a tiny MCP server for npx', bin: { [name]: 'server.js' }, files: ['server.js'], license: 'MIT' });
  await write(join(dir, 'server.js'), SERVER, 0o755);
}
