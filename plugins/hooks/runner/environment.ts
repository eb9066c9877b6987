/**
 * A hook's environment: built from an allowlist of the host's variables, never
 * the host's whole environment (which holds API keys and tokens), plus the
 * names a user adds in the `env` setting and plinth's own `PLINTH_HOOK_*`.
 */
import type { HookDefinition } from '../types.js';

/** Host variables every hook gets, when the host has them. */
export const ENV_ALLOWLIST: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TERM',
  'TMPDIR',
  'TEMP',
  'TMP',
  'SYSTEMROOT',
  'COMSPEC',
  'PATHEXT',
];

export interface EnvironmentOptions {
  /** The host environment to pick from. */
  readonly host: NodeJS.ProcessEnv;
  /** Extra variable names from the `env` setting. */
  readonly extra: readonly string[];
  readonly workspace: string;
  /** Spawn mode: the event as the hook subscribed to it. Persistent processes serve every event and get none. */
  readonly event?: string;
  readonly persistent?: boolean;
}

/** The environment for one process of `hook`. */
export function hookEnvironment(hook: Pick<HookDefinition, 'id' | 'name'>, options: EnvironmentOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...ENV_ALLOWLIST, ...options.extra]) {
    const value = options.host[name];
    if (value !== undefined) env[name] = value;
  }
  env.PLINTH_HOOK_ID = hook.id;
  env.PLINTH_HOOK_NAME = hook.name;
  if (options.event !== undefined) env.PLINTH_HOOK_EVENT = options.event;
  if (options.persistent === true) env.PLINTH_HOOK_PERSISTENT = '1';
  env.PLINTH_WORKSPACE = options.workspace;
  return env;
}
