/**
 * The `hooks` service's contract: what a host (or another plugin) can ask of
 * the hooks plugin — the hook definitions it read, the outcome of an event's
 * hooks, rate-limit counts, and `askAgent` prompts to hand to an agent.
 */
import type { AsyncSeriesBailHook, SyncHook } from 'tapable';
import type { EventName, HostDirectives } from '../events.js';
import type { TrustSource } from './trust.js';
import type { Permissions } from './sandbox.js';

/** Where a hook was defined; decides its trust level. Never inferred from a path pattern. */
export type HookSource = TrustSource;

/** What a hook does when its event fires. */
export type HookAction =
  /** Run a process that speaks the JSON protocol on stdin/stdout. */
  | { readonly type: 'command'; readonly command: string; readonly args: readonly string[] }
  /** Hand a rendered prompt to the host (legacy `askAgent`); no process runs. */
  | { readonly type: 'askAgent'; readonly prompt: string }
  /**
   * POST the hook's input document as JSON to `url`; the response body is read as a command's stdout.
   * `headers` as written: `$VAR`, `${VAR}` and `${env:VAR}` are filled in at each request, only for the
   * variables `allowedEnvVars` lists (others become ""). The values are never shown or logged.
   */
  | { readonly type: 'http'; readonly url: string; readonly headers: Readonly<Record<string, string>>; readonly allowedEnvVars: readonly string[] }
  /**
   * Call `tool` of the configured MCP server `server` with `input` (its strings' `${path}` filled in from
   * the input document, `${tool_input.file_path}`); the tool's text (or structured) result is read as a command's stdout.
   */
  | { readonly type: 'mcp_tool'; readonly server: string; readonly tool: string; readonly input: Readonly<Record<string, unknown>> }
  /**
   * Ask the host's `model` service (`prompt`: one answer; `agent`: several turns with the MCP tools) the
   * prompt, `$ARGUMENTS` replaced by the input document; the answer `{ ok, reason }` decides.
   */
  | { readonly type: 'prompt' | 'agent'; readonly prompt: string; readonly model?: string; readonly maxTurns?: number };

/** A hook, normalised from settings, a plugin manifest or a legacy file. */
export interface HookDefinition {
  /** Stable and unique: `<source>:<name>` for settings and legacy files, `<plugin>/<name>` for manifests. */
  readonly id: string;
  readonly name: string;
  /** Canonical event names it runs on. */
  readonly events: readonly EventName[];
  /**
   * The event names exactly as the definition spelled them (canonical or protocol
   * alias), parallel to `events`: the protocol input carries the spelling the hook
   * subscribed with.
   */
  readonly subscribedAs: readonly string[];
  /**
   * Tool-name patterns for tool events, glob file patterns for file events; absent = every occurrence.
   * `peer`: a Claude Code or Gemini CLI matcher as written (`Edit|Write`, `mcp__github__.*`, a regex),
   * read with that peer's rules against the peer's name of the tool (or, on `session_start`,
   * `pre_compress` and `notification`, the source, trigger or notification type).
   */
  readonly matcher: { readonly tools?: readonly string[]; readonly files?: readonly string[]; readonly peer?: string };
  readonly action: HookAction;
  /** Working directory for the process (absolute). */
  readonly cwd: string;
  /** Milliseconds before the process tree is killed. */
  readonly timeoutMs: number;
  /** Higher runs first under the `priority` strategy. */
  readonly priority: number;
  /** Ids (or names from the same source) of hooks that must run before this one. */
  readonly dependsOn: readonly string[];
  /** May run concurrently with other parallel-safe hooks. */
  readonly parallel: boolean;
  readonly rateLimit: { readonly perMinute?: number; readonly cooldownMs?: number };
  /** What a failure of this hook means for the event: `block` (default) or `allow`. */
  readonly onError: 'block' | 'allow';
  readonly enabled: boolean;
  /** One long-lived process answering one JSON line per request, closed when idle. */
  readonly persistent: false | { readonly idleMs: number };
  readonly source: HookSource;
  /** Where it was defined: a settings file and JSON path, a manifest, or a legacy file. */
  readonly origin: string;
  /** The plugin whose manifest declared it, for `extension` and `builtin` hooks. */
  readonly plugin?: string;
  /** Hook version sent as `metadata.hookVersion` (the plugin's version for manifest hooks). */
  readonly version?: string;
  /**
   * The protocol the hook speaks on stdin/stdout: absent means plinth's v1.0.0; `claude` and
   * `gemini` are the peers' hook protocols (their input documents, environment variables, exit
   * codes and output fields), translated to and from plinth's event and decision.
   */
  readonly protocol?: HookProtocol;
  /** A plugin's folder, for a peer-dialect hook declared by a plugin: `CLAUDE_PLUGIN_ROOT` in its environment. */
  readonly pluginRoot?: string;
  /** A settings hook's own `permissions` (a manifest hook has its plugin's): what its process may reach when confined. */
  readonly permissions?: Permissions;
  /**
   * Why plinth cannot run this hook yet (a peer's hook of a type it does not know, a PowerShell command),
   * when it cannot: it never runs; on a gate event it blocks the event (failure `unsupported`),
   * elsewhere it is skipped with this message.
   */
  readonly unsupported?: string;
  /** What the definition asks that plinth does not honour yet, though the hook runs: each a sentence. */
  readonly notYet?: readonly string[];
  /**
   * Claude Code's `if`: one permission rule (`Bash(git *)`, `Edit(src/**)`, `mcp__github__*`). The hook
   * runs only for a tool call the rule matches, on the events that carry a tool call; on other events it never runs.
   */
  readonly if?: string;
  /**
   * Runs in the background (Claude Code's `async`): the event does not wait for it and its decision does
   * not count; what it says for the model reaches the next event's `systemMessages`. `rewake`
   * (`asyncRewake`): an exit 2 also wakes the host (the `hooks` service's `rewake`) with its stderr (or
   * stdout), `rewakeMessage` and `rewakeSummary` when given.
   */
  readonly async?: { readonly rewake?: boolean; readonly rewakeMessage?: string; readonly rewakeSummary?: string };
  /** Runs once per session (per `sessionId`; once per process without one), then is left out. */
  readonly once?: boolean;
  /** Shown while the hook runs: handed to the host through the `hooks` service's `progress`. */
  readonly statusMessage?: string;
}

/** A hook starting or ending, for a host that shows what runs (a spinner with the hook's `statusMessage`). */
export interface HookProgress {
  readonly hook: Pick<HookDefinition, 'id' | 'name' | 'source'>;
  readonly event: EventName;
  readonly phase: 'started' | 'ended';
  /** The definition's `statusMessage`, when it has one. */
  readonly statusMessage?: string;
  /** True for a hook running in the background (`async`). */
  readonly background?: boolean;
}

/**
 * A background hook (`asyncRewake`) that exited with code 2: the host should wake the agent with
 * `message` (the hook's `rewakeMessage`, else its stderr, else its stdout) even when it is idle.
 */
export interface RewakeRequest {
  readonly hook: Pick<HookDefinition, 'id' | 'name' | 'source'>;
  /** The event the hook ran for. */
  readonly event: EventName;
  readonly message: string;
  /** The hook's `rewakeSummary`: a short line for the user. */
  readonly summary?: string;
  readonly sessionId?: string;
}

/** The hook protocols plinth speaks: its own (v1.0.0) and its peers'. */
export type HookProtocol = 'plinth' | 'claude' | 'gemini' | 'codex';

/** Why a hook did not produce a usable answer. Stable: shown in traces and `--json`. */
export type HookFailure =
  | 'not_allowed' // command not on the whitelist
  | 'script_missing' // the script named in args does not exist
  | 'spawn_failed' // the process could not start
  | 'timeout' // killed after timeoutMs
  | 'exit_nonzero'
  | 'crashed' // killed by a signal it did not get from us
  | 'output_too_large' // stdout or stderr over the byte limit
  | 'invalid_json'
  | 'invalid_output' // JSON, but not a protocol response (e.g. `allow` missing)
  | 'untrusted' // not approved; did not run
  | 'rate_limited'
  | 'cooldown'
  | 'dependency_failed' // a hook it depends on failed or was skipped
  | 'conflict' // rewrote the same context field as a hook running in parallel
  | 'unsupported' // plinth cannot run this kind of hook (a peer's unknown hook type; a prompt or agent hook without a `model` service): it never runs
  | 'request_failed'; // an http hook's server answered a non-2xx status, an mcp_tool hook's tool answered an error, or the `model` service failed

/** One hook's part in one event: what the planner reports and the trace records. */
export interface HookOutcome {
  readonly hook: Pick<HookDefinition, 'id' | 'name' | 'source'>;
  /** `ran`: it answered; `failed`: it ran (or tried to) and failed; `skipped`: it did not run. */
  readonly status: 'ran' | 'failed' | 'skipped';
  /** The hook's effective verdict for the event, after `onError`. Skipped hooks allow. */
  readonly allow: boolean;
  readonly failure?: HookFailure;
  readonly message?: string;
  readonly systemMessage?: string;
  /** For a hook that blocked because it could not run on a gate event, or ran and failed (`PLN_E_HOOK_RUN_FAILED`): the block's `PLN_E_…` code and what fixes it. */
  readonly code?: string;
  readonly fix?: string;
  /** The hook asked to stop the chain (`continue: false`). */
  readonly stop?: boolean;
  /** Top-level context fields this hook changed. */
  readonly changed?: readonly string[];
  readonly durationMs: number;
  readonly exitCode?: number;
  readonly stderrTail?: string;
}

/** The combined result of every hook of one event. */
export interface PlanResult {
  readonly allow: boolean;
  /** The hook that blocked, when one did (or, for a definition that could not be read, where it is). */
  readonly blockedBy?: string;
  /** When the block is a hook that could not run or failed, rather than one that decided: its code and fix. */
  readonly code?: string;
  readonly fix?: string;
  readonly messages: readonly string[];
  readonly systemMessages: readonly string[];
  readonly context: Readonly<Record<string, unknown>>;
  /** In the order the hooks were planned. */
  readonly outcomes: readonly HookOutcome[];
  /** What the hooks asked the host to do beyond allow or block (a peer hook's `continue: false`, `sessionTitle`, …), merged in plan order; the decision's `host`. */
  readonly host?: HostDirectives;
}

/** One hook's counts. */
export interface HookRateCounts {
  readonly id: string;
  /** Starts in the last 60 s. */
  readonly lastMinute: number;
  /** Starts since the limiter was created. */
  readonly total: number;
  /** Refusals (rate limit, cooldown or the global limit) since the limiter was created. */
  readonly limited: number;
}

/** Counts over every hook. */
export interface GlobalRateCounts {
  /** The global limit, when there is one. */
  readonly perMinute?: number;
  readonly lastMinute: number;
  readonly total: number;
  /** Refusals because of the global limit. */
  readonly limited: number;
}

/** An `askAgent` hook's rendered prompt, handed to the host. */
export interface AskAgentRequest {
  readonly hook: Pick<HookDefinition, 'id' | 'name' | 'source'>;
  readonly event: EventName;
  readonly prompt: string;
  readonly context: Readonly<Record<string, unknown>>;
}

/** The `hooks` service. */
export interface HooksService {
  /** Every hook definition, enabled or not, and the problems found while reading them. */
  definitions(): Promise<{ hooks: readonly HookDefinition[]; problems: readonly { code: string; message: string; hint?: string; /** The event whose hook definition it is, when known. */ event?: EventName }[] }>;
  /** The external hooks' part of the last emit of `event` in this process. */
  lastRun(event: EventName): PlanResult | undefined;
  /** Rate-limit counts per hook and overall. */
  counts(): { hooks: HookRateCounts[]; global: GlobalRateCounts };
  /**
   * `askAgent` prompts. A tap that takes the prompt (hands it to its agent)
   * returns true; when no tap takes it, the prompt is added to the event's
   * system messages, so it reaches the model anyway.
   */
  readonly askAgent: AsyncSeriesBailHook<[AskAgentRequest], true | undefined>;
  /** Each hook run starting and ending, with its `statusMessage`: what a host shows while hooks run. */
  readonly progress: SyncHook<[HookProgress]>;
  /**
   * `asyncRewake` hooks that exited with code 2. A tap that wakes its agent returns true; when no tap
   * does, the message reaches the next event's `systemMessages`, as a background hook's context does.
   */
  readonly rewake: AsyncSeriesBailHook<[RewakeRequest], true | undefined>;
}

declare module '../index.js' {
  interface Services {
    hooks: HooksService;
  }
}
