/**
 * The `sandbox` service's contract: what a plugin (or a hook or MCP server
 * from settings) declares it needs, whom a child process acts for, what the
 * grants side decides, and how the launcher asks for a confined launch.
 *
 * Two halves, one plugin (`plugins/sandbox/`): the enforcement (bubblewrap,
 * the network proxy, the reduced environment) and the decision (stored
 * grants, prompts, `plinth perms`). The launcher hands every launch whose
 * request names `actingFor` to this service when it exists; a launch whose
 * principal cannot be decided or confined is refused, never started open.
 */
import { z } from 'zod';
import type { PlinthError } from '../errors.js';
import type { PluginSource } from '../plugin.js';

/** A host: a DNS name, `*.name` (subdomains only, never `name` itself), an IPv4 literal or a bracketed IPv6 one. */
const HOST = /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$|^\[[0-9a-f:.]+\]$/;

/**
 * A network host pattern: `example.com`, `*.example.com` (subdomains only),
 * an IP literal (`127.0.0.1`, `[::1]`), each with an optional `:port`
 * (without one, any port). Lower case; no scheme, path or wildcard elsewhere.
 */
export const hostPattern = z
  .string()
  .min(1)
  .transform((value) => value.trim().toLowerCase())
  .refine((value) => {
    const match = /^(.*?)(?::(\d{1,5}))?$/.exec(value);
    if (match === null) return false;
    const [, host, port] = match;
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return false;
    return host !== undefined && host.length <= 253 && HOST.test(host);
  }, 'expected a host such as "api.example.com", "*.example.com" (subdomains only), "127.0.0.1" or "[::1]", optionally with ":port"; no scheme or path');

/** An environment variable name (exact; no prefix patterns: a plugin names what it reads). */
export const envVarName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name such as "GITHUB_TOKEN"');

/** A filesystem path: absolute, or starting with a placeholder `${workspace}`, `${home}`, `${pluginDir}` or `${tmp}`. */
export const fsPath = z
  .string()
  .min(1)
  .refine(
    (value) => value.startsWith('/') || /^\$\{(workspace|home|pluginDir|tmp)\}(?:\/|$)/.test(value),
    'expected an absolute path or one starting with ${workspace}, ${home}, ${pluginDir} or ${tmp}, e.g. "${workspace}/src"',
  )
  .refine((value) => !value.split('/').includes('..'), 'expected a path without ".." segments');

/** Declared permissions (manifest `permissions`, or a settings hook/server's `permissions`). */
export const permissionsSchema = z
  .object({
    filesystem: z.object({ read: z.array(fsPath).default([]), write: z.array(fsPath).default([]) }).strict().default({ read: [], write: [] }),
    network: z.object({ allow: z.array(hostPattern).default([]), deny: z.array(hostPattern).default([]) }).strict().default({ allow: [], deny: [] }),
    env: z.array(envVarName).default([]),
    shell: z.array(z.string().min(1)).default([]),
    mcp: z.array(z.string().min(1)).default([]),
  })
  .strict();
/** What a plugin, hook or MCP server declares it needs (files, network, environment, programs, MCP servers), defaults applied. */
export type Permissions = z.output<typeof permissionsSchema>;
/** {@link Permissions} as written in a manifest or settings file, every list optional. */
export type PermissionsInput = z.input<typeof permissionsSchema>;

/** Nothing declared: the plugin's own folder (read), a private temporary folder, no network. */
export const NO_PERMISSIONS: Permissions = Object.freeze({ filesystem: { read: [], write: [] }, network: { allow: [], deny: [] }, env: [], shell: [], mcp: [] });

/** The five kinds of permission, as named in grants, the audit log and errors. */
export type PermissionKind = 'filesystem' | 'network' | 'env' | 'shell' | 'mcp';

/** Whom a child process (or an in-process capability call) acts for. */
export interface Principal {
  /** Plugin name, or `settings:user` / `settings:workspace` for hooks and servers from settings. */
  readonly id: string;
  /** downloaded: installed by the marketplace. */
  readonly source: PluginSource | 'downloaded';
  /** The plugin's folder (`${pluginDir}`). */
  readonly dir?: string;
  readonly declared: Permissions;
  /** For messages: `hook "lint" of plugin "greeter"`. */
  readonly label: string;
  /**
   * A settings hook or server only: where the value of each variable its
   * definition's `env` sets comes from, as written: the references the value
   * reads (`${env:AWS_SECRET_ACCESS_KEY}`, `${setting:plugin.name}`, several
   * in a row), or `""` for a value written out. A declared variable not listed
   * is the host's variable of that name. Grants of `env` are keyed by this
   * (`env API_TOKEN=${env:AWS_SECRET_ACCESS_KEY}`): a grant to pass the host's
   * `API_TOKEN` is not one to pass `AWS_SECRET_ACCESS_KEY` under that name, and a
   * changed reference is asked about again. Never a value.
   */
  readonly envFrom?: Readonly<Record<string, string>>;
}

/** What {@link Principal.envFrom} holds for one variable: references only, or `""`. */
export const ENV_SOURCE = /^(?:\$\{(?:env:[A-Za-z_][A-Za-z0-9_]*|setting:[^}\s]+)\})*$/;

/** The references a value written in a definition's `env` reads, in order and each once (`""` for a value written out): {@link Principal.envFrom}. */
export function envSourceOf(value: string): string {
  return [...new Set(value.match(/\$\{(?:env:[A-Za-z_][A-Za-z0-9_]*|setting:[^}\s]+)\}/g) ?? [])].join('');
}

/** The serialisable principal a launch request carries (`actingFor`). */
export const principalSchema = z.object({
  id: z.string().min(1),
  source: z.enum(['builtin', 'user', 'workspace', 'path', 'downloaded']),
  dir: z.string().optional(),
  declared: permissionsSchema,
  label: z.string().min(1),
  envFrom: z.record(z.string(), z.string().regex(ENV_SOURCE)).optional(),
});

/** What the grants side answers for a principal, before every confined launch. */
export type GrantDecision =
  /** Run inside the OS sandbox with these. */
  | { readonly mode: 'confined'; readonly granted: Permissions }
  /** Run unconfined (the user allowed exactly that). */
  | { readonly mode: 'open'; readonly reason: string }
  /** Do not start; the error says the fix. */
  | { readonly mode: 'refused'; readonly error: PlinthError };

/** The grants side of the sandbox: decides, per launch, what a principal may do (the user's grants over what it declared). */
export interface GrantPolicy {
  /** Decides for one launch; `need.osSandbox` says whether an OS sandbox is available to confine it. */
  decide(principal: Principal, need: { readonly osSandbox: boolean }): Promise<GrantDecision>;
}

/** Whether an OS sandbox can be used on this machine, found once by running it. */
export interface SandboxAvailability {
  readonly available: boolean;
  /** `bubblewrap` on Linux; absent when none. */
  readonly kind?: 'bubblewrap';
  /** The program that was probed (real path). */
  readonly program?: string;
  readonly version?: string;
  /** When not available: why, plainly (`bwrap was not found at …`, `user namespaces are disabled: …`), and what to do. */
  readonly reason?: string;
}

/** What the launcher would start, after resolution: the sandbox wraps it. */
export interface SpawnPlan {
  readonly file: string;
  readonly args: readonly string[];
  readonly argv0: string;
  readonly cwd: string;
  /** The environment the launcher built (allowlist, passEnv, declared values); the sandbox reduces it. */
  readonly env: Readonly<Record<string, string>>;
  /** The plugin the child belongs to (the launch request's `owner`). */
  readonly owner: string;
  readonly purpose?: string;
  /** The variable names the request itself asked for (`env` keys, `passEnv`): those left out are audited. */
  readonly requestedEnv?: readonly string[];
  /** The request's `ownEnv`: names among `env` whose values plinth set itself; a confined child keeps them. */
  readonly ownEnv?: readonly string[];
  /** The launcher's private copy of the approved files (the request's `pinned`), which the child runs from: readable, read-only. */
  readonly approvedCopy?: string;
}

/** A launch as the sandbox decided it: what to spawn instead, and what to release once the child is gone. */
export interface ConfinedSpawn {
  readonly mode: 'confined' | 'open';
  readonly file: string;
  readonly args: readonly string[];
  readonly argv0: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Called once when the child has ended (closes descriptors kept for it). */
  release(): void;
  /**
   * Confined only: given what the child wrote on stderr, a hint when it shows
   * the child failed on a path that exists on the host but that its sandbox
   * does not expose (ENOENT, "Cannot find module" of a script or of a
   * `node_modules` outside the grants): the path, and the permission to
   * declare and grant. Undefined when nothing is recognised.
   */
  explain?(output: string): string | undefined;
}

/**
 * The sandbox service. `confine` decides (GrantPolicy) and prepares a launch;
 * it throws a PlinthError (`PLN_E_SANDBOX_…`) when the launch must not run,
 * after writing the refusal to the audit log.
 */
export interface Sandbox {
  /** Whether an OS sandbox works on this machine (found once, then cached). */
  availability(): Promise<SandboxAvailability>;
  /** Decides and prepares one launch: the program, arguments and environment to spawn, confined or not. */
  confine(plan: SpawnPlan, principal: Principal): Promise<ConfinedSpawn>;
}

declare module '../index.js' {
  interface Services {
    /** Declared permissions enforced for child processes: see sdk/contracts/sandbox.ts. */
    sandbox: Sandbox;
  }
}
