/**
 * The `capabilities` service: the kernel asks it before each use of a
 * plugin's `ctx.fs`, `ctx.fetch`, `ctx.env`, `ctx.exec` and `ctx.mcp`. The
 * grant policy decides what the plugin may use (asking the user when it wants
 * more than was granted); a use outside it is refused and written to the audit log.
 */
import { type CapabilityCheck, type GrantPolicy, type PlinthError } from 'plinth/sdk';
import { capabilityDenied, capabilityTarget, permits } from 'plinth/internal';
import { appendAudit } from '../audit.js';
import { principalOf } from './principal.js';

export interface CapabilityCheckOptions {
  /** `PLINTH_HOME`, where the audit log is. */
  readonly home: string;
  readonly policy: GrantPolicy;
}

export function createCapabilityCheck(options: CapabilityCheckOptions): CapabilityCheck {
  const refuse = async (plugin: string, request: Parameters<CapabilityCheck['check']>[1], error: PlinthError): Promise<PlinthError> => {
    await appendAudit(options.home, { plugin, permission: request.kind, target: capabilityTarget(request), reason: error.message });
    return error;
  };
  const checkFor: NonNullable<CapabilityCheck['checkFor']> = async (principal, request, places) => {
    // In-process checks need no OS sandbox: what the principal was granted is what it may use here.
    const decision = await options.policy.decide(principal, { osSandbox: true });
    if (decision.mode === 'refused') return refuse(principal.id, request, decision.error);
    // A builtin plugin's children run open, but its capabilities are held to what it declares.
    const builtin = decision.mode === 'open' && principal.source === 'builtin';
    if (decision.mode === 'open' && !builtin) return undefined;
    const granted = decision.mode === 'confined' ? decision.granted : principal.declared;
    if (await permits(granted, request, { ...places, ...(principal.dir && { pluginDir: principal.dir }) })) return undefined;
    return refuse(principal.id, request, capabilityDenied({ name: principal.id }, request.kind, capabilityTarget(request), builtin ? 'it does not declare it' : 'it was not granted'));
  };
  return {
    check: (plugin, request, places) => checkFor(principalOf(plugin), request, places),
    checkFor,
  };
}
