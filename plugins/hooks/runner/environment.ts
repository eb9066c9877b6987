/**
 * A hook's environment, as declared to the launcher: the launcher's allowlist
 * of host variables (never the host's whole environment, which holds API keys
 * and tokens), the names a user adds in the `env` setting, for a plugin's own
 * hook that plugin's declared settings (`kernel.settingsEnv`), plinth's
 * own `PLINTH_HOOK_*` values, and for a peer-dialect hook the peer's variables.
 */
import type { HookDefinition } from '../types.js';

export interface EnvironmentOptions {
  /** Extra variable names from the `env` setting. */
  readonly extra: readonly string[];
  readonly workspace: string;
  /** Spawn mode: the event as the hook subscribed to it. Persistent processes serve every event and get none. */
  readonly event?: string;
  readonly persistent?: boolean;
  /** A manifest hook's plugin settings as variables (`envVar` → value); plinth's own values win over them. */
  readonly settings?: Readonly<Record<string, string>>;
}

/** What one process of `hook` declares: host names to pass on (`passEnv`) and plinth's values (`env`). */
export function hookEnvironment(
  hook: Pick<HookDefinition, 'id' | 'name' | 'protocol' | 'pluginRoot'>,
  options: EnvironmentOptions,
): { readonly passEnv: readonly string[]; readonly env: Record<string, string> } {
  const env: Record<string, string> = { ...options.settings };
  env.PLINTH_HOOK_ID = hook.id;
  env.PLINTH_HOOK_NAME = hook.name;
  if (options.event !== undefined) env.PLINTH_HOOK_EVENT = options.event;
  if (options.persistent === true) env.PLINTH_HOOK_PERSISTENT = '1';
  env.PLINTH_WORKSPACE = options.workspace;
  Object.assign(env, peerVariables(hook, options.workspace));
  return { passEnv: options.extra, env };
}

/**
 * The variables a peer's hooks read: `CLAUDE_PROJECT_DIR` (Gemini CLI sets it too, for Claude
 * Code's scripts), `GEMINI_PROJECT_DIR` and `GEMINI_CWD`, and `CLAUDE_PLUGIN_ROOT` for a plugin's hook.
 */
export function peerVariables(hook: Pick<HookDefinition, 'protocol' | 'pluginRoot'>, workspace: string): Record<string, string> {
  if (hook.protocol !== 'claude' && hook.protocol !== 'gemini') return {};
  const env: Record<string, string> = { CLAUDE_PROJECT_DIR: workspace };
  if (hook.protocol === 'gemini') {
    env.GEMINI_PROJECT_DIR = workspace;
    env.GEMINI_CWD = workspace;
  }
  if (hook.protocol === 'claude' && hook.pluginRoot !== undefined) env.CLAUDE_PLUGIN_ROOT = hook.pluginRoot;
  return env;
}
