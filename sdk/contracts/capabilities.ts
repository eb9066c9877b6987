/**
 * The `capabilities` service: the check behind a plugin's in-process
 * capabilities (`ctx.fs`, `ctx.fetch`, `ctx.env`, `ctx.exec`, `ctx.mcp`).
 * The kernel asks it before each use; the sandbox plugin provides it (the
 * user's grants decide, and every refusal goes to the audit log). Without a
 * provider the kernel checks against what the plugin declares.
 *
 * These checks guard the doors plinth hands a plugin; they do not confine
 * the plugin's JavaScript, which runs in the host process and can import
 * `node:fs` itself. That is why a downloaded plugin's code is not loaded
 * before the user has approved it and its permissions.
 */
import type { PlinthError } from '../errors.js';
import type { PluginInfo } from '../plugin.js';
import type { Principal } from './sandbox.js';

/** One use of a capability, its target already resolved (a path is absolute and real). */
export type CapabilityRequest =
  | { readonly kind: 'filesystem'; readonly access: 'read' | 'write'; readonly path: string }
  | { readonly kind: 'network'; readonly host: string; readonly port: number }
  | { readonly kind: 'env'; readonly name: string }
  | { readonly kind: 'shell'; readonly program: string }
  | { readonly kind: 'mcp'; readonly server: string };

/** The folders a plugin's paths are relative to. */
export interface CapabilityPlaces {
  readonly workspace: string;
  /** The user's home folder (`${home}`). */
  readonly home: string;
  /** `PLINTH_HOME`. */
  readonly plinthHome: string;
  /** This plugin's private temporary folder (`${tmp}`). */
  readonly tmp: string;
}

/** The `capabilities` service: one check per use of `ctx.fs`, `ctx.fetch`, `ctx.env`, `ctx.exec` or `ctx.mcp`. */
export interface CapabilityCheck {
  /**
   * Undefined when `plugin` may do `request`; otherwise the refusal
   * (`PLN_E_PERM_DENIED`, or the grant decision's own code), already written
   * to the audit log.
   */
  check(plugin: PluginInfo, request: CapabilityRequest, places: CapabilityPlaces): Promise<PlinthError | undefined>;
  /**
   * The same check for a principal that is not a loaded plugin: a hook or server from settings
   * (`settings:user`, `settings:workspace`) doing in plinth's process what it declares (an `http`
   * hook's request, an `mcp_tool` hook's call). Optional: without it, such uses are held to what the
   * principal declares.
   */
  checkFor?(principal: Principal, request: CapabilityRequest, places: CapabilityPlaces): Promise<PlinthError | undefined>;
}

declare module '../index.js' {
  interface Services {
    /** Checks of plugins' in-process capabilities: see sdk/contracts/capabilities.ts. */
    capabilities: CapabilityCheck;
  }
}
