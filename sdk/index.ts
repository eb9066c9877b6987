/**
 * plinth/sdk: the public API for plugin authors and for the authors of the
 * services plugins share (a transport, a secret store, a health check, …).
 *
 * Everything exported here is a promise kept across minor versions of the
 * kernel API ({@link KERNEL_API_VERSION}); nothing else in the package is.
 * Inside a plugin loaded by plinth, `plinth/sdk` is always the host's own
 * sdk module, whatever folder the plugin lives in. `docs/api/` holds the
 * report of this surface that review compares.
 *
 * @example
 * import { definePlugin } from 'plinth/sdk';
 *
 * export default definePlugin({
 *   setup(kernel, ctx) {
 *     kernel.on('before_tool', (context) => (context.tool === 'rm' ? { allow: false, message: 'no rm here' } : undefined));
 *     ctx.log.info('ready');
 *   },
 * });
 *
 * @packageDocumentation
 * @module plinth/sdk
 */

// The plugin and its view of the kernel.
export { definePlugin } from './plugin.js';
export type {
  ConfigLayerView,
  Disposer,
  KernelInspection,
  LivePlugins,
  LiveReport,
  Logger,
  PluginContext,
  PluginDefinition,
  PluginEnv,
  PluginFs,
  PluginHook,
  PluginHooks,
  PluginInfo,
  PluginKernel,
  PluginMcp,
  PluginSource,
  PluginState,
  PluginStatus,
  ReadyInfo,
  SettingsCheck,
  SettingsProblem,
  StatusBoard,
  StatusSection,
  TapOptions,
  Teardown,
} from './plugin.js';
export type { Candidate, Exclusion, Request, Resolution } from './resolution.js';
export { KERNEL_API_VERSION } from './version.js';

// Agent events and the decisions their handlers return.
export { EVENTS, EVENT_ALIASES, GATE_EVENTS, canonicalEvent, isGateEvent, mergeHostDirectives } from './events.js';
export type { BlockedBy, Decision, EventHandler, EventName, EventResult, HostDirectives } from './events.js';

// Errors: one class, stable codes.
export { PlinthError, describeError, isPlinthError } from './errors.js';
export type { ErrorCode, PlinthErrorOptions } from './errors.js';

// The manifest and a plugin's settings.
export { manifestSchema, parseManifest, settingSchema } from './manifest.js';
export type { Manifest, ManifestInput, ManifestIssue, PeerContribution, PeerOrigin, SettingDecl } from './manifest.js';
export { describeIssue, parseSettings, settingIssues } from './settings.js';
export type { SettingIssue } from './settings.js';

// Services: names, types, and the one helper for an optional one.
export { optionalService } from './services.js';
export type { ServiceName, ServiceSource, ServiceType } from './services.js';

/**
 * Typed services. A plugin that provides a service describes its type by
 * merging into this interface (declared here, in the module plugins import,
 * because TypeScript merges augmentations only into the declaring module):
 *
 * @example
 * declare module 'plinth/sdk' {
 *   interface Services {
 *     'weather': WeatherService;
 *   }
 * }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Services {}

// Commands a plugin adds to `plinth`.
export { EXIT } from './commands.js';
export type { CommandInput, CommandOption, CommandOutput, CommandRegistry, CommandSpec } from './commands.js';

// The helpers an author really uses: safe output, atomic files, locks, watching.
export { formatTable, safeJson, safeLine, safeText } from './format.js';
export { withFileLock, writeFileAtomic } from './files.js';
export type { FileLockOptions, WriteFileAtomicOptions } from './files.js';
export { DEFAULT_WATCH_IGNORE, watchFiles } from './watch.js';
export type { FileChange, FileChangeKind, FileWatcher, WatchFilesOptions } from './watch.js';

// Service contracts (sdk/contracts/): each merges its service into `Services`.
export { BASE_ENV_ALLOWLIST, launchRequestSchema, launchRunRequestSchema } from './contracts/launcher.js';
export type { ChildEnd, ChildStopOptions, ExecRequest, LaunchedChild, Launcher, LaunchOptions, LaunchRequest, LaunchRequestInput, LaunchRunRequest, LaunchRunRequestInput, LaunchRunResult, LaunchTraceEntry } from './contracts/launcher.js';
export { NO_PERMISSIONS, permissionsSchema } from './contracts/sandbox.js';
export type { ConfinedSpawn, GrantDecision, GrantPolicy, PermissionKind, Permissions, PermissionsInput, Principal, Sandbox, SandboxAvailability, SpawnPlan } from './contracts/sandbox.js';
export type { CapabilityCheck, CapabilityPlaces, CapabilityRequest } from './contracts/capabilities.js';
export type { CheckOptions, PinnedFile, TrustRun, TrustService, TrustSource, TrustSubject, TrustVerdict } from './contracts/trust.js';
export type { KeychainAvailability, SecretBackendName, SecretStore } from './contracts/secrets.js';
export { MCP_MODERN_REVISIONS, mcpServerEntrySchema } from './contracts/mcp-server.js';
export type { McpModernRevision, McpProtocolSetting, McpServerConfig, McpServerDefinition, McpServerEntry } from './contracts/mcp-server.js';
export type { TransportConnection, TransportContext, TransportFactory } from './contracts/transport.js';
export { remoteRequestInit, remoteServerUrl } from './remote-transport.js';
export { fetchWithOwnSignals } from './request-signals.js';
export type {
  CallOptions,
  CompactTool,
  ElicitationContent,
  ElicitationHandler,
  InputRequiredAnswer,
  McpService,
  McpTool,
  RootsHandler,
  SamplingHandler,
  ServerLogMessage,
  ServerState,
  ServerStatus,
  StartOptions,
  ToolCallResult,
  ToolSearchHit,
  ToolSearchOptions,
} from './contracts/mcp.js';
export type { ModelAgentRequest, ModelRequest, ModelService } from './contracts/model.js';
export type { HealthChange, HealthService, HealthState, ServerHealth } from './contracts/health.js';
export type { AskAgentRequest, GlobalRateCounts, HookAction, HookDefinition, HookFailure, HookOutcome, HookProgress, HookProtocol, HookRateCounts, HookSource, HooksService, PlanResult, RewakeRequest } from './contracts/hooks.js';
export type { AuthStatus, LoginOptions, LoginResult, LogoutResult, OAuthService, ProviderOptions, SignInChannel, SignInRequest } from './contracts/oauth.js';
export type { Gateway, GatewayEndpoint, GatewayHttpEndpoint, GatewayHttpOptions, GatewayService, GatewayToken } from './contracts/gateway.js';
export type { ConfigResult, Contribution, Extension, ExtensionDetails, ExtensionError, ExtensionScope, ExtensionsService, LinkResult, LiveOutcome, PluginRef, SettingOrigin, SettingView, ToggleResult, UnlinkResult } from './contracts/extensions.js';
export type {
  ApprovalRequest,
  Declarations,
  InstallOptions,
  InstallResult,
  KeyTrustRequest,
  LockEntry,
  LockSource,
  LockFile,
  MarketChange,
  MarketNote,
  MarketplaceService,
  OutdatedEntry,
  OutdatedResult,
  RegistrySetting,
  RevokedEntry,
  SearchHit,
  SearchOptions,
  SearchResult,
  UncheckedEntry,
  UninstallResult,
  VerifyEntry,
  VerifyResult,
} from './contracts/marketplace.js';
