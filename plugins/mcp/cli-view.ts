/**
 * How the `mcp` commands show a server: what it runs or where it is, with
 * secrets masked. Env and header values are never shown (only their names);
 * a password in a URL, a query parameter or an argument that looks like a
 * credential is masked too, because people paste tokens there as well.
 */
import { REDACTED as MASK, SENSITIVE } from './redact.js';
import type { McpServerDefinition, ServerStatus } from 'plinth/sdk';


/** A URL with its password and sensitive query values masked; unparsable text is returned as is (the redactor still runs on output). */
export function maskUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (parsed.password) parsed.password = MASK;
  for (const key of [...parsed.searchParams.keys()]) if (SENSITIVE.test(key)) parsed.searchParams.set(key, MASK);
  // URL encodes the mask; show it as typed.
  return parsed.toString().replaceAll(encodeURIComponent(MASK), MASK);
}

/** Arguments with the value after a credential-looking flag (`--token x`, `--api-key=x`) masked. */
export function maskArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  let maskNext = false;
  for (const arg of args) {
    if (maskNext && !arg.startsWith('-')) {
      out.push(MASK);
      maskNext = false;
      continue;
    }
    maskNext = false;
    const flag = /^(--?[A-Za-z0-9][\w-]*)(=(.*))?$/.exec(arg);
    if (flag && SENSITIVE.test(flag[1]!)) {
      if (flag[2] !== undefined) out.push(`${flag[1]}=${MASK}`);
      else {
        out.push(arg);
        maskNext = true;
      }
      continue;
    }
    const assignment = /^([A-Za-z_][\w.-]*)=(.+)$/.exec(arg);
    out.push(assignment && SENSITIVE.test(assignment[1]!) ? `${assignment[1]}=${MASK}` : arg);
  }
  return out;
}

/** A shell-like line for a person: arguments with spaces are quoted. */
export function commandLine(command: string, args: readonly string[]): string {
  return [command, ...maskArgs(args)].map((a) => (/^[\w@%+=:,./[\]-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}

/** What a server runs or where it is: `node server.mjs` or `https://host/mcp`. */
export function target(definition: McpServerDefinition): string {
  if (definition.url !== undefined) return maskUrl(definition.url);
  if (definition.command !== undefined) return commandLine(definition.command, definition.args);
  return '-';
}

/** A definition for `--json`: everything but values that may be secret (env and header values become their names). */
export function definitionJson(definition: McpServerDefinition): Record<string, unknown> {
  return {
    name: definition.name,
    source: definition.source,
    origin: definition.origin,
    ...(definition.plugin !== undefined && { plugin: definition.plugin }),
    transport: definition.transport,
    enabled: definition.enabled,
    ...(definition.command !== undefined && { command: definition.command, args: maskArgs(definition.args), cwd: definition.cwd }),
    ...(definition.url !== undefined && { url: maskUrl(definition.url) }),
    env: Object.keys(definition.env),
    headers: Object.keys(definition.headers),
    connectTimeoutMs: definition.connectTimeoutMs,
    ...(definition.includeTools && { includeTools: definition.includeTools }),
    ...(definition.excludeTools && { excludeTools: definition.excludeTools }),
    oauth: definition.oauth !== undefined && definition.oauth !== false,
    ...(definition.protocol !== undefined && { protocol: definition.protocol }),
  };
}

/** A status for `--json`: as the service reports it (the stderr tail is already bounded and redacted by the transport). */
export function statusJson(status: ServerStatus): Record<string, unknown> {
  return { ...status };
}

/** The last cell of a status row: the error's code (the message follows the table), or who answered. */
export function statusNote(status: ServerStatus): string {
  if (status.error) return status.error.code;
  const era = eraNote(status);
  if (status.serverInfo) return `${status.serverInfo.name} ${status.serverInfo.version}${era ? `, ${era}` : ''}`;
  return era;
}

/** `MCP 2026-07-28 (modern)`: the revision a connected server speaks and its era; empty when not known. */
export function eraNote(status: ServerStatus): string {
  if (status.protocolVersion === undefined) return '';
  return `MCP ${status.protocolVersion}${status.era ? ` (${status.era})` : ''}`;
}

/** One line, at most `width` characters. */
export function oneLine(text: string, width = 100): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}
