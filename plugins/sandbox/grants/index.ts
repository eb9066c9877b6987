/**
 * A FIRST GrantPolicy, REPLACED BY THE GRANTS BRANCH (fix/grants owns this
 * folder): what a principal declares is what it is granted, always confined;
 * without an OS sandbox the launch is refused (fail closed). The grants side
 * keeps the export name `createGrantPolicy(options)`.
 */
import { type GrantDecision, type GrantPolicy, PlinthError, type Principal } from 'plinth/sdk';

export interface GrantPolicyOptions {
  /** The user folder (`PLINTH_HOME`): where grants are stored. */
  readonly home: string;
}

export function createGrantPolicy(_options: GrantPolicyOptions): GrantPolicy {
  return {
    async decide(principal: Principal, need: { readonly osSandbox: boolean }): Promise<GrantDecision> {
      if (!need.osSandbox) {
        return {
          mode: 'refused',
          error: new PlinthError('PLN_E_SANDBOX_UNAVAILABLE', `${principal.label} was not started: no OS sandbox is available on this machine, and it would run unconfined`, {
            plugin: principal.id,
            hint: 'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and check `plinth perms status`',
          }),
        };
      }
      return { mode: 'confined', granted: principal.declared };
    },
  };
}
