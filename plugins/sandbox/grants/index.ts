/**
 * A FIRST GrantPolicy, REPLACED BY THE GRANTS BRANCH (fix/grants owns this
 * folder). Until then: what a principal declares is what it is granted,
 * confined, for the sources the issue confines by default (workspace and
 * downloaded); the user's own hooks and servers, builtin and linked plugins
 * run open, as before the sandbox (the grants side makes that the
 * `sandbox.default` setting). A principal that must be confined is refused
 * when no OS sandbox is available (fail closed). The grants side keeps the
 * export name `createGrantPolicy(options)`.
 */
import { type GrantDecision, type GrantPolicy, PlinthError, type Principal } from 'plinth/sdk';

export interface GrantPolicyOptions {
  /** The user folder (`PLINTH_HOME`): where grants are stored. */
  readonly home: string;
  /** Sources confined whatever they declare (default: workspace, downloaded). */
  readonly confinedSources?: ReadonlyArray<Principal['source']>;
}

const CONFINED_BY_DEFAULT: ReadonlyArray<Principal['source']> = ['workspace', 'downloaded'];

export function createGrantPolicy(options: GrantPolicyOptions): GrantPolicy {
  const confined = options.confinedSources ?? CONFINED_BY_DEFAULT;
  return {
    async decide(principal: Principal, need: { readonly osSandbox: boolean }): Promise<GrantDecision> {
      if (!confined.includes(principal.source)) return { mode: 'open', reason: `${principal.source} sources run open by default` };
      if (!need.osSandbox) {
        return {
          mode: 'refused',
          error: new PlinthError('PLN_E_SANDBOX_UNAVAILABLE', `${principal.label} was not started: no OS sandbox is available on this machine, and it would run unconfined`, {
            plugin: principal.id,
            hint: 'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap socat) and check `plinth perms status`',
          }),
        };
      }
      return { mode: 'confined', granted: principal.declared };
    },
  };
}
