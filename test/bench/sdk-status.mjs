#!/usr/bin/env node
/**
 * The plain SDK doing what `plinth mcp status` does with N stdio servers:
 * start every server at once (Client + StdioClientTransport), agree on the
 * protocol era, list its tools, print one line per server (name, state, era,
 * tools, pid), close every client, exit. The baseline of the `mcp status`
 * comparison in mcp.bench.mjs:
 *
 *   node test/bench/sdk-status.mjs [--era legacy|auto|<revision>] <count> <program> [args…]
 *
 * starts `<count>` copies of `<program> [args…]`, named s1…s<count>.
 * `--era legacy` (the default) is the SDK's own default, the 2025 initialize
 * handshake; `--era auto` probes with server/discover first, then falls back;
 * `--era 2026-07-28` pins that revision (no probe). plinth's default is `auto`,
 * but it remembers each server's era (mcp-eras.json) and does not probe a
 * server it knows: against a modern server, pinning is what it does from the
 * second run on.
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const argv = process.argv.slice(2);
let mode = 'legacy';
if (argv[0] === '--era') {
  mode = argv[1] === 'auto' || argv[1] === 'legacy' ? argv[1] : { pin: argv[1] };
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
