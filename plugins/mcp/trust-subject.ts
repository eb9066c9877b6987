/**
 * Trust of MCP servers. What the trust plugin approves for a server: its definition as
 * written (references unresolved, so that a rotated token does not need
 * approval again) and the script it runs, if any, so that editing the script
 * does. Knobs that change nothing about what runs (`enabled`, the timeout,
 * where it was written) stay out of the fingerprint.
 */
import { basename, isAbsolute, resolve } from 'node:path';
import { type PlinthError, isPlinthError, describeError } from 'plinth/sdk';
import type { TrustService, TrustSubject } from '../trust/types.js';
import type { ServerRecord } from './definitions.js';
import { mcpError } from './errors.js';
import type { McpServerDefinition } from './types.js';

// Per interpreter, the flags that mean "the code is inline (or a module name)": no script file then.
const INTERPRETERS: Readonly<Record<string, readonly string[]>> = {
  node: ['-e', '--eval', '-p', '--print'],
  tsx: ['-e', '--eval', '-p', '--print'],
  python: ['-c', '-m'],
  python3: ['-c', '-m'],
  bash: ['-c'],
  sh: ['-c'],
  zsh: ['-c'],
};

/**
 * The absolute path of the script a stdio server runs: the first argument an
 * interpreter is given (`node server.js`), or the command itself when it is a
 * path (`./server.sh`). Undefined for package runners (`npx`, `uvx`) and
 * inline code: there is no file to fingerprint then.
 */
export function serverScript(definition: Pick<McpServerDefinition, 'command' | 'args' | 'cwd'>): string | undefined {
  const { command } = definition;
  if (command === undefined) return undefined;
  if (isAbsolute(command) || command.startsWith('./') || command.startsWith('../')) {
    const program = basename(command).replace(/\.exe$/i, '');
    if (!Object.hasOwn(INTERPRETERS, program)) return resolve(definition.cwd, command);
  }
  const program = basename(command).replace(/\.exe$/i, '');
  if (!Object.hasOwn(INTERPRETERS, program)) return undefined;
  const inline = INTERPRETERS[program] ?? [];
  for (const arg of definition.args) {
    if (inline.includes(arg)) return undefined;
    if (arg.startsWith('-')) continue;
    return isAbsolute(arg) ? arg : resolve(definition.cwd, arg);
  }
  return undefined;
}

/** The subject `trust.check` decides on for one server. `redact` masks what the summary might show. */
export function serverTrustSubject(record: ServerRecord, redact: (text: string) => string): TrustSubject {
  const { definition: d, written } = record;
  const definition = {
    name: d.name,
    transport: d.transport,
    command: d.command ?? null,
    args: d.args,
    env: written.env,
    cwd: d.cwd,
    url: d.url ?? null,
    headers: written.headers,
    includeTools: d.includeTools ?? null,
    excludeTools: d.excludeTools ?? null,
    oauth: d.oauth ?? null,
    plugin: d.plugin ?? null,
  };
  const script = serverScript(d);
  const what = d.command !== undefined ? [d.command, ...d.args].join(' ') : `${d.url ?? ''} (${d.transport})`;
  return {
    kind: 'mcp-server',
    id: record.trustId,
    source: d.source,
    definition,
    files: script ? [script] : [],
    summary: redact(`${what} (from ${d.origin})`),
  };
}

/**
 * Asks the trust plugin whether the server may start now (on a terminal, it
 * may ask the user). Undefined when it may; otherwise the error saying why
 * not, ending with the command that approves it (also in `details.approveCommand`).
 * Fails closed: a trust store that cannot be read refuses, with its own code.
 */
export async function checkServerTrust(
  record: ServerRecord,
  trust: () => Promise<TrustService>,
  redact: (text: string) => string,
  signal: AbortSignal,
): Promise<PlinthError | undefined> {
  const { definition } = record;
  try {
    const verdict = await (await trust()).check(serverTrustSubject(record, redact), { signal });
    if (verdict.trusted) return undefined;
    const reason = verdict.reason ?? `${definition.source} MCP server "${record.trustId}" is not approved`;
    return mcpError('PLN_E_MCP_UNTRUSTED', `MCP server "${definition.name}" was not started: ${reason}`, {
      ...(verdict.approveCommand !== undefined && { hint: `review it (${definition.origin}), then run: ${verdict.approveCommand}` }),
      details: {
        server: definition.name,
        source: definition.source,
        level: verdict.level,
        ...(verdict.approveCommand !== undefined && { approveCommand: verdict.approveCommand }),
      },
    });
  } catch (error) {
    return isPlinthError(error) ? error : mcpError('PLN_E_MCP_UNTRUSTED', `MCP server "${definition.name}" was not started: trust could not be checked: ${describeError(error)}`);
  }
}
