/**
 * Connects plinth's client features to test/fixtures/mcp/servers/feat-modern.mjs
 * as the mcp core does (prepareClient, connect, attachFeatures), over stdio or
 * streamable HTTP, pinned to 2026-07-28 or at the 2025 default.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { McpServerDefinition } from '../../sdk/index.js';
import { attachFeatures, createToolRegistry, prepareClient, type FeatureDeps, type ToolRegistry } from '../../plugins/mcp/features/index.js';

export const FEAT_FIXTURE = fileURLToPath(new URL('../fixtures/mcp/servers/feat-modern.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export type Wire = 'stdio' | 'http';
export type Era = 'modern' | 'legacy';

export interface FeatConnection {
  readonly client: Client;
  readonly registry: ToolRegistry;
  readonly port?: number;
  close(): Promise<void>;
}

export function featDefinition(name: string): McpServerDefinition {
  return { name, transport: 'stdio', command: process.execPath, args: [FEAT_FIXTURE], env: {}, cwd: ROOT, headers: {}, connectTimeoutMs: 10_000, enabled: true, source: 'builtin', origin: 'test', secrets: [] };
}

/** `deps` needs at least emit, getService and log; the rest has test defaults. */
export async function connectFeat(name: string, wire: Wire, era: Era, deps: Omit<FeatureDeps, 'registry' | 'workspace'> & Partial<FeatureDeps>): Promise<FeatConnection> {
  const registry = deps.registry ?? createToolRegistry({ log: deps.log });
  const full: FeatureDeps = { workspace: ROOT, callTimeoutMs: 15_000, terminal: null, redact: (t) => t, ...deps, registry };
  const client = new Client({ name: 'plinth-test', version: '0.0.0' }, era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  const def = featDefinition(name);
  prepareClient(client, def, full);
  let child: ChildProcess | undefined;
  let port: number | undefined;
  if (wire === 'http') {
    child = spawn(process.execPath, [FEAT_FIXTURE, 'http'], { stdio: ['pipe', 'pipe', 'ignore'] });
    port = await new Promise<number>((resolve, reject) => {
      child!.once('exit', (code) => reject(new Error(`the fixture exited (${code})`)));
      child!.stdout!.once('data', (d) => resolve(JSON.parse(String(d)).port));
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  } else {
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [FEAT_FIXTURE, 'stdio'], stderr: 'ignore' }));
  }
  if (client.getProtocolEra() !== era) throw new Error(`connected at ${client.getProtocolEra()}, not ${era}`);
  await attachFeatures(client, { ...def, ...(wire === 'http' && { transport: 'http', url: `http://127.0.0.1:${port}/mcp` }) }, full);
  return {
    client,
    registry,
    ...(port !== undefined && { port }),
    async close() {
      await client.close().catch(() => undefined);
      child?.kill();
    },
  };
}
