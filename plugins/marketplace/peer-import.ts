/**
 * `plinth import --from claude|gemini|codex`: what a peer's settings say about
 * plugins, read into a plan of marketplaces to add and plugins to install.
 * Nothing here fetches or installs: the command shows the plan, asks, then
 * runs `ext marketplace add` and `ext install <plugin>@<marketplace>` paths.
 *
 * - Claude Code: `extraKnownMarketplaces` (`{ name: { source: { source: github|git|directory|url, … } } }`)
 *   and `enabledPlugins` (`{ "plugin@marketplace": true }`) of its settings files.
 * - Codex CLI: `[plugins."plugin@marketplace"] enabled = true` in `~/.codex/config.toml`
 *   (its marketplaces are Codex's own state: the plugin's marketplace must be added in plinth, or named in the plan).
 * - Gemini CLI: each installed extension's `.gemini-extension-install.json`
 *   (`{ source, type: git|github-release|local|link, ref? }`) under `~/.gemini/extensions/`.
 */
import { readFile, readdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { PlinthError, safeLine } from 'plinth/sdk';
import { parse as parseToml } from 'smol-toml';
import { refuseCredentials } from './git.js';

/** Why a URL with credentials in it is left out (masked), or undefined: such a URL is never shown nor kept. */
function credentialsIn(url: string): string | undefined {
  try {
    refuseCredentials(url);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

export type PeerName = 'claude' | 'gemini' | 'codex';
export type ImportScope = 'user' | 'workspace';

/** A marketplace to add: its name in the peer's settings and what `ext marketplace add` is given. */
export interface PlannedMarketplace {
  readonly name: string;
  readonly source: string;
  readonly file: string;
  /** Already added in plinth under this name: nothing to do. */
  readonly added?: boolean;
}

/** A plugin to install: what `ext install` is given. */
export interface PlannedPlugin {
  readonly spec: string;
  readonly file: string;
}

export interface ImportPlan {
  readonly from: PeerName;
  readonly files: readonly string[];
  readonly marketplaces: readonly PlannedMarketplace[];
  readonly plugins: readonly PlannedPlugin[];
  /** What is left out, and why. */
  readonly skipped: readonly string[];
}

/** The peer's files `--scope` covers (default: the workspace's, then the user's), or the one `file` named. */
export function peerFiles(from: PeerName, workspace: string, scope: ImportScope | undefined, file: string | undefined, home = homedir()): string[] {
  if (file !== undefined) return [resolve(file)];
  const user = from === 'claude' ? [join(home, '.claude', 'settings.json')] : from === 'codex' ? [join(home, '.codex', 'config.toml')] : [join(home, '.gemini', 'extensions')];
  const project = from === 'claude' ? [join(workspace, '.claude', 'settings.json'), join(workspace, '.claude', 'settings.local.json')] : from === 'codex' ? [join(workspace, '.codex', 'config.toml')] : [join(workspace, '.gemini', 'extensions')];
  return scope === 'user' ? user : scope === 'workspace' ? project : [...project, ...user];
}

/** Reads `files` (those missing are left out) into a plan; `added`: the marketplaces plinth has. */
export async function planPeerImport(from: PeerName, files: readonly string[], added: ReadonlySet<string>, workspace: string): Promise<ImportPlan> {
  const marketplaces = new Map<string, PlannedMarketplace>();
  const plugins = new Map<string, PlannedPlugin>();
  const skipped: string[] = [];
  const read: string[] = [];
  for (const file of files) {
    if (from === 'gemini') {
      const names = await readdir(file).catch(() => undefined);
      if (names === undefined) continue;
      read.push(file);
      for (const name of names.sort()) geminiExtension(join(file, name), await readJson(join(file, name, '.gemini-extension-install.json')), plugins, skipped);
      continue;
    }
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    read.push(file);
    const data = from === 'codex' ? parseTomlFile(text, file) : parseJsonFile(text, file);
    if (from === 'claude') claudeSettings(data, file, workspace, added, marketplaces, plugins, skipped);
    else codexConfig(data, file, plugins, skipped);
  }
  // A plugin whose marketplace is neither added nor in the plan cannot be installed: said, not tried.
  for (const [spec, p] of plugins) {
    const at = spec.lastIndexOf('@');
    const market = at > 0 && from !== 'gemini' ? spec.slice(at + 1) : undefined;
    if (market !== undefined && !added.has(market) && !marketplaces.has(market)) {
      plugins.delete(spec);
      skipped.push(`${safeLine(spec)} (${p.file}): its marketplace "${safeLine(market)}" is not added in plinth nor known to ${from === 'codex' ? 'this file' : 'these settings'}; add it (\`plinth ext marketplace add <source>\`), then import again`);
    }
  }
  return { from, files: read, marketplaces: [...marketplaces.values()], plugins: [...plugins.values()], skipped };
}

function parseJsonFile(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new PlinthError('PLN_E_MARKET_IMPORT', `${file} is not JSON: ${(error as Error).message}`, { hint: 'fix the file, or name another: plinth import --from claude <file>' });
  }
}

function parseTomlFile(text: string, file: string): unknown {
  try {
    return parseToml(text);
  } catch (error) {
    throw new PlinthError('PLN_E_MARKET_IMPORT', `${file} is not TOML: ${safeLine((error as Error).message.split('\n')[0] ?? '')}`, { hint: 'fix the file, or name another: plinth import --from codex <file>' });
  }
}

async function readJson(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Claude Code's marketplace source as `ext marketplace add` takes it, or why not. */
function claudeMarketSource(source: unknown, workspace: string): string | { skip: string } {
  if (!isRecord(source)) return { skip: 'its "source" is not an object' };
  const ref = str(source.ref);
  const withRef = (s: string) => (ref ? `${s}#${ref}` : s);
  switch (source.source) {
    case 'github':
      return str(source.repo) ? withRef(source.repo as string) : { skip: 'a github source without "repo"' };
    case 'git':
      return str(source.url) ? withRef(source.url as string) : { skip: 'a git source without "url"' };
    case 'url':
      return str(source.url) ?? { skip: 'a url source without "url"' };
    case 'directory': {
      const path = str(source.path);
      if (!path) return { skip: 'a directory source without "path"' };
      return isAbsolute(path) ? path : resolve(workspace, path);
    }
    default:
      return { skip: `a "${safeLine(String(source.source))}" source, which plinth does not add (github, git, url and directory are)` };
  }
}

function claudeSettings(data: unknown, file: string, workspace: string, added: ReadonlySet<string>, marketplaces: Map<string, PlannedMarketplace>, plugins: Map<string, PlannedPlugin>, skipped: string[]): void {
  if (!isRecord(data)) return;
  if (isRecord(data.extraKnownMarketplaces)) {
    for (const [name, entry] of Object.entries(data.extraKnownMarketplaces)) {
      let source = claudeMarketSource(isRecord(entry) ? entry.source : undefined, workspace);
      const secret = typeof source === 'string' ? credentialsIn(source.replace(/#.*$/, '')) : undefined;
      if (secret !== undefined) source = { skip: secret };
      if (typeof source !== 'string') skipped.push(`marketplace ${safeLine(name)} (${file}): ${source.skip}`);
      else if (!marketplaces.has(name)) marketplaces.set(name, { name, source, file, ...(added.has(name) && { added: true }) });
    }
  }
  if (isRecord(data.enabledPlugins)) {
    for (const [spec, enabled] of Object.entries(data.enabledPlugins)) {
      if (!/^[^@\s]+@[^@\s]+$/.test(spec)) skipped.push(`${safeLine(spec)} (${file}): not <plugin>@<marketplace>`);
      else if (enabled !== true) skipped.push(`${safeLine(spec)} (${file}): not enabled there`);
      else if (!plugins.has(spec)) plugins.set(spec, { spec, file });
    }
  }
}

function codexConfig(data: unknown, file: string, plugins: Map<string, PlannedPlugin>, skipped: string[]): void {
  if (!isRecord(data) || !isRecord(data.plugins)) return;
  for (const [spec, entry] of Object.entries(data.plugins)) {
    if (!/^[^@\s]+@[^@\s]+$/.test(spec)) skipped.push(`${safeLine(spec)} (${file}): not <plugin>@<marketplace>`);
    else if (!isRecord(entry) || entry.enabled !== true) skipped.push(`${safeLine(spec)} (${file}): not enabled there`);
    else if (!plugins.has(spec)) plugins.set(spec, { spec, file });
  }
}

/** A Gemini CLI extension installed from git (or a GitHub release) is installed from its repository, at its ref. */
function geminiExtension(dir: string, meta: unknown, plugins: Map<string, PlannedPlugin>, skipped: string[]): void {
  const file = join(dir, '.gemini-extension-install.json');
  if (meta === undefined) return;
  if (!isRecord(meta) || !str(meta.source)) return void skipped.push(`${dir}: its .gemini-extension-install.json names no source`);
  const source = meta.source as string;
  const secret = credentialsIn(source);
  if (secret !== undefined) return void skipped.push(`${dir}: ${secret}`);
  if (meta.type === 'git' || meta.type === 'github-release') {
    const spec = str(meta.ref) ? `${source}#${meta.ref as string}` : source;
    plugins.set(spec, { spec, file });
  } else skipped.push(`${dir}: installed from a ${safeLine(String(meta.type))} folder (${safeLine(source)}); plinth reads a folder in its plugins folder as a plugin: copy it there`);
}
