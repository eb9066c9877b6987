/**
 * What a plugin's code sees: `definePlugin`, the kernel as a plugin sees it,
 * and the context handed to `setup`.
 */
import type { ExecRequest, LaunchOptions, LaunchRunResult } from './contracts/launcher.js';
import type { ToolCallResult } from './contracts/mcp.js';
import type { CommandRegistry } from './commands.js';
import type { Decision, EventHandler, EventName } from './events.js';
import type { PlinthError } from './errors.js';
import type { Manifest } from './manifest.js';
import type { Resolution } from './resolution.js';
import type { ServiceName, ServiceType } from './services.js';

/** Undoes one registration (a tap, a service, a command). Calling it twice is harmless. */
export type Disposer = () => void;

/** Returned by `setup` to release what the plugin holds; runs at shutdown, in reverse load order. */
export type Teardown = () => void | Promise<void>;

/** Where a plugin was found, lowest precedence first. */
export type PluginSource = 'builtin' | 'user' | 'workspace' | 'path';

/** A plugin's life in one kernel. */
export type PluginState =
  | 'lazy' // resolved, code not imported yet
  | 'loading'
  | 'active'
  | 'failed' // its own setup or import failed
  | 'skipped' // a dependency failed
  | 'excluded' // resolution left it out (disabled, missing dependency, …)
  | 'stopped';

/** What the kernel knows of one plugin, without its code. */
export interface PluginInfo {
  readonly name: string;
  readonly version: string;
  readonly source: PluginSource;
  /** Absolute path of the plugin folder (empty for plugins defined in memory). */
  readonly dir: string;
  readonly manifest: Manifest;
  /** A folder under development linked with `plinth ext link`: it takes precedence over an installed plugin of the same name. */
  readonly linked?: true;
}

/** Ordering of one tap among the others of its hook (tapable semantics). */
export interface TapOptions {
  /** Lower stages run first; default 0. */
  stage?: number;
  /** Run before the taps of these plugins. */
  before?: string | string[];
}

/** One kernel hook as a plugin sees it: every tap is named after the plugin that made it. */
export interface PluginHook<Args extends unknown[], Result = void> {
  /** Adds a handler, named after the plugin; the returned disposer removes it. */
  tap(handler: (...args: Args) => Result | Promise<Result>, options?: TapOptions): Disposer;
}

/** The outcome of boot, passed to `ready`. */
export interface ReadyInfo {
  readonly plugins: readonly PluginStatus[];
  /** Milliseconds from boot start to ready. */
  readonly durationMs: number;
}

/** One plugin's state, for status tables and `--json`. */
export interface PluginStatus {
  readonly name: string;
  readonly version: string;
  readonly source: PluginSource;
  readonly state: PluginState;
  /** Milliseconds spent importing and setting up, when it loaded. */
  readonly loadMs?: number;
  readonly provides: readonly string[];
  /** The plugin folder (empty for plugins defined in memory). */
  readonly dir: string;
  /** Linked with `plinth ext link`. */
  readonly linked?: true;
  /** Why it is failed, skipped or excluded, and what fixes it. */
  readonly error?: { code: string; message: string; hint?: string };
}

/** A section a plugin adds to `plinth up`'s status: a table for people, a value for `--json`. */
export interface StatusSection {
  /** Key of this section in `--json` output, e.g. `mcpServers`. */
  readonly key: string;
  readonly title: string;
  readonly head: readonly string[];
  readonly rows: ReadonlyArray<readonly string[]>;
  readonly json: unknown;
  /** One plain line shown instead of the title and table (a notice such as "no OS sandbox is available here"). */
  readonly line?: string;
}

/** Passed to taps of the `status` hook. */
export interface StatusBoard {
  /** Adds a section to the status `plinth up` prints. */
  add(section: StatusSection): void;
}

/**
 * A problem a plugin found in a section of the settings files it owns (a key its manifest lists in
 * `configKeys`): what `plinth config validate` reports besides the kernel's own checks.
 */
export interface SettingsProblem {
  /** A `PLN_E_…` code, e.g. `PLN_E_HOOK_INVALID`. */
  readonly code: string;
  /** What is wrong; names the file and the JSON path. */
  readonly message: string;
  /** What fixes it. */
  readonly hint?: string;
  /** The settings file it is in. */
  readonly file?: string;
  /** The JSON path in that file, e.g. `hooks.before_tool[0].command`. */
  readonly path?: string;
}

/** Passed to taps of the `validate` hook. */
export interface SettingsCheck {
  /** The settings files the kernel read, in merge order: report problems of these only (not of plugin manifests). */
  readonly files: readonly string[];
  /** Reports a problem; `plinth config validate` prints it and fails. */
  add(problem: SettingsProblem): void;
}

/** The kernel's lifecycle hooks, as plugins tap them. */
export interface PluginHooks {
  /** Before each plugin's code is imported; a tap returning a string refuses the plugin with that reason. */
  load: PluginHook<[PluginInfo], string | undefined | void>;
  /** Every eager plugin is set up. */
  ready: PluginHook<[ReadyInfo]>;
  /**
   * The host stays up (`plinth up`), as opposed to running one command: start
   * background work (watchers, servers) here and stop it in the teardown.
   */
  serve: PluginHook<[]>;
  /** `plinth up` prints the status: add a section (MCP servers and their health, say). */
  status: PluginHook<[StatusBoard]>;
  /** Shutdown begins; runs before any teardown. */
  shutdown: PluginHook<[]>;
  /**
   * Each resolved plugin's manifest, for plugins that own a declarative section
   * (`hooks`, `mcpServers`, …). A new tap first sees every plugin already known.
   */
  manifest: PluginHook<[PluginInfo]>;
  /**
   * A plugin left while the kernel runs (removed, disabled, or stopped because
   * a dependency left): drop what was started for its declarative sections
   * (its hooks, its MCP servers and their tools). A replacement is not a
   * departure: `manifest` then announces the new version under the same name,
   * and an owner swaps that plugin's entries in one step.
   */
  unload: PluginHook<[PluginInfo]>;
  /** Add CLI commands. Each must be declared in the plugin's manifest `commands`. */
  commands: PluginHook<[CommandRegistry]>;
  /**
   * `plinth config validate` (`validateSettings()`): check the sections of the settings files this
   * plugin owns (`configKeys`) as a run would read them, and add each problem. A lazy owner is set
   * up first; a tap that throws or does not answer is itself reported as a problem.
   */
  validate: PluginHook<[SettingsCheck]>;
}

/** The kernel as a plugin sees it. Registrations are named after the plugin and undone when it unloads. */
export interface PluginKernel {
  /** The kernel API version (what manifests' `kernel` ranges are checked against). */
  readonly apiVersion: string;
  readonly hooks: PluginHooks;
  /**
   * The merged settings (user, workspace, profile). Sections owned by plugins are
   * here untouched; other plugins' sensitive settings are redacted.
   */
  readonly config: Readonly<Record<string, unknown>>;
  /**
   * The same settings before merging, one layer per file (and per file's part of
   * the profile), in merge order: for plugins whose trust depends on which file a
   * section came from.
   */
  readonly configLayers: readonly ConfigLayerView[];
  /** Handle an agent event. Aliases such as `pre-tool-call` are accepted. */
  on(event: EventName | (string & {}), handler: EventHandler, options?: TapOptions): Disposer;
  /** Fire an agent event and get the combined decision of every handler. */
  emit(event: EventName | (string & {}), context?: Record<string, unknown>): Promise<Decision>;
  /** Provide a service declared in this plugin's manifest `provides`. */
  provide<K extends ServiceName>(name: K, implementation: ServiceType<K>): Disposer;
  /** Get a service, importing a lazy provider first when needed. */
  get<K extends ServiceName>(name: K): Promise<ServiceType<K>>;
  /** Every plugin's state; for tools that inspect the kernel. */
  status(): readonly PluginStatus[];
  /** `text` with every sensitive setting value masked: for whatever a plugin writes besides its log (files, traces). */
  redact(text: string): string;
  /** What the kernel found, decided and read, with sensitive values redacted: for inspection tools. */
  inspect(): KernelInspection;
  /**
   * The problems the plugins owning settings sections (`configKeys`) find in them, through the
   * `validate` hook (owners that failed to start are problems too), redacted: for `config validate`.
   */
  validateSettings(): Promise<readonly SettingsProblem[]>;
  /**
   * The declared settings of `plugin` that name an `envVar`, as that
   * environment (sensitive values included, unredacted): what the processes
   * started for that plugin's declarations (its hooks, its stdio MCP servers)
   * receive on top of the launcher's allowlist, and nothing else of the host's.
   * Empty for a plugin that is not running or declares none.
   */
  settingsEnv(plugin: string): Readonly<Record<string, string>>;
  /** Adds, removes and replaces plugins while the kernel runs. */
  readonly plugins: LivePlugins;
}

/**
 * The kernel's live lifecycle. Every change re-runs resolution over what
 * changed; a plugin that goes takes its dependents with it (named in the
 * report), and they come back when it does. A replacement is validated and set
 * up (manifest, resolution, a fresh import, setup) before the old version is
 * torn down; if it fails anywhere, the old version keeps running and the
 * failure is in `failed` with its code. Changes are applied one at a time.
 */
export interface LivePlugins {
  /** Adds the plugin in `dir` (a folder holding manifest.json); eager plugins are set up at once. */
  add(dir: string, options?: { source?: PluginSource; linked?: boolean }): Promise<LiveReport>;
  /** Removes a plugin (and first its dependents); its registrations are undone and its teardown runs. */
  remove(name: string): Promise<LiveReport>;
  /** Re-reads the plugin's folder (or `dir`) and re-imports its code fresh, then swaps it in. */
  replace(name: string, dir?: string): Promise<LiveReport>;
  /** Stops a plugin for this kernel's life, as `enabled: false` in settings would (persisting is the caller's job). */
  disable(name: string): Promise<LiveReport>;
  /** Undoes `disable` (or a settings `enabled: false`) for this kernel's life and starts the plugin. */
  enable(name: string): Promise<LiveReport>;
  /** Reads every plugin folder again and applies the differences: new, gone and changed plugins. */
  rescan(): Promise<LiveReport>;
  /** The folders plugins are discovered in, with their source: what a watcher watches. */
  folders(): ReadonlyArray<{ readonly dir: string; readonly source: PluginSource; readonly linked?: true }>;
}

/** What one live change did. */
export interface LiveReport {
  /** Plugins that started: added, enabled, or back because what they depend on is back. */
  readonly added: readonly string[];
  /** Plugins that stopped, their dependents included. */
  readonly removed: readonly string[];
  /** Plugins now running a new version (or their folder re-read). */
  readonly replaced: readonly string[];
  /** What could not be applied, with its code; a plugin whose replacement failed keeps its previous version. */
  readonly failed: readonly PlinthError[];
}

/**
 * The kernel's view of itself, as data: what it found, decided and read. The
 * `inspect` plugin turns it into `plinth plugins list|why` and `plinth config show|validate`.
 */
export interface KernelInspection {
  readonly plugins: readonly PluginStatus[];
  /** What resolution decided: every candidate found (chosen or not), the load order, and why each other one does not load. */
  readonly resolution: Resolution;
  /** Manifests that could not be read or validated, redacted. */
  readonly invalid: ReadonlyArray<{ code: string; message: string }>;
  readonly config: {
    readonly files: ReadonlyArray<{ scope: string; file: string; exists: boolean }>;
    readonly profile: string | undefined;
    /** The merged settings, the values of settings plugins declare sensitive replaced by "[redacted]" (what `kernel.config` holds). */
    readonly settings: Readonly<Record<string, unknown>>;
    /**
     * What is wrong in the settings files, as coded errors (redacted): values a workspace may not set
     * and unknown keys (their `details` name the `file` and the JSON `path`), then plugin settings that
     * fail their declarations (`details.setting`, `details.path`).
     */
    readonly problems: readonly PlinthError[];
  };
}

/** One settings file's own settings, as `configLayers` lists them. */
export interface ConfigLayerView {
  readonly scope: 'user' | 'workspace';
  readonly file: string;
  /** Set when this layer is the file's part of the selected profile. */
  readonly profile?: string;
  readonly settings: Readonly<Record<string, unknown>>;
}

/** A structured logger; messages are redacted of sensitive values before they are written. */
export interface Logger {
  /** Detail for `PLINTH_LOG=debug`; hidden by default. */
  debug(message: string, data?: Record<string, unknown>): void;
  /** What happened, for `PLINTH_LOG=info`. */
  info(message: string, data?: Record<string, unknown>): void;
  /** Something the user should know about; shown by default. */
  warn(message: string, data?: Record<string, unknown>): void;
  /** A failure; shown by default. `data` is redacted like the message. */
  error(message: string, data?: Record<string, unknown>): void;
}

/** What `setup` receives besides the kernel. */
export interface PluginContext extends PluginInfo {
  /** This plugin's settings: declared defaults, environment variables and user values, validated. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** A logger whose lines name this plugin. */
  readonly log: Logger;
  /** The user folder (`PLINTH_HOME`) and the workspace root. */
  readonly paths: { readonly home: string; readonly workspace: string };
  /** Aborted when the kernel gives up on this plugin (setup timeout) or shuts down. */
  readonly signal: AbortSignal;
  /**
   * Runs a command of this plugin's own through the `launcher` service, named
   * as this plugin in its trace: allowlisted environment plus `env`/`passEnv`,
   * its own process group, output captured up to `maxOutputBytes`, the whole
   * tree killed at `timeoutMs`, when `options.signal` aborts, or when this
   * plugin is torn down. Throws `PLN_E_LAUNCH_*` errors (see sdk/contracts/launcher.ts).
   */
  exec(request: ExecRequest, options?: LaunchOptions): Promise<LaunchRunResult>;
  /**
   * Files, checked against this plugin's granted `filesystem` permissions (paths after
   * their links are resolved; its own folder is readable, `tmp` read/write).
   * A refusal throws `PLN_E_PERM_DENIED` and is written to the audit log.
   */
  readonly fs: PluginFs;
  /** `fetch`, checked against the granted `network` hosts (deny wins over allow), each redirect too. */
  fetch(input: string | URL, init?: RequestInit): Promise<Response>;
  /** The host's environment variables this plugin was granted (`env`). */
  readonly env: PluginEnv;
  /** MCP servers this plugin was granted (`mcp`), through the `mcp` service. */
  readonly mcp: PluginMcp;
}

/**
 * A plugin's checked file access. Not a confinement: code in the host process
 * can import `node:fs` itself; see sdk/contracts/capabilities.ts.
 */
export interface PluginFs {
  /** Reads a file the plugin's `filesystem.read` grants cover; `PLN_E_PERM_DENIED` otherwise. */
  readFile(path: string): Promise<Uint8Array>;
  /** Reads a granted file as UTF-8 text. */
  readFile(path: string, encoding: 'utf8'): Promise<string>;
  /** Replaces the file atomically. */
  writeFile(path: string, data: string | Uint8Array): Promise<void>;
  /** The names in a granted folder. */
  readdir(path: string): Promise<string[]>;
  /** Creates a folder (and its parents) where `filesystem.write` is granted. */
  mkdir(path: string): Promise<void>;
  /** The plugin's private temporary folder (`${tmp}`), created on first use. */
  readonly tmp: string;
}

/** A plugin's checked environment. */
export interface PluginEnv {
  /** The variable's value (undefined when unset); throws `PLN_E_PERM_DENIED` for a name not granted. */
  get(name: string): Promise<string | undefined>;
}

/** A plugin's checked MCP access. */
export interface PluginMcp {
  /** Calls a tool of an MCP server the plugin's `mcp` permissions name. */
  callTool(server: string, tool: string, args?: Readonly<Record<string, unknown>>): Promise<ToolCallResult>;
  /** Reads a resource of a granted MCP server; `text` joins its text contents. */
  readResource(server: string, uri: string): Promise<{ contents: ReadonlyArray<Record<string, unknown>>; text: string }>;
}

/** A plugin's code: the default export of its `main` module. */
export interface PluginDefinition {
  /**
   * Called once, after every dependency is set up. Register hooks, event handlers,
   * services and commands here. May return a teardown.
   */
  setup(kernel: PluginKernel, context: PluginContext): void | Teardown | Promise<void | Teardown>;
}

/**
 * Declares a plugin. Identity at run time; it exists for the types.
 *
 * @example
 * export default definePlugin({
 *   setup(kernel, ctx) {
 *     return kernel.on('before_tool', (context) => {
 *       if (context.tool === 'rm') return { allow: false, message: 'not here' };
 *     });
 *   },
 * });
 */
export function definePlugin(definition: PluginDefinition): PluginDefinition {
  return definition;
}
