/**
 * plinth/sdk: what plugin authors import. Inside a plugin loaded by plinth,
 * this is always the host's own sdk.
 */
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
  PluginHook,
  PluginHooks,
  PluginInfo,
  PluginKernel,
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
export { EVENTS, EVENT_ALIASES, GATE_EVENTS, canonicalEvent, isGateEvent } from './events.js';
export type { BlockedBy, Decision, EventHandler, EventName, EventResult } from './events.js';
export { manifestSchema, parseManifest, peerOriginSchema, settingSchema } from './manifest.js';
export type { Manifest, ManifestInput, ManifestIssue, PeerOrigin, SettingDecl } from './manifest.js';
export { folderFiles, PEER_MANIFEST_FILES, readPeerFolder, UNVERSIONED } from './peer-manifest.js';
export type { PeerContext, PeerFiles, PeerManifest } from './peer-manifest.js';
export { optionalService } from './services.js';
export type { ServiceName, ServiceType } from './services.js';
export { describeIssue, parseSettings, settingIssues } from './settings.js';
export type { SettingIssue } from './settings.js';
export { isStoredSettingRef, storedSettingKey, storedSettingRef } from './stored-setting.js';
export type { StoredSettingRef } from './stored-setting.js';
export { parseJsonText } from './json.js';
export type { JsonTextError } from './json.js';

/**
 * Typed services. A plugin that provides a service describes its type by
 * merging into this interface (declared here, in the module plugins import,
 * because TypeScript merges augmentations only into the declaring module):
 *
 * @example
 * declare module 'plinth/sdk' {
 *   interface Services {
 *     'transport:stdio': TransportFactory;
 *   }
 * }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Services {}
export { EXIT } from './commands.js';
export { formatError, formatTable, safeJson, safeLine, safeText } from './format.js';
export { withFileLock, writeFileAtomic } from './files.js';
export type { FileLockOptions, WriteFileAtomicOptions } from './files.js';
export { editSettingsFile, readSettingsFile, settingsFileError } from './settings-file.js';
export type { SettingsData, SettingsEdit, SettingsFileOwner, SettingsFileRef } from './settings-file.js';
export { closestName } from './suggest.js';
export { globTest } from './globs.js';
export type { GlobOptions, GlobTest } from './globs.js';
export { DEFAULT_WATCH_IGNORE, MAX_WATCHED_FOLDERS, watchFiles } from './watch.js';
export type { FileChange, FileChangeKind, FileWatcher, WatchFilesOptions } from './watch.js';
export { askChoice, askYesNo, processTerminal, whyNotAsk } from './prompt.js';
export type { PromptIO } from './prompt.js';
export { packageRunnerOf, packageRunnerPermissions, withPackageRunner } from './package-runner.js';
export { capabilityDenied, capabilityTarget, commandAllowed, expandPath, hostRefusal, isIpLiteral, normalizeHost, parseHostPattern, pathWithin, permits, realTarget } from './permission-match.js';
export type { PathPlaceholders } from './permission-match.js';
export type { CommandInput, CommandOption, CommandOutput, CommandRegistry, CommandSpec } from './commands.js';
export { PlinthError, describeError, describeFileError, isPlinthError } from './errors.js';
export { REDACTED, Redactor, SECRET_NAME } from './redact.js';
export type { ErrorCode } from './errors.js';
// The sdk never imports the kernel: createTestKernel, which boots one, is `plinth/testing`.
export type { Candidate, Exclusion, Request, Resolution } from './resolution.js';
export { KERNEL_API_VERSION } from './version.js';
export { scaffoldPlugin } from './scaffold.js';
export type { ScaffoldOptions } from './scaffold.js';
export { WORKSPACE_PLACEHOLDER, entryFolder, expandWorkspace, isInside, pathOutside, workspaceWords } from './workspace-content.js';
export { TREE_MARK, descendantsOf, groupMembers, isAlive, killGroup, markedProcesses, pipeHolders, pipeNames, signalEach, trackGroup, trackMark, treeMarkValue, untrackGroup, untrackMark } from './process-tree.js';
// Service contracts (sdk/contracts/): each merges its service into `Services`; helpers for transports beside them.
export type { CheckOptions, TrustRun, TrustService, TrustSource, TrustSubject, TrustVerdict, PinnedFile } from './contracts/trust.js';
export { MCP_MODERN_REVISIONS, MCP_SERVER_NAME, MCP_TRANSPORT_NAME, mcpEntryTransport, mcpProtocolSchema, mcpServerEntrySchema } from './contracts/mcp-server.js';
export type { McpModernRevision, McpProtocolSetting, McpServerConfig, McpServerDefinition, McpServerEntry } from './contracts/mcp-server.js';
export type { TransportConnection, TransportContext, TransportFactory } from './contracts/transport.js';
export type { CallOptions, ElicitationContent, ElicitationHandler, McpService, McpTool, RootsHandler, SamplingHandler, ServerLogMessage, ServerState, ServerStatus, StartOptions, ToolCallResult } from './contracts/mcp.js';
export type { InputRequiredAnswer } from './contracts/mcp.js';
export type { HealthChange, HealthService, HealthState, ServerHealth } from './contracts/health.js';
export type { Gateway, GatewayEndpoint, GatewayHttpEndpoint, GatewayHttpOptions, GatewayService, GatewayToken } from './contracts/gateway.js';
export type { KeychainAvailability, SecretBackendName, SecretStore } from './contracts/secrets.js';
export {
  configResultSchema,
  extensionDetailsSchema,
  extensionErrorSchema,
  extensionSchema,
  extensionScopeSchema,
  linkResultSchema,
  liveOutcomeSchema,
  pluginRefSchema,
  pluginSourceSchema,
  settingOriginSchema,
  settingViewSchema,
  toggleResultSchema,
  unlinkResultSchema,
} from './contracts/extensions.js';
export type { ConfigResult, Extension, ExtensionDetails, ExtensionError, ExtensionScope, ExtensionsService, LinkResult, LiveOutcome, PluginRef, SettingOrigin, SettingView, ToggleResult, UnlinkResult } from './contracts/extensions.js';
export type { AuthStatus, LoginOptions, LoginResult, LogoutResult, OAuthService, ProviderOptions, SignInChannel, SignInRequest } from './contracts/oauth.js';
export type { AskAgentRequest, GlobalRateCounts, HookAction, HookDefinition, HookFailure, HookOutcome, HookProtocol, HookRateCounts, HookSource, HooksService, PlanResult } from './contracts/hooks.js';
export { CLAUDE_HOOK_EVENTS, GEMINI_HOOK_EVENTS, isPeerHookEvent, peerEventsOf, peerHookGaps, tagPeerHooks } from './peer-hooks.js';
export type { PeerHookGap, PeerProtocol } from './peer-hooks.js';
export { remoteRequestInit, remoteServerUrl } from './remote-transport.js';
export { fetchWithOwnSignals } from './request-signals.js';
export { BASE_ENV_ALLOWLIST, launchRequestSchema, launchRunRequestSchema } from './contracts/launcher.js';
export type { ChildEnd, ExecRequest, LaunchedChild, Launcher, LaunchOptions, LaunchRequest, LaunchRequestInput, LaunchTraceEntry, LaunchRunRequest, LaunchRunRequestInput, LaunchRunResult, ChildStopOptions } from './contracts/launcher.js';
export type { CapabilityCheck, CapabilityPlaces, CapabilityRequest } from './contracts/capabilities.js';
export { GRANT_OPTION, grantReviewLines } from './contracts/grants.js';
export type { GrantReview, GrantsService } from './contracts/grants.js';
export { changeSchema, declarationsSchema, installResultSchema, lockEntrySchema, lockFileSchema, marketNoteSchema, outdatedEntrySchema, outdatedResultSchema, registriesSettingSchema, registrySettingSchema, revokedEntrySchema, searchHitSchema, searchResultSchema, uncheckedEntrySchema, uninstallResultSchema, verifyEntrySchema, verifyResultSchema } from './contracts/marketplace.js';
export type { ApprovalRequest, Declarations, InstallOptions, InstallResult, KeyTrustRequest, LockEntry, LockFile, MarketChange, MarketNote, MarketplaceService, OutdatedEntry, OutdatedResult, RegistrySetting, RevokedEntry, SearchHit, SearchOptions, SearchResult, UncheckedEntry, UninstallResult, VerifyEntry, VerifyResult } from './contracts/marketplace.js';
export {
  ABBREVIATED_PACKUMENT_TYPE,
  REGISTRY_SEARCH_INDEX,
  SEARCH_TIER,
  abbreviatedPackumentSchema,
  abbreviatedVersionSchema,
  compareSearchResults,
  distSchema,
  distSignatureSchema,
  encodePackageName,
  integritySchema,
  latestVersion,
  packumentSchema,
  packumentFile,
  packumentUrl,
  packumentVersionSchema,
  prepareQuery,
  prepareSearchDoc,
  rankSearchObjects,
  registryRoot,
  resolveTarballUrl,
  searchObjectSchema,
  searchPackageSchema,
  searchPackageVersion,
  searchResponseSchema,
  searchScore,
  tarballFile,
  tarballUrlSchema,
} from './contracts/registry.js';
export type { AbbreviatedPackument, AbbreviatedVersion, Dist, DistSignature, Packument, PackumentVersion, PreparedQuery, PreparedSearchDoc, SearchFields, SearchObject, SearchPackage, SearchResponse } from './contracts/registry.js';
export { DEFAULT_REGISTRY_PATH, defaultRegistryFolder, plinthPackageFolder } from './default-registry.js';
export { REGISTRY_KEYS_PATH, checkDistSignatures, checkVersionSignatures, keyidOf, publicKeyOf, registryKeysSchema, verifySignature, versionMessage } from './contracts/registry-signatures.js';
export type { RegistryKeyEntry, RegistryKeys, SignatureVerdict } from './contracts/registry-signatures.js';
export {
  REGISTRY_INDEX_PATH,
  REGISTRY_REVOCATIONS_PATH,
  REGISTRY_ROTATIONS_PATH,
  canonicalJson,
  documentSigner,
  indexSignedSchema,
  packumentDigest,
  registryIndexSchema,
  revocationsBindingSchema,
  revocationsDigest,
  revocationsSchema,
  revokedVersionSchema,
  rotationSchema,
  rotationsSchema,
} from './contracts/registry-trust.js';
export type { IndexSigned, RegistryIndex, Revocations, RevocationsBinding, RevocationsSigned, RevokedVersion, Rotation, RotationSigned, Rotations } from './contracts/registry-trust.js';
export { INSTALLED_LOCK_FILE, INSTALLED_VERSIONS_DIR, checkTree, describeTreeCheck, hashFileHandle, hashTree, installedTreeSchema, installedVersionFolder, readInstalledLockText, realInstalledFolder, treeDigest } from './installed-tree.js';
export type { InstalledTree, TreeCheck, TreeFile } from './installed-tree.js';
export { ENV_SOURCE, NO_PERMISSIONS, envSourceOf, envVarName, fsPath, hostPattern, permissionsSchema, principalSchema } from './contracts/sandbox.js';
export type { ConfinedSpawn, GrantDecision, GrantPolicy, PermissionKind, Permissions, PermissionsInput, Principal, Sandbox, SandboxAvailability, SpawnPlan } from './contracts/sandbox.js';
