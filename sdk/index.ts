/**
 * plinth/sdk: what plugin authors import. Inside a plugin loaded by plinth,
 * this is always the host's own sdk.
 */
export { definePlugin } from './plugin.js';
export type {
  ConfigLayerView,
  ConfigProblem,
  Disposer,
  KernelInspection,
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
  StatusBoard,
  StatusSection,
  TapOptions,
  Teardown,
} from './plugin.js';
export { EVENTS, EVENT_ALIASES, GATE_EVENTS, canonicalEvent, isGateEvent } from './events.js';
export type { BlockedBy, Decision, EventHandler, EventName, EventResult } from './events.js';
export { manifestSchema, parseManifest, settingSchema } from './manifest.js';
export type { Manifest, ManifestInput, ManifestIssue, SettingDecl } from './manifest.js';
export type { ServiceName, ServiceType } from './services.js';
export { describeIssue, parseSettings, settingIssues } from './settings.js';
export type { SettingIssue } from './settings.js';
export type { CheckOptions, TrustRun, TrustService, TrustSource, TrustSubject, TrustVerdict } from './trust.js';

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
export { formatTable, safeJson, safeLine, safeText } from './format.js';
export { withFileLock, writeFileAtomic } from './files.js';
export type { FileLockOptions, WriteFileAtomicOptions } from './files.js';
export { closestName } from './suggest.js';
export { askYesNo, processTerminal, whyNotAsk } from './prompt.js';
export type { PromptIO } from './prompt.js';
export type { CommandInput, CommandOption, CommandOutput, CommandRegistry, CommandSpec } from './commands.js';
export { PlinthError, describeError, isPlinthError } from '../kernel/errors.js';
export { REDACTED, Redactor } from '../kernel/redact.js';
export type { ErrorCode } from '../kernel/errors.js';
export { createTestKernel } from './test-kernel.js';
export type { TestKernel, TestKernelOptions } from './test-kernel.js';
export { scaffoldPlugin } from './scaffold.js';
export type { ScaffoldOptions } from './scaffold.js';
export { OWN_GROUP_CHILD, descendantsOf, groupMembers, isAlive, killGroup, pipeHolders, pipeNames, signalEach, trackGroup, untrackGroup } from './process-tree.js';
export { BASE_ENV_ALLOWLIST, launchRequestSchema, launchRunRequestSchema } from './launcher.js';
export type { ChildEnd, ExecRequest, LaunchedChild, Launcher, LaunchOptions, LaunchRequest, LaunchRequestInput, LaunchTraceEntry, LaunchRunRequest, LaunchRunRequestInput, LaunchRunResult, ChildStopOptions } from './launcher.js';
