/**
 * The `grants` service (internal/contracts/grants.ts): a plugin reviewed right
 * after it was enabled, installed or updated — asked about on the terminal
 * then, rather than at its first launch.
 */
import type { PluginInfo } from 'plinth/sdk';
import type { GrantReview, GrantsService } from 'plinth/internal';
import { type ExtendedGrantPolicy, grantCommand } from './policy.js';
import { principalOf } from './principal.js';
import { grantDeclared } from './store.js';

export interface GrantsServiceOptions {
  readonly policy: ExtendedGrantPolicy;
  /** The plugin of that name as the kernel knows it now (resolved, or found and excluded). */
  readonly find: (name: string) => PluginInfo | undefined | Promise<PluginInfo | undefined>;
}

export function createGrantsService({ policy, find }: GrantsServiceOptions): GrantsService {
  return {
    async review(name, options = {}) {
      const plugin = await find(name);
      if (!plugin) return undefined;
      if (options.grant === true) {
        const { source } = await policy.standing(principalOf(plugin));
        await grantDeclared(policy.store, name, plugin.manifest.permissions, { version: plugin.version, source });
      }
      const decision = await policy.review(principalOf(plugin), options.signal);
      const command = grantCommand(name);
      const review = (state: GrantReview['state'], missing: readonly string[] = []): GrantReview => ({ plugin: name, state, missing, command });
      if (decision.mode === 'open') return review('open');
      if (decision.mode === 'confined') return { ...review('granted'), ...(options.grant === true && { grantedNow: true as const }) };
      const missing = decision.error.details?.permissions;
      const items = Array.isArray(missing) ? missing.map(String) : [];
      return review(decision.error.code === 'PLN_E_PERM_DECLINED' ? 'declined' : 'waiting', items);
    },
    async needs(principal) {
      const decision = await policy.explain(principal, { osSandbox: true });
      if (decision.mode !== 'refused' || decision.error.code !== 'PLN_E_PERM_NOT_GRANTED') return undefined;
      const { permissions, command } = decision.error.details ?? {};
      if (!Array.isArray(permissions) || typeof command !== 'string') return undefined;
      return { missing: permissions.map(String), command };
    },
  };
}
