/**
 * Edits the `mcpServers` section of one settings file for `plinth mcp add` and
 * `plinth mcp remove`, through the sdk's one settings-file editor: a lock so
 * that two plinth commands take turns, an atomic write so that a reader sees
 * the old file or the new one, and a program that takes no lock (an editor)
 * noticed and its version edited instead. The rest of the file is kept as it
 * was parsed, in its key order and indentation.
 */
import { type SettingsFileOwner, type SettingsFileRef, editSettingsFile, readSettingsFile, settingsFileError } from 'plinth/internal';

export type { SettingsFileRef };

/** What a change function sees and returns: the `mcpServers` object of the file (a copy it may change). */
export type ServersEdit<T> = (servers: Record<string, unknown>) => { readonly changed: boolean; readonly result: T };

const OWNER: SettingsFileOwner = { code: 'PLN_E_MCP_SETTINGS_WRITE', plugin: 'mcp' };

/**
 * The `mcpServers` entries of a settings file; an absent file has none.
 * @throws PlinthError `PLN_E_MCP_SETTINGS_WRITE` when the file cannot be read or is not a JSON object.
 */
export async function readServers(ref: SettingsFileRef): Promise<Record<string, unknown>> {
  return serversOf(await readSettingsFile(ref, OWNER), ref);
}

/**
 * Applies `edit` to the file's `mcpServers` and writes the file atomically when it changed.
 * @throws PlinthError `PLN_E_MCP_SETTINGS_WRITE` when the file cannot be read, parsed or written.
 * @throws PlinthError `PLN_E_FILE_LOCKED` when another plinth command held the file's lock for the whole wait.
 */
export function editServers<T>(ref: SettingsFileRef, edit: ServersEdit<T>): Promise<T> {
  return editSettingsFile(ref, OWNER, (data) => {
    const servers = { ...serversOf(data, ref) };
    const outcome = edit(servers);
    if (outcome.changed) data.mcpServers = servers;
    return outcome;
  });
}

function serversOf(data: Record<string, unknown>, ref: SettingsFileRef): Record<string, unknown> {
  const servers = data.mcpServers;
  if (servers === undefined) return {};
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    throw writeError(ref, `"mcpServers" in ${ref.scope} settings ${ref.file} is not an object`, undefined, 'make it an object of servers by name, or remove it');
  }
  return servers as Record<string, unknown>;
}

function writeError(ref: SettingsFileRef, message: string, cause?: unknown, hint?: string) {
  return settingsFileError(ref, OWNER, message, cause, hint);
}
