/** A Gemini CLI extension folder (`gemini-extension.json`, `hooks/hooks.json`) as a plinth manifest: see internal/peer/manifest.ts. */
import path from 'node:path';
import { readContributions } from './contributions.js';
import { addHooks, addServers, isObject, manifest, objectOf, parse, peerName, peerPermissions, peerVersion, readJsonFile, Report } from './shared.js';
import { type Json, PEER_MANIFEST_FILES, type PeerContext, type PeerFiles, type PeerManifest } from './types.js';

const GEMINI_UNSUPPORTED: ReadonlyArray<[field: string, folder: string | undefined, reason: string]> = [
  ['themes', undefined, 'themes style the host\'s interface'],
  ['plan', undefined, 'planning is the host\'s'],
  ['migratedTo', undefined, 'plinth updates installed plugins from their registry (plinth ext update)'],
  ['commands', 'commands', 'custom commands (TOML) belong to the host\'s prompt; plinth has no slash commands: they are listed as contributions (plinth ext info) for a host to offer'],
  ['skills', 'skills', 'agent skills (SKILL.md) are not a plinth concept: they are listed as contributions (plinth ext info) for a host to offer'],
  ['agents', 'agents', 'sub-agents are not a plinth concept: they are listed as contributions (plinth ext info) for a host to offer'],
  ['policies', 'policies', 'policy-engine rules (TOML) are not read: use plinth\'s hooks and trust'],
];

export async function geminiExtension(root: string, text: string, files: PeerFiles, context: PeerContext): Promise<PeerManifest> {
  const file = path.join(root, PEER_MANIFEST_FILES.gemini);
  const peer = new Report();
  const own = context.asWritten ? '${extensionPath}' : root;
  const vars = (text: string) =>
    text
      .replaceAll('${extensionPath}', own)
      .replaceAll('${/}', path.sep)
      .replaceAll('${pathSeparator}', path.sep)
      .replaceAll('${workspacePath}', context.workspace ?? '${workspacePath}');
  const raw = objectOf(parse(file, text), file);
  const name = peerName(raw.name, file, peer);
  const version = peerVersion(raw.version, file, peer);

  const settings = geminiSettings(raw.settings, peer);
  const toRef = (variable: string): string | undefined => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) return undefined;
    return settings.some((s) => s.name === variable) ? `\${setting:${name}.${variable}}` : `\${env:${variable}}`;
  };
  const excluded = geminiExcludeTools(raw.excludeTools, peer);
  const servers: Json = {};
  if (raw.mcpServers !== undefined) addServers(servers, raw.mcpServers, { file: PEER_MANIFEST_FILES.gemini, at: 'mcpServers' }, { vars, toRef, peer, kind: 'gemini', excluded, settings: settings.map((s) => s.name as string) });

  const hooks: Json = {};
  const hookText = await readJsonFile(root, 'hooks/hooks.json', files);
  if (hookText !== undefined) addHooks(hooks, hookText, 'hooks/hooks.json', peer, vars, 'gemini');
  if (raw.hooks !== undefined) peer.ignore('hooks', 'Gemini CLI reads hooks from hooks/hooks.json only, and so does plinth');

  const context_ = raw.contextFileName ?? ((await files.has('GEMINI.md')) ? 'GEMINI.md' : undefined);
  if (context_ !== undefined) peer.ignore('contextFileName', `context files (${[context_].flat().join(', ')}) feed the host's prompt, which plinth does not build; they are not loaded: they are listed as contributions (plinth ext info) for a host to offer`);
  for (const [field, folder, reason] of GEMINI_UNSUPPORTED) {
    if (raw[field] !== undefined) peer.ignore(field, reason);
    else if (folder !== undefined && (await files.has(folder))) peer.ignore(`${folder}/`, reason);
  }
  const known = new Set(['name', 'version', 'description', 'mcpServers', 'settings', 'excludeTools', 'contextFileName', 'hooks', ...GEMINI_UNSUPPORTED.map(([f]) => f)]);
  for (const key of Object.keys(raw)) if (!known.has(key)) peer.ignore(key, 'a gemini-extension.json field plinth does not know');

  const contextFiles = [raw.contextFileName].flat().filter((f): f is string => typeof f === 'string');
  const contributions = await readContributions(files, { context: contextFiles });
  const permissions = peerPermissions(servers, hooks, settings, peer, 'Gemini CLI');
  const shown = context.asWritten ? PEER_MANIFEST_FILES.gemini : file;
  return { file, format: 'gemini', data: manifest(name, version, raw.description, servers, hooks, settings, { ...peer.origin('gemini', shown), contributions }, permissions) };
}

/** `settings` → declared settings named by their `envVar`; plinth gives each to the extension's servers and hooks as that variable, as Gemini does. */
function geminiSettings(list: unknown, peer: Report): Json[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    peer.ignore('settings', 'expected a list of settings');
    return [];
  }
  const settings: Json[] = [];
  list.forEach((item: unknown, i) => {
    const envVar = isObject(item) ? item.envVar : undefined;
    if (!isObject(item) || typeof envVar !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(envVar)) {
      peer.ignore(`settings[${i}]`, 'expected { "name", "description", "envVar", "sensitive" } with envVar an environment variable name');
      return;
    }
    if (settings.some((s) => s.name === envVar)) return void peer.ignore(`settings[${i}]`, `envVar ${envVar} is declared twice`);
    const words = [item.name, item.description].filter((w): w is string => typeof w === 'string' && w !== '');
    settings.push({ name: envVar, description: words.join(': '), type: 'string', sensitive: item.sensitive === true, envVar });
  });
  if (settings.length > 0) peer.note('settings', 'each setting is named by its envVar (plinth ext config <plugin> <ENV_VAR>); a sensitive one is kept in plinth\'s secret store, not in the extension\'s .env');
  return settings;
}

/** Plain tool names; Gemini's command-specific forms (`run_shell_command(rm -rf)`) are listed as ignored. */
function geminiExcludeTools(list: unknown, peer: Report): string[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    peer.ignore('excludeTools', 'expected a list of tool names');
    return [];
  }
  const names: string[] = [];
  list.forEach((item: unknown, i) => {
    if (typeof item === 'string' && /^[^()\s]+$/.test(item)) names.push(item);
    else peer.ignore(`excludeTools[${i}]`, `${JSON.stringify(item)}: command-specific restrictions of the host's own tools have no plinth meaning`);
  });
  if (names.length > 0) peer.note('excludeTools', `${names.join(', ')}: hidden from this extension's own MCP servers (their excludeTools); tools of other plugins and of the host are not affected`);
  return names;
}
