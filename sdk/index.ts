/**
 * plinth/sdk: what plugin authors import. Inside a plugin loaded by plinth,
 * this is always the host's own sdk.
 */
export { definePlugin } from './plugin.js';
export type {
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
  TapOptions,
  Teardown,
} from './plugin.js';
export { EVENTS, EVENT_ALIASES, canonicalEvent } from './events.js';
export type { BlockedBy, Decision, EventHandler, EventName, EventResult } from './events.js';
export { manifestSchema, parseManifest, settingSchema } from './manifest.js';
export type { Manifest, ManifestInput, ManifestIssue, SettingDecl } from './manifest.js';
export type { ServiceName, ServiceType, Services } from './services.js';
export { EXIT } from './commands.js';
export type { CommandInput, CommandOption, CommandOutput, CommandRegistry, CommandSpec } from './commands.js';
export { PlinthError, isPlinthError } from '../kernel/errors.js';
export type { ErrorCode } from '../kernel/errors.js';
export { createTestKernel } from './test-kernel.js';
export type { TestKernel, TestKernelOptions } from './test-kernel.js';
export { scaffoldPlugin } from './scaffold.js';
export type { ScaffoldOptions } from './scaffold.js';
