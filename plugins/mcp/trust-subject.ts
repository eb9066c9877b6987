/**
 * Trust of MCP servers. What the trust plugin approves for a server: its
 * definition as written (references unresolved, so that a rotated token does
 * not need approval again) and what it runs (`runs`: command, args, env, cwd,
 * url, headers), of which the trust plugin also covers every file or folder
 * named, by its one rule for hooks and servers. Knobs that change nothing
 * about what runs (`enabled`, the timeout, where it was written) stay out.
 */
import { type PinnedFile, type PlinthError, type Principal, type TrustService, type TrustSubject, describeError, isPlinthError } from 'plinth/sdk';
import { type GrantsService } from 'plinth/internal';
import type { ServerRecord } from './definitions.js';
import { mcpError } from './errors.js';

/**
 * The subject `trust.check` decides on for one server. A cwd that defaulted to
 * the workspace is not part of its identity (a user server's defaults to the
 * user folder, which is), so a user server is the same one in every folder; a
 * remote server has no cwd. `redact` masks what the summary might show.
 */
export function serverTrustSubject(record: ServerRecord, redact: (text: string) => string): TrustSubject {
  const { definition: d, written } = record;
  const local = d.command !== undefined;
  const definition = {
    name: d.name,
    transport: d.transport,
    includeTools: d.includeTools ?? null,
    excludeTools: d.excludeTools ?? null,
    oauth: d.oauth ?? null,
    plugin: d.plugin ?? null,
  };
  const what = local ? [d.command, ...(written.args ?? d.args)].join(' ') : `${d.url ?? ''} (${d.transport})`;
  return {
    kind: 'mcp-server',
    id: record.trustId,
    source: d.source,
    definition,
    files: [],
    runs: {
      ...(d.command !== undefined && { command: d.command }),
      // As written: `${workspace}` stays a placeholder, so that a user server naming the project is one subject in every folder.
      args: written.args ?? d.args,
      env: written.env,
      ...(local && { cwd: d.cwd, cwdIsDefault: written.cwdIsDefault }),
      ...(d.url !== undefined && { url: d.url }),
      headers: written.headers,
    },
    summary: redact(`${what} (from ${d.origin})`),
    // A plugin's server: covered by the approval of an installed plugin (the trust plugin decides when).
    ...(d.plugin !== undefined && { declaredBy: d.plugin }),
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
  approved?: (pinned: readonly PinnedFile[]) => void,
  grants?: () => Promise<GrantsService | undefined>,
): Promise<PlinthError | undefined> {
  const { definition } = record;
  try {
    const verdict = await (await trust()).check(serverTrustSubject(record, redact), { signal });
    if (verdict.trusted) {
      // A workspace server's files as approved: its launch runs exactly these (the launcher's approved copy).
      approved?.(verdict.pinned ?? []);
      return undefined;
    }
    const reason = verdict.reason ?? `${definition.source} MCP server "${record.trustId}" is not approved`;
    // What its start will also need granted (its sandbox's permissions: a package runner's registry, …), shown with the approval, so both are done at once.
    const needs = definition.command !== undefined && definition.actingFor !== undefined ? await grantsNeeded(grants, definition.actingFor) : undefined;
    const also = needs === undefined ? '' : ` && ${needs.command} (it runs confined and also needs ${needs.missing.join(', ')})`;
    return mcpError('PLN_E_MCP_UNTRUSTED', `MCP server "${definition.name}" was not started: ${reason}`, {
      ...(verdict.approveCommand !== undefined && { hint: `review it (${definition.origin}), then run: ${verdict.approveCommand}${also}` }),
      details: {
        server: definition.name,
        source: definition.source,
        level: verdict.level,
        ...(verdict.approveCommand !== undefined && { approveCommand: verdict.approveCommand }),
        ...(needs !== undefined && { grantCommand: needs.command, permissions: needs.missing }),
      },
    });
  } catch (error) {
    return isPlinthError(error) ? error : mcpError('PLN_E_MCP_UNTRUSTED', `MCP server "${definition.name}" was not started: trust could not be checked: ${describeError(error)}`);
  }
}

/** What the sandbox's grants service says `principal` still needs; undefined without one, or when it cannot say. */
async function grantsNeeded(grants: (() => Promise<GrantsService | undefined>) | undefined, principal: Principal): Promise<{ readonly missing: readonly string[]; readonly command: string } | undefined> {
  try {
    return (await (await grants?.())?.needs?.(principal)) ?? undefined;
  } catch {
    return undefined; // the approval is still right; the start will say what is missing
  }
}
