#!/usr/bin/env node
/**
 * The plain SDK doing what `plinth mcp status` does with N stdio servers:
 * start every server at once (Client + StdioClientTransport), agree on the
 * protocol era, list its tools, print one line per server (name, state, era,
 * tools, pid), close every client, exit. The baseline of the `mcp status`
 * comparison in mcp.bench.mjs:
 *
 *   node test/bench/sdk-status.mjs [--era auto|legacy] <count> <program> [args…]
 *
 * starts `<count>` copies of `<program> [args…]`, named s1…s<count>.
 * `--era auto` (the default here) asks the SDK to negotiate as plinth does by
 * default (server/discover, then initialize), so that both sides speak the
 * same era to the same servers; `--era legacy` is the SDK's own default (the
 * 2025 initialize handshake).
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const argv = process.argv.slice(2);
let mode = 'auto';
if (argv[0] === '--era') {
  mode = argv[1];
  argv.splice(0, 2);
}
const [count, command, ...args] = argv;
const names = Array.from({ length: Number(count) }, (_, i) => `s${i + 1}`);

const rows = await Promise.all(
  names.map(async (name) => {
    const transport = new StdioClientTransport({ command, args, stderr: 'ignore' });
    const client = new Client({ name: 'sdk-status', version: '1.0.0' }, { versionNegotiation: { mode } });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      return { name, client, line: `${name}  connected  ${client.getNegotiatedProtocolVersion()}  stdio  ${tools.length}  ${transport.pid ?? '-'}` };
    } catch (error) {
      return { name, client, line: `${name}  failed  -  stdio  -  -  ${error instanceof Error ? error.message : String(error)}` };
    }
  }),
);
process.stdout.write(`SERVER  STATE  PROTOCOL  TRANSPORT  TOOLS  PID\n${rows.map((r) => r.line).join('\n')}\n`);
await Promise.all(rows.map((r) => r.client.close().catch(() => undefined)));
