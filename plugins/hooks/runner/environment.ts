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
  /** The session this run belongs to, when the event has one (a peer hook's `GEMINI_SESSION_ID`). */
  readonly sessionId?: string;
  /** This run's extra variables: `own` kept as plinth's values, `vars` (a session's env file) like a plugin's settings. */
  readonly run?: { readonly own?: Readonly<Record<string, string>>; readonly vars?: Readonly<Record<string, string>> };
}

/** What one process of `hook` declares: host names to pass on (`passEnv`) and plinth's values (`env`). */
export function hookEnvironment(
  hook: Pick<HookDefinition, 'id' | 'name' | 'protocol' | 'pluginRoot'>,
  options: EnvironmentOptions,
): { readonly passEnv: readonly string[]; readonly env: Record<string, string>; readonly ownEnv: readonly string[] } {
  const own: Record<string, string> = { PLINTH_HOOK_ID: hook.id, PLINTH_HOOK_NAME: hook.name };
  if (options.event !== undefined) own.PLINTH_HOOK_EVENT = options.event;
  if (options.persistent === true) own.PLINTH_HOOK_PERSISTENT = '1';
  own.PLINTH_WORKSPACE = options.workspace;
  Object.assign(own, peerVariables(hook, options.workspace, options.sessionId), options.run?.own);
  // plinth's own values (not a plugin's settings): a confined hook keeps them without a grant.
  return { passEnv: options.extra, env: { ...options.settings, ...options.run?.vars, ...own }, ownEnv: Object.keys(own) };
}

/**
 * The variables a peer's hooks read: `CLAUDE_PROJECT_DIR` (Gemini CLI sets it too, for Claude
 * Code's scripts), `GEMINI_PROJECT_DIR`, `GEMINI_CWD` and, when the event has a session,
 * `GEMINI_SESSION_ID`, and `CLAUDE_PLUGIN_ROOT` for a plugin's hook; for a Codex CLI plugin's
 * hook `PLUGIN_ROOT` and `CLAUDE_PLUGIN_ROOT` (Codex sets no project variable).
 */
export function peerVariables(hook: Pick<HookDefinition, 'protocol' | 'pluginRoot'>, workspace: string, sessionId?: string): Record<string, string> {
  if (hook.protocol === 'codex') {
    // Codex CLI gives a plugin's hooks PLUGIN_ROOT, and CLAUDE_PLUGIN_ROOT for hooks written for Claude Code.
    return hook.pluginRoot === undefined ? {} : { PLUGIN_ROOT: hook.pluginRoot, CLAUDE_PLUGIN_ROOT: hook.pluginRoot };
  }
  if (hook.protocol !== 'claude' && hook.protocol !== 'gemini') return {};
  const env: Record<string, string> = { CLAUDE_PROJECT_DIR: workspace };
  if (hook.protocol === 'gemini') {
    env.GEMINI_PROJECT_DIR = workspace;
    env.GEMINI_CWD = workspace;
    if (sessionId !== undefined && sessionId !== '') env.GEMINI_SESSION_ID = sessionId;
  }
  if (hook.protocol === 'claude' && hook.pluginRoot !== undefined) env.CLAUDE_PLUGIN_ROOT = hook.pluginRoot;
  return env;
}
