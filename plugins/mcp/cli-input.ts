/**
 * What the `mcp` commands read from the command line: a server's entry for
 * `mcp add`, the `--args` of `plinth call`, `K=V` pairs. Every mistake here is
 * a usage error (`PLN_E_CLI_USAGE`, exit 2), raised before anything starts.
 */
import { readFile } from 'node:fs/promises';
import { PlinthError } from 'plinth/sdk';
import { describeFileError } from 'plinth/internal';
import { mcpServerEntrySchema } from 'plinth/sdk';
import { MCP_SERVER_NAME, MCP_TRANSPORT_NAME } from 'plinth/internal';
import type { McpServerConfig } from 'plinth/sdk';

/** Throws a usage error unless `name` can name a server: the settings' own rule, and no `__` (it separates server and tool). */
export function checkServerName(name: string): void {
  if (!MCP_SERVER_NAME.test(name) || name.includes('__')) {
    throw usage(`"${name}" cannot name an MCP server`, 'use up to 64 letters, digits, "-" and single "_", starting with a letter or digit, e.g. "github" or "my_db"');
  }
}

/**
 * Splits `<server>__<tool>` at the first `__`: server names never contain it, tool names may. The
 * hint of a bad name names the servers configured (`servers`), never one that is not.
 */
export function splitToolName(name: string, servers: readonly string[]): { server: string; tool: string } {
  const at = name.indexOf('__');
  if (at <= 0 || at + 2 >= name.length) {
    const bare = at === -1 && name !== '' ? name : undefined;
    const hint =
      servers.length === 0
        ? 'no MCP server is configured: add one with `plinth mcp add <name> -- <program> [args…]`, then `plinth mcp tools` lists its tools'
        : `\`plinth mcp tools\` lists the tools under the names \`plinth call\` takes; configured servers: ${servers.join(', ')}${bare === undefined ? '' : ` (a tool "${bare}" of ${servers[0]} is ${servers[0]}__${bare})`}`;
    throw usage(`"${name}" is not a tool name of the form <server>__<tool>`, hint);
  }
  return { server: name.slice(0, at), tool: name.slice(at + 2) };
}

/** The options of `plinth mcp add`, as parsed by the CLI. */
export interface AddOptions {
  /**
   * The word after the name, as Claude Code's and Gemini CLI's `mcp add` take
   * it: a URL, or the program (its arguments in `rest`), usually after `--`.
   */
  readonly target?: string;
  readonly rest?: readonly string[];
  readonly command?: string;
  readonly arg?: readonly string[];
  readonly url?: string;
  readonly transport?: string;
  readonly env?: readonly string[];
  readonly header?: readonly string[];
  readonly cwd?: string;
  readonly timeout?: string;
}

/**
 * The settings entry `mcp add` writes: the shape people paste between MCP hosts,
 * with only the fields given (a default stays a default when plinth's changes).
 */
export function serverEntry(given: AddOptions): McpServerConfig {
  const options = positionalTarget(given);
  const local = options.command !== undefined;
  const remote = options.url !== undefined;
  if (local === remote) {
    throw usage(
      local ? 'give either --command or --url, not both' : 'give the server after its name: a program (a local server) or a URL (a remote one)',
      'e.g. `plinth mcp add files -- npx -y @modelcontextprotocol/server-filesystem \'${workspace}\'`, `plinth mcp add -t http docs http://127.0.0.1:3000/mcp`, or `--command <program>` / `--url <url>`',
    );
  }
  if (local && options.command!.trim() === '') throw usage('--command is empty');
  const misplaced = local
    ? [options.header?.length ? '--header' : undefined].filter(Boolean)
    : [options.arg?.length ? '--arg' : undefined, options.env?.length ? '--env' : undefined, options.cwd !== undefined ? '--cwd' : undefined].filter(Boolean);
  if (misplaced.length > 0) {
    throw usage(`${misplaced.join(' and ')} ${misplaced.length > 1 ? 'apply' : 'applies'} only to ${local ? 'remote servers (--url)' : 'local servers (--command)'}`);
  }
  if (options.transport !== undefined && !MCP_TRANSPORT_NAME.test(options.transport)) {
    throw usage(`"${options.transport}" is not a transport name`, 'use stdio, http, sse, or the name a transport plugin provides (lowercase letters, digits, "-")');
  }

  const entry: McpServerConfig = {};
  if (local) {
    entry.command = options.command!;
    if (options.arg?.length) entry.args = [...options.arg];
    if (options.env?.length) entry.env = pairs(options.env, '--env');
    if (options.cwd !== undefined) entry.cwd = options.cwd;
  } else {
    entry.url = checkUrl(options.url!);
    if (options.header?.length) entry.headers = headerPairs(options.header);
  }
  if (options.transport !== undefined) entry.transport = options.transport;
  if (options.timeout !== undefined) entry.timeout = milliseconds(options.timeout, '--timeout');
  // The same check the mcp plugin makes when it reads settings: add never writes an entry that would be refused.
  const checked = mcpServerEntrySchema.safeParse(entry);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    throw usage(`the server entry would be invalid: ${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}`);
  }
  return entry;
}

/**
 * The positional shapes as `--command`/`--arg` or `--url`: `<name> -- <program> [args…]`,
 * `<name> <program> [args…]`, `<name> <url>`. The word is a URL with `-t http` or `-t sse`,
 * or when it starts with `http://` or `https://` and no `-t` says otherwise; else a program.
 */
function positionalTarget(options: AddOptions): AddOptions {
  const { target, rest = [], ...named } = options;
  if (target === undefined) return named;
  if (named.command !== undefined || named.url !== undefined) {
    throw usage(`give the server as "${target}" after the name or with ${named.command !== undefined ? '--command' : '--url'}, not both`);
  }
  const transport = named.transport;
  const isUrl = transport === 'http' || transport === 'sse' || (transport !== 'stdio' && /^https?:\/\//i.test(target) && rest.length === 0);
  if (isUrl) {
    if (rest.length > 0) throw usage(`a remote server takes no arguments after its URL (got ${rest.length})`, `e.g. \`plinth mcp add -t ${transport ?? 'http'} docs https://example.com/mcp\``);
    return { ...named, url: target };
  }
  if (named.arg?.length) throw usage('give the program\'s arguments after it (`-- <program> <args…>`), or use --command with --arg, not both');
  return { ...named, command: target, ...(rest.length > 0 && { arg: rest }) };
}

/**
 * `--header` values: `Name: value` (as curl, Claude Code and Gemini CLI take them) or
 * `Name=value` (plinth's first spelling); whichever of `:` and `=` comes first separates.
 */
export function headerPairs(items: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const at = item.search(/[:=]/);
    const name = at > 0 ? item.slice(0, at).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw usage('--header takes "Name: value"; one has no header name before ":"', 'e.g. -H "Authorization: Bearer ${env:TOKEN}"');
    }
    const value = item[at] === ':' ? item.slice(at + 1).trim() : item.slice(at + 1);
    Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function checkUrl(url: string): string {
  // The scheme is the schema's to check (a third-party transport may have its own).
  if (!URL.canParse(url)) throw usage('--url is not a URL', 'give an absolute URL, e.g. http://127.0.0.1:3000/mcp');
  return url;
}

/** `K=V` strings as an object; a repeated key keeps the last value. Values are never echoed in errors. */
export function pairs(items: readonly string[], option: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const at = item.indexOf('=');
    const key = at > 0 ? item.slice(0, at).trim() : '';
    if (key === '') throw usage(`${option} takes NAME=VALUE; one value has no name before "="`, `e.g. ${option} ${option === '--env' ? 'API_KEY=${env:API_KEY}' : 'Authorization=Bearer ${env:TOKEN}'}`);
    Object.defineProperty(out, key, { value: item.slice(at + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** A positive whole number of milliseconds. */
export function milliseconds(value: string, option: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0 || n > 2_147_483_647) throw usage(`${option} must be a positive whole number of milliseconds, got "${value}"`);
  return n;
}

/**
 * The arguments of `plinth call`: a JSON object, `@file` for one read from a
 * file, or `@-` for standard input. No `--args` means `{}`.
 */
export async function toolArguments(value: string | undefined, stdin: () => Promise<string> = readStdin): Promise<Record<string, unknown>> {
  if (value === undefined) return {};
  let text = value;
  if (value.startsWith('@')) {
    const file = value.slice(1);
    text = file === '-' ? await stdin() : await readFile(file, 'utf8').catch((error: unknown) => {
      throw usage(`cannot read the arguments file ${file}: ${describeFileError(error)}`, `give the path of a JSON file (relative to ${process.cwd()}), @- for standard input, or the JSON itself: --args '{"message":"hi"}'`);
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw usage('--args is not valid JSON', 'pass a JSON object, e.g. --args \'{"message":"hi"}\', or @file');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw usage('--args must be a JSON object (the tool\'s named arguments)');
  return parsed as Record<string, unknown>;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A usage error: exit code 2. */
export function usage(message: string, hint?: string): PlinthError {
  return new PlinthError('PLN_E_CLI_USAGE', message, { plugin: 'mcp', ...(hint && { hint }) });
}
