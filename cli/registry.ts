/**
 * `plinth registry pack|publish|serve|keygen|index|revoke|rotate-key`: publisher tools, not plugins, so they
 * are the CLI's own commands like `up`. Only their names live here; the code
 * (and `registry/`, with tar and the server) is imported when one runs, so
 * other commands do not pay for it.
 */
import type { CommandSpec } from '../sdk/commands.js';

export interface HostCommandSummary {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
}

export const REGISTRY_COMMANDS: readonly HostCommandSummary[] = [
  { name: 'registry pack', summary: 'Pack a plugin folder into a tarball (the same folder gives the same bytes) and print its integrity', usage: 'registry pack <dir> [--out <file>]' },
  { name: 'registry publish', summary: 'Add a plugin folder or tarball to a static registry folder (packument, tarball, search index; signed, with --sign)', usage: 'registry publish <dir|file.tgz> --to <folder> [--tag <tag>] [--sign <key>] [--index-ttl <days>] [--base-url <url>]' },
  { name: 'registry publish-server', summary: 'Add an MCP server\'s server.json to a registry folder (served at /v0.1/servers by registry serve)', usage: 'registry publish-server <server.json> --to <folder> [--status active|deprecated|deleted]' },
  { name: 'registry keygen', summary: 'Make an ed25519 signing key pair (private key 0600) and print its keyid', usage: 'registry keygen <file>' },
  { name: 'registry index', summary: 'Sign the registry folder\'s index again over every packument, one version up, with a new expiry', usage: 'registry index --to <folder> --sign <key> [--ttl <days>]' },
  { name: 'registry revoke', summary: 'Revoke a published version (signed list): installed copies are disabled, with the reason', usage: 'registry revoke <name@version> --to <folder> --sign <key> --reason <text> [--use <version>]' },
  { name: 'registry rotate-key', summary: 'Hand the registry over to a new key: a rotation signed by the current key, everything signed again', usage: 'registry rotate-key --to <folder> --from <current key> --sign <new key>' },
  { name: 'registry serve', summary: 'Serve a registry folder on 127.0.0.1 (npm registry protocol and the MCP Registry API v0.1) until Ctrl-C', usage: 'registry serve <folder> [--port <n>] [--token <token>]' },
];

/** The command named `name`, loaded on demand; undefined for a name that is not a registry command. */
export async function registryCommand(name: string): Promise<CommandSpec | undefined> {
  if (!REGISTRY_COMMANDS.some((c) => c.name === name)) return undefined;
  const { registryCommands } = await import('./registry-commands.js');
  return registryCommands().find((c) => c.name === name);
}
