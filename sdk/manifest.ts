/**
 * The plugin manifest: the one definition of a plugin. The kernel checks it
 * before any of the plugin's code runs.
 */
import semver from 'semver';
import { z } from 'zod';
import { permissionsSchema } from './contracts/sandbox.js';
import { PlinthError } from './errors.js';
import { safeLine } from './format.js';
import { KERNEL_API_VERSION } from './version.js';

const NPM_NAME = /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;

/**
 * Messages that say what to write: "missing: add …" for an absent field,
 * "expected …" for a wrong one (zod's own "expected string, received
 * undefined" names neither the field's meaning nor an example).
 */
const says = (what: string) => ({ error: (issue: { input?: unknown }) => (issue.input === undefined ? `missing: add ${what}` : `expected ${what}`) });

/** An npm-style package name. */
export const pluginName = z
  .string(says('an npm-style name, e.g. "my-plugin" or "@scope/my-plugin"'))
  .max(214)
  .regex(NPM_NAME, 'expected an npm-style name: lowercase letters, digits, "-", "." or "_", optionally @scope/name');

const version = z.string(says('a semver version, e.g. "version": "1.0.0"')).refine((v) => semver.valid(v) !== null, 'expected a semver version such as "1.2.3"');
const range = z.string(says('a semver range, e.g. "^1.0.0"')).refine((r) => semver.validRange(r) !== null, 'expected a semver range such as "^1.0.0"');

/** One setting a plugin declares; users set it under `plugins.<name>.settings.<setting>`. */
export const settingSchema = z.object({
  name: z.string().min(1),
  description: z.string().optional(),
  type: z.enum(['string', 'number', 'boolean', 'object', 'array']).default('string'),
  default: z.unknown().optional(),
  required: z.boolean().default(false),
  /** Redacted in every log, error and `--json` output. */
  sensitive: z.boolean().default(false),
  /** Environment variable that supplies the value when settings do not. */
  envVar: z.string().optional(),
  /**
   * Who may set it. `user`: only the user's settings file (and its profiles)
   * and the environment; a workspace file's value is ignored with
   * `PLN_E_WORKSPACE_SETTING_IGNORED`. Mark every setting that names a module,
   * program or path plinth loads or runs, or that loosens a guard (a time or
   * rate limit, a command allowlist, where secrets are kept): a cloned
   * repository must not choose them. `any` (the default): either file.
   */
  scope: z.enum(['any', 'user']).default('any'),
});

/** A CLI command a plugin contributes, declared so that `--help` needs no plugin code. */
export const commandDeclSchema = z.object({
  summary: z.string().min(1),
  usage: z.string().optional(),
  /**
   * Runs with only its own plugin (and that plugin's dependencies) set up, not
   * after booting every plugin: for commands that judge or manage other plugins
   * without running them (`plinth trust approve plugin <name>` must not load,
   * or be refused loading, the plugin it approves). Honoured for builtin plugins only.
   */
  standalone: z.boolean().optional(),
  /**
   * `"own"`: the kernel boots with only this command's plugin, its dependencies
   * and the guards set up; every other eager plugin waits, as a lazy one does,
   * until its service is asked for, an event it declares fires, or a live change
   * replaces it. For commands that change plugins without needing the others
   * running (`plinth ext install`). Default (`"all"`): every eager plugin is set up.
   */
  boot: z.enum(['all', 'own']).optional(),
});

/** One thing a peer's manifest says that plinth does not do, or does differently: shown by `plinth ext info`. */
export const peerFieldSchema = z.object({
  /** Where in the peer's folder: `skills`, `commands/`, `mcpServers.db.trust`, `excludeTools[1]`. */
  field: z.string(),
  reason: z.string(),
});

/**
 * Where a peer's MCP server was written and how, so that a problem with it names the file the
 * author wrote (a Claude plugin's `.mcp.json`, not its `plugin.json`) and quotes it as written.
 */
export const peerServerSchema = z.object({
  /** The file, relative to the folder and `/`-separated: `.mcp.json`, `.claude-plugin/plugin.json`, `gemini-extension.json`. */
  file: z.string(),
  /** The JSON path, in that file, of the map that holds the server's entry: `mcpServers`, or `''` for a file that is the map itself. */
  at: z.string(),
  /** Each plinth reference the translation wrote in the entry's `env` and `headers`, with the peer's spelling it stands for (`"${env:TOKEN}": "${TOKEN}"`). */
  references: z.record(z.string(), z.string()).default({}),
});

/**
 * One thing a peer's folder offers its host beside hooks and servers: a slash command
 * (`commands/*.md`, a Gemini `commands/*.toml`), a subagent (`agents/*.md`), a skill
 * (`skills/<name>/SKILL.md`), an output style (`output-styles/*.md`) or a context file
 * (`CLAUDE.md`, `GEMINI.md`, `AGENTS.md`). plinth runs none of them; it lists them so that a
 * host which has these concepts can offer them (the `extensions` service's `contributions`).
 */
export const peerContributionSchema = z.object({
  kind: z.enum(['command', 'agent', 'skill', 'output-style', 'context']),
  /** The name the peer gives it: the file's name without `.md` (a command in a subfolder `ns/name` is `ns:name`), a skill's folder or front-matter `name`, a context file's name. */
  name: z.string(),
  /** The file, relative to the plugin folder and `/`-separated: `commands/review.md`, `skills/pdf/SKILL.md`, `CLAUDE.md`. */
  path: z.string(),
  /** The `description` of its front matter (a Gemini command's TOML), when it has one. */
  description: z.string().optional(),
});

/** One command, agent, skill, output style or context file of a peer's folder: see {@link peerContributionSchema}. */
export type PeerContribution = z.infer<typeof peerContributionSchema>;

/**
 * Set by plinth (internal/peer/manifest.ts) on the manifest it makes from a Claude Code
 * plugin folder (`.claude-plugin/plugin.json`, or the standard layout alone), a Codex plugin
 * folder (`.codex-plugin/plugin.json`) or a Gemini CLI extension folder
 * (`gemini-extension.json`): which dialect its `hooks` speak, the file it came
 * from, what of the peer's folder plinth leaves out (`ignored`) or reads
 * differently (`notes`), so that nothing is dropped silently, and what it offers a host
 * (`contributions`).
 */
export const peerOriginSchema = z.object({
  format: z.enum(['claude', 'gemini', 'codex']),
  /** The peer's manifest file (absolute). */
  file: z.string(),
  ignored: z.array(peerFieldSchema).default([]),
  notes: z.array(peerFieldSchema).default([]),
  /** Where each server of the manifest's `mcpServers` was written: one `{ file, at, references }` per server name. */
  servers: z.record(z.string(), peerServerSchema).optional(),
  /** Its commands, agents, skills, output styles and context files, each with its file. */
  contributions: z.array(peerContributionSchema).default([]),
});

/** Where a manifest plinth made from a peer's folder came from, and what of that folder plinth leaves out or reads differently. */
export type PeerOrigin = z.infer<typeof peerOriginSchema>;

/** A section another plugin reads (`hooks` by the hooks plugin, `mcpServers` by the mcp plugin), checked by it. */
const section = (what: string) => z.record(z.string(), z.unknown(), { error: `expected an object keyed by ${what}` });

/**
 * The `kernel` range of a declaration-only manifest (no `main`) that names
 * none, as the seed's extension manifests do: the current major. Such a plugin
 * runs no code against the kernel API, so only a new major (which may change
 * how its sections are read) could break it. A plugin with code must say.
 */
export const IMPLIED_KERNEL_RANGE = `^${semver.major(KERNEL_API_VERSION)}.0.0`;

const manifestFields = z.looseObject({
  name: pluginName,
  version,
  description: z.string().default(''),
  /** Semver range over the kernel API version; when a plugin without `main` omits it, the current major (`^<major>.0.0`). */
  kernel: range.optional(),
  /** Entry module, relative to the manifest; omitted for declaration-only plugins. */
  main: z.string(says('the entry module, relative to manifest.json, e.g. "./index.ts"')).min(1, 'expected the entry module, relative to manifest.json, e.g. "./index.ts"').optional(),
  dependencies: z.record(pluginName, range).default({}),
  /** Services this plugin provides, e.g. `transport:stdio`. */
  provides: z.array(z.string().min(1)).default([]),
  /** `lazy` plugins are imported when a service they provide is asked for or an event in `events` fires. */
  activation: z.enum(['eager', 'lazy']).default('eager'),
  /** Events this plugin handles; for a lazy plugin, the events that activate it. */
  events: z.array(z.string().min(1)).default([]),
  /**
   * Events this plugin guards (names or aliases; usually the gate events: `before_tool`,
   * `before_model`, `before_agent`, `before_tool_selection`, `approval_request`). While the plugin
   * is not running — its import, setup or settings failed, it timed out, a dependency did not load,
   * or the resolver left it out for any reason but being disabled — the kernel blocks each of these
   * events, `blockedBy` naming the plugin, its error and the fix: a guard that cannot run fails
   * closed. A lazy plugin is activated by the events it guards, as by those in `events`.
   */
  guards: z.array(z.string().min(1)).default([]),
  commands: z.record(z.string().regex(/^[a-z][a-z0-9-]*( [a-z][a-z0-9-]*)*$/, 'expected lowercase words such as "plugins list"'), commandDeclSchema).default({}),
  settings: z.array(settingSchema).default([]),
  /**
   * A guard: a plugin that checks or blocks what others do (trust, hooks, a
   * sandbox); a plugin with `guards` is one without saying so. A workspace
   * settings file cannot disable it: its
   * `plugins.<name>.enabled: false` is ignored with
   * `PLN_E_WORKSPACE_SETTING_IGNORED`. Only the user's settings can.
   */
  guard: z.boolean().default(false),
  /**
   * Top-level keys of `settings.json` this plugin reads (e.g. `mcpServers`),
   * so that they are not reported as unknown (`PLN_E_CONFIG_UNKNOWN_KEY`).
   */
  configKeys: z.array(z.string().min(1)).default([]),
  // Declarative sections owned by other plugins: the kernel passes them through.
  hooks: section('event name, e.g. { "before_tool": [{ "name": "guard", "command": "node", "args": ["guard.js"] }] }').default({}),
  mcpServers: section('server name, e.g. { "files": { "command": "node", "args": ["server.js"] } }').default({}),
  /**
   * What the plugin's child processes (hooks, stdio MCP servers, `ctx.exec`) may reach: see
   * sdk/contracts/sandbox.ts. Nothing declared: its own folder (read), a private temporary folder, no network.
   */
  permissions: z
    .unknown()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return permissionsSchema.parse({});
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        ctx.addIssue({ code: 'custom', message: 'expected an object such as { "filesystem": { "read": ["${workspace}"] }, "network": { "allow": ["api.example.com"] }, "env": ["API_TOKEN"] }' });
        return z.NEVER;
      }
      const parsed = permissionsSchema.safeParse(value);
      if (parsed.success) return parsed.data;
      for (const issue of parsed.error.issues) {
        const unknownKeys = issue.code === 'unrecognized_keys' ? issue.keys : [];
        const message = unknownKeys.length > 0 ? `unknown permission ${unknownKeys.map((k) => `"${k}"`).join(', ')}: expected filesystem (read, write), network (allow, deny), env, shell or mcp` : issue.message;
        ctx.addIssue({ code: 'custom', path: issue.path, message });
      }
      return z.NEVER;
    }),
  /** Present only on a manifest plinth made from a peer's folder (a Claude Code plugin or Gemini CLI extension): see {@link PeerOrigin}. */
  peer: peerOriginSchema.optional(),
}, { error: 'expected a JSON object such as { "name": "my-plugin", "version": "1.0.0" }' });

/** The manifest schema; its output always has `kernel` (given, or implied for a plugin without code). */
export const manifestSchema = manifestFields
  .superRefine(
    (manifest, ctx) => {
      if (manifest.kernel === undefined && manifest.main !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['kernel'], message: `missing: a plugin with code ("main") must name the kernel API range it was written for: add "kernel": "${IMPLIED_KERNEL_RANGE}"` });
      }
    },
    // Also when other fields are wrong, so that every problem is listed at once.
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
  )
  .transform((manifest) => ({ ...manifest, kernel: manifest.kernel ?? IMPLIED_KERNEL_RANGE }));

/** A validated manifest, defaults applied. */
export type Manifest = z.infer<typeof manifestSchema>;
/** A manifest as written in `manifest.json`. */
export type ManifestInput = z.input<typeof manifestSchema>;
/** One declared setting. */
export type SettingDecl = z.infer<typeof settingSchema>;

/** One problem found in a manifest: where, and what was expected. */
export interface ManifestIssue {
  /** JSON path inside the manifest, e.g. `dependencies.mcp`. Empty for the root. */
  path: string;
  message: string;
}

/** Formats a zod issue path as a JSON path (`a.b[0].c`). */
export function jsonPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** Validates a parsed manifest; returns the manifest or every problem found. */
export function parseManifest(data: unknown): { ok: true; manifest: Manifest } | { ok: false; issues: ManifestIssue[] } {
  const result = manifestSchema.safeParse(data);
  if (result.success) return { ok: true, manifest: result.data };
  return { ok: false, issues: result.error.issues.flatMap((issue) => toManifestIssues(issue, [])) };
}

/**
 * The `PLN_E_MANIFEST_INVALID` error for a manifest {@link parseManifest}
 * refused: one line per issue (`<file>: <path>: <problem>`) and the fix.
 * Without `file`, the manifest was given in memory.
 */
export function manifestError(data: unknown, issues: readonly ManifestIssue[], file?: string): PlinthError {
  const name = typeof data === 'object' && data !== null ? (data as { name?: unknown }).name : undefined;
  const where = file !== undefined ? safeLine(file) : `inline plugin${typeof name === 'string' ? ` "${safeLine(name)}"` : ''}`;
  return new PlinthError('PLN_E_MANIFEST_INVALID', issues.map((i) => (i.path === '' ? `${where}: ${i.message}` : `${where}: ${i.path}: ${i.message}`)).join('\n'), {
    ...(typeof name === 'string' && { plugin: name }),
    hint: `correct each field listed in ${where} (the format is the manifest schema of plinth/sdk, shown in plinth's README); every other plugin still loads`,
    details: { ...(file !== undefined && { file }), issues },
  });
}

/**
 * zod reports a bad record key (a dependency or command name) as one vague
 * "Invalid key in record" and nests the rules it breaks; those are what the
 * author needs, at the key's own path.
 */
function toManifestIssues(issue: z.core.$ZodIssue, parent: ReadonlyArray<PropertyKey>): ManifestIssue[] {
  const path = [...parent, ...issue.path];
  if (issue.code === 'invalid_key') return issue.issues.flatMap((inner) => toManifestIssues(inner, path));
  return [{ path: jsonPath(path), message: issue.message }];
}
