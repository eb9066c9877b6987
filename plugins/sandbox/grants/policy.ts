/**
 * The decision before every confined launch (and every in-process capability
 * check): what a principal may do, from where it came, `sandbox.default`, the
 * user's stored and session grants, and — when it wants more than it was
 * granted — the user's answer on the terminal. Without a terminal the answer
 * is no, and the error names the `plinth perms grant` command.
 */
import { readFile, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import { type ConfigLayerView, NO_PERMISSIONS, type GrantDecision, type GrantPolicy, type Permissions, PlinthError, type Principal } from 'plinth/sdk';
import { type PromptIO, processTerminal, whyNotAsk } from 'plinth/internal';
import { type GrantAnswer, askGrant } from './ask.js';
import { readDefaultMode } from './default-mode.js';
import { type PermissionItem, formatItem, itemsOf, keyedDeclared, plainEnv, widening, withItems, withoutItems } from './items.js';
import { WORKSPACE_SETTINGS, grantKey } from './principal.js';
import { GrantStore, type StoredGrant } from './store.js';

export interface GrantPolicyOptions {
  /** The user folder (`PLINTH_HOME`): where grants are stored and downloaded plugins live. */
  readonly home: string;
  /** The settings layers (`kernel.configLayers`), read at each decision for `sandbox.default`. Default: none (confined). */
  readonly configLayers?: () => readonly ConfigLayerView[];
  /** Where to ask. Default: the process's terminal (stdin, stderr). */
  readonly io?: () => PromptIO;
  /** For the CI check of `whyNotAsk`. Default: `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** A plugin's version, for the stored grant and the question. Default: its folder's manifest.json. */
  readonly versionOf?: (id: string) => string | undefined;
  /**
   * How long a launch waits for an answer before it is refused. Default
   * {@link GRANT_ANSWER_TIMEOUT_MS}. A host that asks while nobody watches its
   * terminal must not hang, nor hold every later question behind this one.
   */
  readonly answerTimeoutMs?: number;
}

/** Two minutes: long enough to read the question, short enough that a host left alone carries on. */
export const GRANT_ANSWER_TIMEOUT_MS = 120_000;

/** How a principal is judged, from its source. */
export type Standing =
  /** Shipped with plinth: its children run open; its in-process capabilities are what it declares. */
  | 'builtin'
  /** The user's own settings: what they declare is the user's own grant. */
  | 'user-settings'
  /** A plugin the user put in place (not downloaded): `sandbox.default` decides. */
  | 'user'
  /** Workspace plugins and settings, downloaded plugins: always confined, granted only by the user. */
  | 'untrusted';

/** Whether and how to ask: before a launch (once/session/always/no), after an enable/install/update (always/no), or not at all. */
type Asking = 'launch' | 'review' | 'none';

/** The `plinth perms grant` command that grants what `principal` declares. */
export function grantCommand(id: string, extra = ''): string {
  return `plinth perms grant ${id}${extra}`;
}

export interface ExtendedGrantPolicy extends GrantPolicy {
  /** Where the principal stands (a plugin installed by the marketplace counts as downloaded, whatever its folder source). */
  standing(principal: Principal): Promise<{ standing: Standing; source: Principal['source'] }>;
  /** What `decide` would answer now, without asking anyone: a principal that would be asked is refused with `PLN_E_PERM_NOT_GRANTED`. */
  explain(principal: Principal, need: { readonly osSandbox: boolean }): Promise<GrantDecision>;
  /** As `decide`, asked right after an enable, install or update: the question offers only "always" or no. */
  review(principal: Principal, signal?: AbortSignal): Promise<GrantDecision>;
  readonly store: GrantStore;
}

export function createGrantPolicy(options: GrantPolicyOptions): ExtendedGrantPolicy {
  const store = new GrantStore(options.home);
  const versionsDir = join(options.home, 'plugins', '.versions');
  // One question at a time: concurrent launches of one plugin wait for the one answer.
  let questions: Promise<unknown> = Promise.resolve();

  const downloaded = async (principal: Principal): Promise<boolean> => {
    if (principal.source === 'downloaded') return true;
    if (principal.dir === undefined || principal.source !== 'user') return false;
    // The marketplace installs into plugins/.versions/<name>@<version> and links plugins/<name> to it.
    const [real, root] = await Promise.all([realpath(principal.dir).catch(() => principal.dir!), realpath(versionsDir).catch(() => versionsDir)]);
    const rel = relative(root, real);
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  };

  const standing: ExtendedGrantPolicy['standing'] = async (principal) => {
    if (principal.id === 'settings:user') return { standing: 'user-settings', source: 'user' };
    if (principal.id === 'settings:workspace') return { standing: 'untrusted', source: 'workspace' };
    if (await downloaded(principal)) return { standing: 'untrusted', source: 'downloaded' };
    if (principal.source === 'builtin') return { standing: 'builtin', source: 'builtin' };
    if (principal.source === 'user' || principal.source === 'path') return { standing: 'user', source: principal.source };
    return { standing: 'untrusted', source: principal.source };
  };

  const versionOf = async (principal: Principal): Promise<string> => {
    if (principal.id.startsWith('settings:')) return 'settings';
    const given = options.versionOf?.(principal.id);
    if (given !== undefined) return given;
    if (principal.dir === undefined) return 'unknown';
    try {
      const manifest = JSON.parse(await readFile(join(principal.dir, 'manifest.json'), 'utf8')) as { version?: unknown };
      return typeof manifest.version === 'string' ? manifest.version : 'unknown';
    } catch {
      return 'unknown';
    }
  };

  const refused = (error: PlinthError): GrantDecision => ({ mode: 'refused', error });

  /** The stored grant (under its key, {@link grantKey}), and what it and this session's grant allow together. */
  const grantedSoFar = async (id: string, source: Principal['source']): Promise<{ stored: StoredGrant | undefined; have: Permissions }> => {
    // A grant given to a plugin from one place is not one for a plugin of the same name from another.
    const mine = <G extends { source?: string }>(grant: G | undefined): G | undefined => (grant?.source === undefined || grant.source === source ? grant : undefined);
    const stored = mine(await store.get(id));
    const session = mine(store.session(id));
    const base = stored?.permissions ?? NO_PERMISSIONS;
    return { stored, have: session ? withItems(base, itemsOf(session.permissions)) : base };
  };

  /** What `principal` may use now, asking when it wants more than was granted. */
  const granted = async (principal: Principal, source: Principal['source'], asking: Asking, signal?: AbortSignal): Promise<{ granted: Permissions } | { error: PlinthError }> => {
    // A workspace's settings are granted per workspace; their env items are keyed by where each value comes from.
    const key = grantKey(principal);
    const first = await grantedSoFar(key, source);
    // Items the user revoked one by one are left out, not asked for again.
    const wanted = withoutItems(keyedDeclared(principal), first.stored?.withheld ?? []);
    if (widening(first.have, wanted).length === 0) return { granted: plainEnv(wanted) };
    const version = await versionOf(principal);
    const previous = questions;
    let release!: () => void;
    questions = new Promise<void>((resolve) => (release = resolve));
    try {
      await previous;
      // Another launch may have been answered "session" or "always" while this one waited.
      const now = await grantedSoFar(key, source);
      const missing = widening(now.have, wanted);
      if (missing.length === 0) return { granted: plainEnv(wanted) };
      const io = (options.io ?? processTerminal)();
      const why = asking === 'none' ? 'only checking, not launching' : whyNotAsk(io, options.env ?? process.env);
      const who = principal.id === WORKSPACE_SETTINGS ? `${principal.label} (workspace ${principal.dir ?? 'unknown'})` : `${principal.label} (${source}, version ${version})`;
      if (why !== undefined) return { error: notGranted(principal, who, missing, why) };
      // A command's review waits for its person as any command does; a launch inside a host does not wait forever.
      const unanswered = asking === 'launch' ? AbortSignal.timeout(options.answerTimeoutMs ?? GRANT_ANSWER_TIMEOUT_MS) : undefined;
      const ask = unanswered && signal ? AbortSignal.any([signal, unanswered]) : (unanswered ?? signal);
      const answer: GrantAnswer = await askGrant({ who, items: missing, ...(now.stored && { grantedVersion: now.stored.version }), ...(asking === 'review' && { review: true }) }, io, ask);
      if (answer === 'no' && unanswered?.aborted === true) return { error: notAnswered(principal, who, missing, options.answerTimeoutMs ?? GRANT_ANSWER_TIMEOUT_MS) };
      if (answer === 'no') {
        return {
          error: new PlinthError('PLN_E_PERM_DECLINED', `${who} was not started: you declined ${missing.map(formatItem).join(', ')}`, {
            plugin: principal.id,
            hint: `to grant it later, run \`${grantMissingCommand(principal, missing)}\`; to run it without one permission, \`plinth perms revoke ${principal.id} <permission>\``,
            details: { plugin: principal.id, permissions: missing.map(formatItem) },
          }),
        };
      }
      if (answer === 'session') store.setSession(key, { version, permissions: wanted, source });
      if (answer === 'always') {
        await store.update(key, (current) => ({
          version,
          source,
          permissions: wanted, // exactly what was granted now: what it had before and no longer declares is not kept
          withheld: current?.withheld ?? [],
          ...(current?.unconfined && { unconfined: true }),
          grantedAt: new Date().toISOString(),
        }));
      }
      return { granted: plainEnv(wanted) };
    } finally {
      release();
    }
  };

  const judge = async (principal: Principal, need: { readonly osSandbox: boolean }, asking: Asking, signal?: AbortSignal): Promise<GrantDecision> => {
    const judged = await standing(principal);
    const mode = readDefaultMode(options.configLayers?.() ?? []);
    // Shipped with plinth: its code already runs in the host with the host's rights, and what its
    // children need (plinth's own node_modules) has no placeholder; its in-process capabilities
    // are still held to what it declares (see capabilities.ts).
    if (judged.standing === 'builtin') return { mode: 'open', reason: `${principal.label} is part of plinth (builtin)` };
    if ((judged.standing === 'user' || judged.standing === 'user-settings') && mode.mode === 'open') {
      return { mode: 'open', reason: `sandbox.default is "open" (${mode.from})` };
    }
    try {
      if (!need.osSandbox) {
        const stored = await store.get(grantKey(principal));
        if (stored?.unconfined && (stored.source === undefined || stored.source === judged.source)) return { mode: 'open', reason: `you allowed ${principal.id} to run unconfined (${grantCommand(principal.id, ' --unconfined')})` };
        return refused(noSandbox(principal, judged.standing));
      }
      if (judged.standing === 'user-settings') return { mode: 'confined', granted: principal.declared };
      const result = await granted(principal, judged.source, asking, signal);
      return 'error' in result ? refused(result.error) : { mode: 'confined', granted: result.granted };
    } catch (error) {
      // An unreadable grants file grants nothing: fail closed.
      if (error instanceof PlinthError) return refused(error);
      throw error;
    }
  };

  return {
    store,
    standing,
    decide: (principal, need) => judge(principal, need, 'launch'),
    explain: (principal, need) => judge(principal, need, 'none'),
    review: (principal, signal) => judge(principal, { osSandbox: true }, 'review', signal),
  };
}

/** The command that grants `missing` to `principal`: a plugin's grant is what its manifest declares; the settings' hooks and servers have no one manifest, so it names the items. */
function grantMissingCommand(principal: Principal, missing: readonly PermissionItem[]): string {
  return principal.id.startsWith('settings:') ? grantCommand(principal.id, ` ${missing.map((item) => shellQuote(formatItem(item))).join(' ')}`) : grantCommand(principal.id);
}

function notGranted(principal: Principal, who: string, missing: readonly PermissionItem[], why: string): PlinthError {
  const command = grantMissingCommand(principal, missing);
  return new PlinthError('PLN_E_PERM_NOT_GRANTED', `${who} was not started: it asks for permissions you have not granted (${missing.map(formatItem).join(', ')}), and plinth cannot ask (${why})`, {
    plugin: principal.id,
    hint: `review them with \`plinth perms list ${principal.id}\`, then grant them with \`${command}\``,
    details: { plugin: principal.id, permissions: missing.map(formatItem), command },
  });
}

function notAnswered(principal: Principal, who: string, missing: readonly PermissionItem[], timeoutMs: number): PlinthError {
  const command = grantMissingCommand(principal, missing);
  return new PlinthError('PLN_E_PERM_NOT_GRANTED', `${who} was not started: nobody answered the question about its permissions (${missing.map(formatItem).join(', ')}) within ${seconds(timeoutMs)}`, {
    plugin: principal.id,
    hint: `answer it when it is asked again at the next launch, or grant them now with \`${command}\` (plugins.sandbox.settings.answerTimeoutSeconds sets how long plinth waits)`,
    details: { plugin: principal.id, permissions: missing.map(formatItem), command, timeoutMs },
  });
}

function seconds(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 100) / 10} s`;
}

function noSandbox(principal: Principal, standing: Standing): PlinthError {
  const command = grantCommand(principal.id, ' --unconfined');
  const open = standing === 'user' || standing === 'user-settings' ? ', or set "sandbox": { "default": "open" } in your user settings' : '';
  return new PlinthError('PLN_E_PERM_NO_SANDBOX', `${principal.label} was not started: no OS sandbox is available on this machine, so its permissions cannot be enforced, and you have not allowed it to run unconfined`, {
    plugin: principal.id,
    hint: `\`plinth perms status\` says why there is no sandbox; to run exactly this plugin with your full rights anyway, run \`${command}\`${open}`,
    details: { plugin: principal.id, command },
  });
}

/** One shell word, single-quoted (a path may hold `${workspace}`, which a shell would expand). */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
