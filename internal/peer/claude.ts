/** A Claude Code plugin folder (`.claude-plugin/plugin.json`, `.mcp.json`, `hooks/hooks.json`) as a plinth manifest: see internal/peer/manifest.ts. */
import path from 'node:path';
import { readContributions } from './contributions.js';
import { addHookFiles, addHooks, addServerFiles, addServers, isObject, manifest, objectOf, parse, pathList, peerName, peerPermissions, peerVersion, Report } from './shared.js';
import { type Json, PEER_MANIFEST_FILES, type PeerContext, type PeerFiles, type PeerManifest, UNVERSIONED } from './types.js';

/** What the report says of the parts a host may offer. */
const LISTED = 'they are listed as contributions (plinth ext info, the extensions service) for a host to offer';
/** plugin.json fields that are metadata only. */
const CLAUDE_METADATA = ['$schema', 'author', 'homepage', 'repository', 'license', 'keywords', 'displayName'];
/** Components plinth has no equivalent of, by plugin.json field and default folder. */
const CLAUDE_UNSUPPORTED: ReadonlyArray<[field: string, folder: string | undefined, reason: string]> = [
  ['commands', 'commands', `slash commands (markdown) belong to the host's prompt; plinth has no slash commands: ${LISTED}`],
  ['agents', 'agents', `subagents (markdown) are not a plinth concept: ${LISTED}`],
  ['skills', 'skills', `agent skills (SKILL.md) are not a plinth concept: ${LISTED}`],
  ['outputStyles', 'output-styles', `output styles change the host's prompt, which plinth does not build: ${LISTED}`],
  ['lspServers', '.lsp.json', 'plinth runs MCP servers, not language servers'],
  ['monitors', undefined, 'not a plinth concept'],
  ['channels', undefined, 'not a plinth concept'],
  ['dependencies', undefined, 'Claude plugin dependencies name other Claude plugins, not plinth plugins with semver ranges; install them yourself'],
  ['settings', 'settings.json', 'a Claude plugin\'s default Claude settings have no plinth meaning'],
];

/**
 * The folders and files of Claude Code's standard plugin layout, any of which makes a folder a
 * Claude Code plugin without `.claude-plugin/plugin.json` where plinth is told to look for one
 * (see `readPeerFolder`'s `layout`): Claude Code reads such a folder by these defaults alone.
 */
export const CLAUDE_LAYOUT = ['hooks/hooks.json', '.mcp.json', 'commands', 'agents', 'skills', 'output-styles'] as const;

/**
 * `text`: the plugin.json, or undefined for a folder in the standard layout alone (then the
 * folder's name is the plugin's, and its first standard file is the manifest's file).
 */
export async function claudePlugin(root: string, text: string | undefined, files: PeerFiles, context: PeerContext): Promise<PeerManifest> {
  const marker = text === undefined ? await firstPresent(files) : undefined;
  const own_ = text === undefined ? (marker ?? '.') : PEER_MANIFEST_FILES.claude;
  const file = path.join(root, ...own_.split('/'));
  const raw = text === undefined ? {} : objectOf(parse(file, text), file);
  const peer = new Report();
  if (text === undefined) peer.note('plugin.json', `no ${PEER_MANIFEST_FILES.claude}: read by Claude Code's standard layout (${CLAUDE_LAYOUT.join(', ')}), as Claude Code reads it`);
  const name = peerName(raw.name, file, peer, path.basename(root));
  const version = peerVersion(raw.version, file, peer, UNVERSIONED);
  const own = context.asWritten ? '${CLAUDE_PLUGIN_ROOT}' : root;
  const vars = (text: string) => text.replaceAll('${CLAUDE_PLUGIN_ROOT}', own).replaceAll('${CLAUDE_PROJECT_DIR}', context.workspace ?? '${CLAUDE_PROJECT_DIR}');

  const settings = claudeUserConfig(raw.userConfig, peer);
  const toRef = (variable: string): string | undefined => {
    const option = /^user_config\.([A-Za-z0-9_]+)$/.exec(variable)?.[1];
    if (option !== undefined) return settings.some((s) => s.name === option) ? `\${setting:${name}.${option}}` : undefined;
    const bare = /^([A-Za-z_][A-Za-z0-9_]*)(:-.*)?$/.exec(variable);
    if (!bare) return undefined;
    if (bare[2] !== undefined) peer.note('mcpServers', `"\${${variable}}": plinth references have no default, so ${bare[1]} must be set`);
    return `\${env:${bare[1]}}`;
  };

  const servers: Json = {};
  const inline = raw.mcpServers;
  const serverFiles = typeof inline === 'string' || Array.isArray(inline) ? pathList(inline, 'mcpServers', peer) : [];
  if (await files.has('.mcp.json')) serverFiles.unshift('.mcp.json');
  await addServerFiles(servers, serverFiles, root, files, { vars, toRef, peer, kind: 'claude' });
  if (isObject(inline)) addServers(servers, inline, { file: PEER_MANIFEST_FILES.claude, at: 'mcpServers' }, { vars, toRef, peer, kind: 'claude' });

  const hooks: Json = {};
  const hookFiles = typeof raw.hooks === 'string' || Array.isArray(raw.hooks) ? pathList(raw.hooks, 'hooks', peer) : [];
  if (await files.has('hooks')) hookFiles.unshift('hooks/hooks.json');
  await addHookFiles(hooks, hookFiles, root, files, peer, 'claude');
  if (isObject(raw.hooks)) addHooks(hooks, isObject(raw.hooks.hooks) ? raw.hooks : { hooks: raw.hooks }, 'plugin.json hooks', peer, (s) => s, 'claude');

  for (const key of CLAUDE_METADATA) if (raw[key] !== undefined) peer.ignore(key, 'metadata: plinth shows the name, version and description only');
  for (const [field, folder, reason] of CLAUDE_UNSUPPORTED) {
    if (raw[field] !== undefined) peer.ignore(field, reason);
    else if (folder !== undefined && (await files.has(folder))) peer.ignore(folder.includes('.') ? folder : `${folder}/`, reason);
  }
  const known = new Set(['name', 'version', 'description', 'mcpServers', 'hooks', 'userConfig', ...CLAUDE_METADATA, ...CLAUDE_UNSUPPORTED.map(([f]) => f)]);
  for (const key of Object.keys(raw)) if (!known.has(key)) peer.ignore(key, 'a plugin.json field plinth does not know');
  if (await files.has(PEER_MANIFEST_FILES.gemini)) peer.ignore(PEER_MANIFEST_FILES.gemini, 'the folder is also a Gemini CLI extension; plinth reads its Claude Code plugin.json');
  if (await files.has(PEER_MANIFEST_FILES.codex)) peer.ignore(PEER_MANIFEST_FILES.codex, 'the folder is also a Codex plugin; plinth reads its Claude Code plugin.json');

  const paths = (field: string) => (typeof raw[field] === 'string' || Array.isArray(raw[field]) ? (pathList(raw[field], field, new Report())) : []);
  const contributions = await readContributions(files, { commands: paths('commands'), agents: paths('agents'), skills: paths('skills'), outputStyles: paths('outputStyles') });
  const permissions = peerPermissions(servers, hooks, settings, peer, 'Claude Code');
  const shown = context.asWritten ? own_ : file;
  return { file, format: 'claude', data: manifest(name, version, raw.description, servers, hooks, settings, { ...peer.origin('claude', shown), contributions }, permissions) };
}

/** Whether a folder without plugin.json is in Claude Code's standard layout: one of {@link CLAUDE_LAYOUT}, and not a marketplace's root. */
export async function isClaudeLayout(files: PeerFiles): Promise<boolean> {
  if (await files.has('.claude-plugin/marketplace.json')) return false;
  return (await firstPresent(files)) !== undefined;
}

async function firstPresent(files: PeerFiles): Promise<string | undefined> {
  for (const entry of CLAUDE_LAYOUT) if (await files.has(entry)) return entry;
  return undefined;
}

/** `userConfig` → declared settings; each reaches the plugin's servers and hooks as `CLAUDE_PLUGIN_OPTION_<KEY>`. */
function claudeUserConfig(config: unknown, peer: Report): Json[] {
  if (config === undefined) return [];
  if (!isObject(config)) {
    peer.ignore('userConfig', 'expected an object of options');
    return [];
  }
  const settings: Json[] = [];
  for (const [key, option] of Object.entries(config)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) || !isObject(option)) {
      peer.ignore(`userConfig.${key}`, 'expected an option named with letters, digits and "_", described by an object');
      continue;
    }
    const type = option.multiple === true ? 'array' : option.type === 'number' ? 'number' : option.type === 'boolean' ? 'boolean' : 'string';
    const words = [option.title, option.description].filter((w): w is string => typeof w === 'string' && w !== '');
    settings.push({
      name: key,
      description: words.join(': '),
      type,
      ...(option.default !== undefined && { default: option.default }),
      // Not plinth's `required`: a plugin without the value would not load, so an install (which loads it) could never succeed.
      required: false,
      sensitive: option.sensitive === true,
      envVar: `CLAUDE_PLUGIN_OPTION_${key}`,
    });
  }
  for (const [key, option] of Object.entries(config)) {
    if (isObject(option) && option.required === true) peer.note(`userConfig.${key}`, `required by the plugin: set it with plinth ext config <plugin> ${key}; plinth loads the plugin without it (its servers and hooks then get no ${key})`);
  }
  if (settings.length > 0) peer.note('userConfig', `options are plinth settings (plinth ext config <plugin> <option>), given to the plugin's servers and hooks as CLAUDE_PLUGIN_OPTION_<OPTION>`);
  return settings;
}
