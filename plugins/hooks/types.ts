/**
 * The hooks plugin's own types: what one run of a hook produced, the runner,
 * the protocol input and the strategies. The definition, the outcome of an
 * event and the `hooks` service are the sdk's contract, re-exported below.
 */
import type { EventName, HookDefinition, HookFailure, HostDirectives, PinnedFile } from 'plinth/sdk';
import type { PeerProtocol } from 'plinth/internal';

/** The contract's types (declared in the sdk, beside the `hooks` service), re-exported for this plugin's own modules. */
export type { AskAgentRequest, GlobalRateCounts, HookAction, HookDefinition, HookFailure, HookOutcome, HookRateCounts, HookSource, HooksService, PlanResult } from 'plinth/sdk';

/** A valid protocol response (v1.0.0 plus the MCP seed's integration fields). */
export interface HookResponse {
  readonly allow: boolean;
  readonly message?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** `false` stops the hooks after this one. */
  readonly continue?: boolean;
  readonly systemMessage?: string;
  /** A replacement context for the hooks after this one and the caller. */
  readonly context?: Readonly<Record<string, unknown>>;
  /**
   * A peer hook answered `permissionDecision: "ask"`: the engine asks the host (`approval_request`)
   * and the answer decides `allow`.
   */
  readonly approval?: { readonly reason?: string };
  /** What the hook asks the host to do beyond allow or block (a peer's `continue: false`, `defer`, `sessionTitle`, …): the decision's `host`. */
  readonly host?: HostDirectives;
}

/** What running one hook process produced. */
export type RunResult =
  | {
      readonly ok: true;
      readonly response: HookResponse;
      readonly durationMs: number;
      readonly stderrTail: string;
      /** Spawn mode: the process's exit code (0); persistent processes answer without exiting. */
      readonly exitCode?: number;
    }
  | {
      readonly ok: false;
      readonly failure: HookFailure;
      /** A sentence a user can act on, naming the hook. */
      readonly message: string;
      readonly durationMs: number;
      readonly exitCode?: number;
      readonly signal?: string;
      readonly stderrTail: string;
      /** Set when the hook never got to decide (see `cannotRunFix`): what fixes it. A gate event is then blocked whatever `onError` says. */
      readonly cannotRun?: string;
    };

/** Why a hook cannot start at all: found before anything is spawned. */
export type PreflightFailure = Extract<HookFailure, 'not_allowed' | 'script_missing' | 'spawn_failed'>;

/** Runs hook processes: spawn mode or persistent mode, as each definition says. */
export interface HookRunner {
  /**
   * The checks a run makes before it spawns anything (the command is allowed and found, the
   * script and the working folder exist); undefined when the hook could start. Never throws.
   */
  check(hook: HookDefinition): Promise<{ readonly failure: PreflightFailure; readonly detail: string } | undefined>;
  /** Never throws: every failure is a `RunResult` with `ok: false`. */
  /** `pinned`: the files the hook's trust check approved (its verdict's `pinned`), run exactly as approved. */
  run(hook: HookDefinition, input: RunInput, signal?: AbortSignal, pinned?: readonly PinnedFile[], env?: RunEnvironment): Promise<RunResult>;
  /** Stops the persistent processes of these hooks (their plugin left or was replaced); a later run starts afresh. */
  release(hookIds: Iterable<string>): Promise<void>;
  /** Stops every persistent process (and its process tree). */
  close(): Promise<void>;
}

/** The protocol input written to a hook's stdin. */
export interface HookInput {
  readonly version: '1.0.0';
  /** The event name as the hook subscribed to it. */
  readonly event: string;
  readonly context: Readonly<Record<string, unknown>>;
  readonly metadata: {
    readonly timestamp: string;
    readonly hookName: string;
    readonly hookVersion?: string;
    readonly sessionId?: string;
  };
}

/** The stdin of a Claude Code or Gemini CLI hook, and what reading its answer needs. */
export interface PeerHookInput {
  readonly protocol: PeerProtocol;
  /** The event as the peer names it (`PreToolUse`, `BeforeTool`). */
  readonly event: string;
  readonly canonical: EventName;
  /** Written to stdin as JSON. */
  readonly document: Readonly<Record<string, unknown>>;
  /** plinth's context at this hook: rewrites of the tool input are merged into it. */
  readonly context: Readonly<Record<string, unknown>>;
}

/** Variables of one run beyond a hook's own environment (see session-env.ts). */
export interface RunEnvironment {
  /** plinth's values for this run (`CLAUDE_ENV_FILE`, `CLAUDE_PLUGIN_DATA`): kept like `PLINTH_HOOK_*`. */
  readonly own?: Readonly<Record<string, string>>;
  /** What the session's env file set for the hook's principal: passed like a plugin's settings. */
  readonly vars?: Readonly<Record<string, string>>;
}

/** What one run writes to a hook: plinth's protocol input, or a peer's. */
export type RunInput = HookInput | PeerHookInput;

/** Whether `input` is a peer hook's. */
export function isPeerInput(input: RunInput): input is PeerHookInput {
  return 'document' in input;
}

/** Execution strategies (hook architecture seed). */
export type Strategy = 'sequential' | 'parallel' | 'optimized' | 'priority';

