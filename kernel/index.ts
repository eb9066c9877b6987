/**
 * plinth: the kernel API for host applications. Plugin authors import `plinth/sdk`.
 *
 * @packageDocumentation
 * @module plinth
 */
export { Kernel, createKernel } from './kernel.js';
export type { BootOptions, BootReport, DeclaredCommand, InlinePlugin, KernelOptions, RegisteredCommand, ShutdownReport } from './kernel.js';
export { PlinthError, isPlinthError } from '../sdk/errors.js';
export type { ErrorCode } from '../sdk/errors.js';
export { KERNEL_API_VERSION } from '../sdk/version.js';
export type { Candidate, Exclusion, PluginSource, Request, Resolution } from './types.js';
export type { Decision, EventName, EventResult } from '../sdk/events.js';
export type { PluginStatus } from '../sdk/plugin.js';
export type { LifecycleHooks } from './lifecycle.js';
export type { ConfigFile, ConfigScope } from './config/load.js';
export type { LogLevel, LogSink } from '../internal/terminal/log.js';
