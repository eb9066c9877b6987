/**
 * A Codex CLI plugin folder (`.codex-plugin/plugin.json`, with `.mcp.json`, `hooks/hooks.json`,
 * `skills/`) as a plinth manifest: see internal/peer/manifest.ts.
 *
 * Codex's plugin.json names its parts by path (`"mcpServers": "./.mcp.json"`, `"hooks":
 * "./hooks/hooks.json"`, `"skills": "./skills/"`); `hooks` may also be a list of paths or the hooks
 * object itself. Its `.mcp.json` is Claude Code's shape (`{ "mcpServers": { … } }`) and its hooks
 * file Codex's (Claude Code's shape, Codex's events and output), read by the hooks plugin in the
 * `codex` dialect. Codex gives a plugin's hooks `PLUGIN_ROOT` (and `CLAUDE_PLUGIN_ROOT`, for
 * plugins written for Claude Code) and puts `${PLUGIN_ROOT}` into their commands; plinth does both
 * (the hooks plugin's runner).
 */
import path from 'node:path';
import { readContributions } from './contributions.js';
import { addHookFiles, addHooks, addServerFiles, addServers, isObject, manifest, objectOf, parse, pathList, peerName, peerPermissions, peerVersion, Report } from './shared.js';
import { type Json, PEER_MANIFEST_FILES, type PeerContext, type PeerFiles, type PeerManifest, UNVERSIONED } from './types.js';

/** plugin.json fields that are metadata only (shown in Codex's plugin directory). */
const CODEX_METADATA = ['$schema', 'author', 'homepage', 'repository', 'license', 'keywords', 'interface', 'changelog'];
/** Parts plinth has no equivalent of, by plugin.json field and default place. */
const CODEX_UNSUPPORTED: ReadonlyArray<[field: string, place: string | undefined, reason: string]> = [
  ['skills', 'skills', "agent skills (SKILL.md) feed the host's prompt; plinth does not run them: they are listed as contributions (plinth ext info) for a host to offer"],
  ['agents', 'agents', 'subagents are not a plinth concept; they are listed as contributions (plinth ext info) for a host to offer'],
  ['apps', '.app.json', "app connectors are ChatGPT's, not a plinth concept"],
];

export async function codexPlugin(root: string, text: string, files: PeerFiles, context: PeerContext): Promise<PeerManifest> {
  const file = path.join(root, ...PEER_MANIFEST_FILES.codex.split('/'));
  const raw = objectOf(parse(file, text), file);
  const peer = new Report();
  const name = peerName(raw.name, file, peer);
  const version = peerVersion(raw.version, file, peer, UNVERSIONED);
  const own = context.asWritten ? '${PLUGIN_ROOT}' : root;
  const vars = (value: string) => value.replaceAll('${PLUGIN_ROOT}', own).replaceAll('${CLAUDE_PLUGIN_ROOT}', own);
  const toRef = (variable: string): string | undefined => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable) ? `\${env:${variable}}` : undefined);

  const servers: Json = {};
  const inline = raw.mcpServers;
  const serverFiles = typeof inline === 'string' || Array.isArray(inline) ? pathList(inline, 'mcpServers', peer) : [];
  if (serverFiles.length === 0 && !isObject(inline) && (await files.has('.mcp.json'))) serverFiles.push('.mcp.json');
  await addServerFiles(servers, serverFiles, root, files, { vars, toRef, peer, kind: 'claude' });
  if (isObject(inline)) addServers(servers, inline, { file: PEER_MANIFEST_FILES.codex, at: 'mcpServers' }, { vars, toRef, peer, kind: 'claude' });

  const hooks: Json = {};
  const hookFiles = typeof raw.hooks === 'string' || Array.isArray(raw.hooks) ? pathList(raw.hooks, 'hooks', peer) : [];
  // Codex reads the default hooks/hooks.json when plugin.json names no hooks.
  if (raw.hooks === undefined && (await files.has('hooks'))) hookFiles.push('hooks/hooks.json');
  await addHookFiles(hooks, hookFiles, root, files, peer, 'codex');
  if (isObject(raw.hooks)) addHooks(hooks, isObject(raw.hooks.hooks) ? raw.hooks : { hooks: raw.hooks }, 'plugin.json hooks', peer, (s) => s, 'codex');

  for (const key of CODEX_METADATA) if (raw[key] !== undefined) peer.ignore(key, 'metadata: plinth shows the name, version and description only');
  for (const [field, place, reason] of CODEX_UNSUPPORTED) {
    if (raw[field] !== undefined) peer.ignore(field, reason);
    else if (place !== undefined && (await files.has(place))) peer.ignore(place.includes('.') ? place : `${place}/`, reason);
  }
  const known = new Set(['name', 'version', 'description', 'mcpServers', 'hooks', ...CODEX_METADATA, ...CODEX_UNSUPPORTED.map(([f]) => f)]);
  for (const key of Object.keys(raw)) if (!known.has(key)) peer.ignore(key, 'a Codex plugin.json field plinth does not know');

  const named = (field: string) => (typeof raw[field] === 'string' ? [raw[field] as string] : []);
  const contributions = await readContributions(files, { skills: named('skills'), agents: named('agents') });
  const permissions = peerPermissions(servers, hooks, [], peer, 'Codex CLI');
  const shown = context.asWritten ? PEER_MANIFEST_FILES.codex : file;
  return { file, format: 'codex', data: manifest(name, version, raw.description, servers, hooks, [], { ...peer.origin('codex', shown), contributions }, permissions) };
}
