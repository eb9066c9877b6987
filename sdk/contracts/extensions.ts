/**
 * The `extensions` service's contract: the plugins a host has, whether each is
 * enabled and where that is decided, their declared settings and where each
 * value comes from, and linked folders under development. The builtin
 * `extensions` plugin provides it (and `plinth ext …` is built on it); the
 * marketplace uses it to enable what it installed. Every change is persisted in
 * a settings file and, in a running kernel, applied live through
 * `kernel.plugins` (its report is in `live`).
 */
import { z } from 'zod';

/** Which settings file a change goes to: `$PLINTH_HOME/settings.json` or `<workspace>/.plinth/settings.json`. */
export const extensionScopeSchema = z.enum(['user', 'workspace']);
/** Which settings file a change goes to: `user` or `workspace`. */
export type ExtensionScope = z.infer<typeof extensionScopeSchema>;

/** Where a plugin was found (`PluginSource`). */
export const pluginSourceSchema = z.enum(['builtin', 'user', 'workspace', 'path']);

/** A coded error as data (redacted): why a plugin is not running, or why a live change failed. */
export const extensionErrorSchema = z.object({
  code: z.string(),
  message: z.string(),
  hint: z.string().optional(),
  plugin: z.string().optional(),
});
/** A coded error as data (redacted): why a plugin is not running, or why a live change failed. */
export type ExtensionError = z.infer<typeof extensionErrorSchema>;

/** One plugin, as `plinth ext list --json` prints it. */
export const extensionSchema = z.object({
  name: z.string(),
  version: z.string(),
  source: pluginSourceSchema,
  /** Not switched off by `plugins.<name>.enabled: false` in the settings in force (a workspace's value only where it may set it). */
  enabled: z.boolean(),
  /** Where the `enabled` value that wins is set (`user settings`, `workspace settings`, `profile <name>`); absent when nothing sets it. */
  enabledFrom: z.string().optional(),
  /** Linked with `plinth ext link`: a folder under development, chosen over an installed plugin of the same name. */
  linked: z.boolean(),
  /** Its state in this kernel: active, lazy, loading, failed, skipped, excluded, stopped. */
  state: z.string(),
  dir: z.string(),
  description: z.string(),
  /** Why it is failed, skipped or excluded, and the fix. */
  error: extensionErrorSchema.optional(),
});
/** One plugin, as `plinth ext list --json` prints it. */
export type Extension = z.infer<typeof extensionSchema>;

/** Where a setting's value comes from, in the kernel's order: settings file (or the secret store it points to), environment, default. */
export const settingOriginSchema = z.enum(['user', 'workspace', 'secrets', 'env', 'default', 'unset']);
/** Where a setting's value comes from: a settings file, the secret store, the environment, the default, or nowhere. */
export type SettingOrigin = z.infer<typeof settingOriginSchema>;

/** One declared setting and its value as plinth resolves it; a sensitive value is never here, only `"[redacted]"`. */
export const settingViewSchema = z.object({
  name: z.string(),
  description: z.string(),
  type: z.enum(['string', 'number', 'boolean', 'object', 'array']),
  sensitive: z.boolean(),
  required: z.boolean(),
  /** `user`: only the user's settings (and the environment) may set it. */
  scope: z.enum(['any', 'user']),
  envVar: z.string().optional(),
  from: settingOriginSchema,
  /** The settings file the value is in (for `user`, `workspace` and `secrets`). */
  file: z.string().optional(),
  /** The value (`"[redacted]"` for a sensitive setting that has one); absent when unset. */
  value: z.unknown().optional(),
});
/** One declared setting and its resolved value (`"[redacted]"` for a sensitive one). */
export type SettingView = z.infer<typeof settingViewSchema>;

/** What a running kernel did with a change (`kernel.plugins`' report, errors as data). */
export const liveOutcomeSchema = z.object({
  added: z.array(z.string()),
  removed: z.array(z.string()),
  replaced: z.array(z.string()),
  failed: z.array(extensionErrorSchema),
});
/** What a running kernel did with a change: plugins added, replaced, removed, and failures as data. */
export type LiveOutcome = z.infer<typeof liveOutcomeSchema>;

/**
 * One command, agent, skill, output style or context file a peer plugin (a Claude Code or Codex
 * plugin, a Gemini CLI extension) offers its host. plinth runs none of them: it lists them, with
 * their files, so that a host which has slash commands, subagents, skills or context files can
 * offer them as the peer would.
 */
export const contributionSchema = z.object({
  /** The plugin that offers it. */
  plugin: z.string(),
  /** `command` (`commands/*.md`, Gemini's `commands/*.toml`), `agent` (`agents/*.md`), `skill` (`skills/<name>/SKILL.md`), `output-style` (`output-styles/*.md`), `context` (`CLAUDE.md`, `GEMINI.md`, `AGENTS.md`). */
  kind: z.enum(['command', 'agent', 'skill', 'output-style', 'context']),
  /** The peer's name for it: `review`, `ns:deploy` for `commands/ns/deploy.md`, a skill's name, `CLAUDE.md`. */
  name: z.string(),
  /** The file, absolute. */
  file: z.string(),
  /** The file relative to the plugin folder, `/`-separated. */
  path: z.string(),
  /** The `description` of its front matter (or of a Gemini command's TOML), when it has one. */
  description: z.string().optional(),
});
/** One command, agent, skill, output style or context file a peer plugin offers its host: see {@link ExtensionsService.contributions}. */
export type Contribution = z.infer<typeof contributionSchema>;

/** One plugin in detail, as `plinth ext info --json` prints it. */
export const extensionDetailsSchema = extensionSchema.extend({
  provides: z.array(z.string()),
  dependencies: z.record(z.string(), z.string()),
  /** Loaded plugins that depend on it, directly or not: they stop when it does. */
  dependents: z.array(z.string()),
  commands: z.array(z.string()),
  /** Events its manifest declares hooks for. */
  hooks: z.array(z.string()),
  /** MCP servers its manifest declares. */
  mcpServers: z.array(z.string()),
  settings: z.array(settingViewSchema),
  /**
   * For a Claude Code or Codex plugin or Gemini CLI extension folder: its format and manifest file, what of
   * it plinth does not honour (`ignored`: skills, agents, commands, themes, context files, …) and
   * what it reads differently (`notes`: a name made npm-style, settings named by their variable, …).
   */
  peer: z
    .object({
      format: z.enum(['claude', 'gemini', 'codex']),
      file: z.string(),
      ignored: z.array(z.object({ field: z.string(), reason: z.string() })),
      notes: z.array(z.object({ field: z.string(), reason: z.string() })),
    })
    .optional(),
  /** What a peer plugin offers its host beside hooks and servers (commands, agents, skills, output styles, context files); empty for a plinth plugin. */
  contributions: z.array(contributionSchema),
  /** Every version found of this name, the chosen one included, highest first. */
  candidates: z.array(z.object({ version: z.string(), source: pluginSourceSchema, dir: z.string(), linked: z.boolean() })),
});
/** One plugin in detail, as `plinth ext info --json` prints it. */
export type ExtensionDetails = z.infer<typeof extensionDetailsSchema>;

/** What `enable` and `disable` did. */
export const toggleResultSchema = z.object({
  name: z.string(),
  /** Enabled in the settings in force after the change. */
  enabled: z.boolean(),
  scope: extensionScopeSchema,
  file: z.string(),
  /** The file was rewritten (false when it already said so). */
  changed: z.boolean(),
  /** Loaded plugins that depend on it: they stop with it, and come back with it. */
  dependents: z.array(z.string()),
  /** Something the person should know: another file still decides, a guard stops guarding. */
  notes: z.array(z.string()),
  /** Set when the kernel applied it live. */
  live: liveOutcomeSchema.optional(),
});
/** What {@link ExtensionsService.enable} and {@link ExtensionsService.disable} did. */
export type ToggleResult = z.infer<typeof toggleResultSchema>;

/** What `configure` and `unset` did. */
export const configResultSchema = z.object({
  name: z.string(),
  setting: settingViewSchema,
  scope: extensionScopeSchema,
  file: z.string(),
  /** Where the value was written: the settings file itself, or the secret store (a sensitive setting; the file holds a reference). */
  stored: z.enum(['settings', 'secrets']),
  unset: z.boolean(),
});
/** What {@link ExtensionsService.configure} and {@link ExtensionsService.unset} did. */
export type ConfigResult = z.infer<typeof configResultSchema>;

/** A plugin version another one takes precedence over, or falls back to. */
export const pluginRefSchema = z.object({ name: z.string(), version: z.string(), source: pluginSourceSchema, dir: z.string() });
/** A plugin version another one takes precedence over, or falls back to. */
export type PluginRef = z.infer<typeof pluginRefSchema>;

/** What `link` did. */
export const linkResultSchema = z.object({
  name: z.string(),
  version: z.string(),
  dir: z.string(),
  file: z.string(),
  /** The link of the same name it replaced. */
  replacedLink: z.string().optional(),
  /** The plugin of the same name the link takes precedence over. */
  shadows: pluginRefSchema.optional(),
  live: liveOutcomeSchema.optional(),
});
/** What {@link ExtensionsService.link} did. */
export type LinkResult = z.infer<typeof linkResultSchema>;

/** What `unlink` did. */
export const unlinkResultSchema = z.object({
  name: z.string(),
  dir: z.string(),
  file: z.string(),
  /** The plugin of the same name that is used again. */
  fallback: pluginRefSchema.optional(),
  live: liveOutcomeSchema.optional(),
});
/** What {@link ExtensionsService.unlink} did. */
export type UnlinkResult = z.infer<typeof unlinkResultSchema>;

/** The `extensions` service. Every method rejects with a coded `PlinthError` (see docs/errors.md, `PLN_E_EXT_*`). */
export interface ExtensionsService {
  /** Every plugin the kernel found, chosen or not loaded, in resolution order. */
  list(): Promise<Extension[]>;
  /** One plugin in detail. Rejects with `PLN_E_PLUGIN_UNKNOWN`. */
  info(name: string): Promise<ExtensionDetails>;
  /** Clears `enabled: false` (user scope writes `true`), and starts it in a running kernel. */
  enable(name: string, options?: { scope?: ExtensionScope }): Promise<ToggleResult>;
  /** Writes `enabled: false` and stops it (and its dependents) in a running kernel. A workspace cannot disable a guard (`PLN_E_EXT_GUARD`). */
  disable(name: string, options?: { scope?: ExtensionScope }): Promise<ToggleResult>;
  /** Its declared settings and where each value comes from. */
  settings(name: string): Promise<SettingView[]>;
  /**
   * Sets a declared setting, checked against its declaration. A sensitive value
   * goes to the `secrets` service; the user's settings file holds a reference.
   */
  configure(name: string, setting: string, value: unknown, options?: { scope?: ExtensionScope }): Promise<ConfigResult>;
  /** Removes a setting's value from the scope's file (and a sensitive one from the secret store). */
  unset(name: string, setting: string, options?: { scope?: ExtensionScope }): Promise<ConfigResult>;
  /**
   * The commands, agents, skills, output styles and context files of the peer plugins found
   * (Claude Code and Codex plugins, Gemini CLI extensions), each with its file, in plugin order;
   * of one plugin when `name` is given (rejects with `PLN_E_PLUGIN_UNKNOWN` when there is none).
   * Only chosen, enabled plugins are listed: a host offers what is in force.
   */
  contributions(name?: string): Promise<Contribution[]>;
  /** The linked folders, as the user's settings list them (absolute). */
  links(): Promise<string[]>;
  /** Links a plugin folder under development (its manifest is checked first) and adds it to a running kernel. */
  link(dir: string): Promise<LinkResult>;
  /** Removes a link by plugin name (or folder) and falls back to the installed plugin of that name, if any. */
  unlink(nameOrDir: string): Promise<UnlinkResult>;
}

declare module '../index.js' {
  interface Services {
    extensions: ExtensionsService;
  }
}
