/**
 * Whether a hook runs for one occurrence of an event: it subscribes to the
 * event, and its matcher (if any) accepts the tool or the files in the context.
 *
 * Where the data comes from:
 * - tool events (`before_tool`, `after_tool`, `before_tool_selection`): the tool
 *   name is the first of `context.tool`, `context.toolName`, `context.name` that
 *   is a string (or an object with a string `name`); without one, the candidate
 *   tools `context.tools[]` (strings or `{ name }`) of a tool selection, any match.
 * - file events (`file_change`, `git_commit`): every path in `context.file`
 *   (a string, as the hook protocol sends it, or `{ path }`), `context.path` and
 *   `context.files[]` (strings or `{ path }`; a commit's staged files), any match.
 *
 * Patterns are read by the sdk's `globTest` (picomatch globs, `dot: true`,
 * `!negations`, case-sensitive), the rules the file watcher uses too. File
 * patterns are matched against the path relative to the workspace (an absolute
 * path outside it is matched as is) in file mode: a pattern without a slash
 * matches the file's base name anywhere (`*.ts` matches `src/a.ts`), as
 * lint-staged does.
 */
import { isAbsolute, relative, sep } from 'node:path';
import { type EventName } from 'plinth/sdk';
import { globTest, type GlobOptions, type GlobTest, type PeerProtocol } from 'plinth/internal';
import { CODEX_MATCHED_EVENTS, PEER_TOOL_EVENTS, compilePeerMatcher, peerMatchSubject, peerToolName } from './dialects/matcher.js';
import { toolContext } from './dialects/input.js';
import { peerNameOf } from './dialects/events.js';
import { type PermissionRule, matchesPermissionRule, parsePermissionRule } from './dialects/permission-rule.js';
import type { HookDefinition } from './types.js';

/** Events whose context names a tool. */
export const TOOL_EVENTS: ReadonlySet<EventName> = new Set<EventName>(['before_tool', 'after_tool', 'before_tool_selection']);
/** Events whose context names files. */
export const FILE_EVENTS: ReadonlySet<EventName> = new Set<EventName>(['file_change', 'git_commit']);

/** Options of {@link matches}. */
export interface MatchOptions {
  /** Absolute workspace folder: absolute paths inside it are made relative before matching. */
  readonly workspace?: string;
}

type Test = GlobTest;

interface Compiled {
  readonly tools?: Test;
  readonly files?: Test;
}

// Keyed by the (immutable) matcher object: compiled once per definition, dropped with it.
const cache = new WeakMap<HookDefinition['matcher'], Compiled>();

/** No patterns: no matcher of that kind (an empty list does not match everything here). */
function compilePatterns(patterns: readonly string[] | undefined, options: GlobOptions): Test | undefined {
  return patterns && patterns.length > 0 ? globTest(patterns, options) : undefined;
}

function compiled(hook: Pick<HookDefinition, 'matcher'>): Compiled {
  let entry = cache.get(hook.matcher);
  if (!entry) {
    const tools = compilePatterns(hook.matcher.tools, {});
    const files = compilePatterns(hook.matcher.files, { basename: true });
    entry = { ...(tools && { tools }), ...(files && { files }) };
    cache.set(hook.matcher, entry);
  }
  return entry;
}

function nameOf(value: unknown, key: 'name' | 'path'): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    const inner = (value as Record<string, unknown>)[key];
    if (typeof inner === 'string') return inner;
  }
  return undefined;
}

/** The tool names a tool event's context carries: the tool, or a selection's candidates. */
export function toolNamesOf(context: Readonly<Record<string, unknown>>): string[] {
  for (const key of ['tool', 'toolName', 'name']) {
    const name = nameOf(context[key], 'name');
    if (name !== undefined) return [name];
  }
  const tools = context.tools;
  if (!Array.isArray(tools)) return [];
  return tools.map((t) => nameOf(t, 'name')).filter((n): n is string => n !== undefined);
}

/** The paths a file event's context carries, as they appear there. */
export function filePathsOf(context: Readonly<Record<string, unknown>>): string[] {
  const paths: string[] = [];
  for (const value of [context.file, context.path]) {
    const path = nameOf(value, 'path');
    if (path !== undefined) paths.push(path);
  }
  if (Array.isArray(context.files)) {
    for (const value of context.files) {
      const path = nameOf(value, 'path');
      if (path !== undefined) paths.push(path);
    }
  }
  return paths;
}

function workspaceRelative(path: string, workspace: string | undefined): string {
  let p = path;
  if (workspace !== undefined && isAbsolute(p)) {
    const rel = relative(workspace, p);
    if (rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)) p = rel;
  }
  if (sep === '\\') p = p.replaceAll('\\', '/');
  while (p.startsWith('./')) p = p.slice(2);
  return p;
}

/**
 * Whether `hook` runs for this occurrence of `event` (a canonical name: the
 * definitions hold canonical names whatever spelling the author used).
 *
 * No matcher: every occurrence of a subscribed event. A matcher of the event's
 * kind decides; a hook with a matcher but none of the event's kind (a tool
 * pattern on `session_start`), or an event whose context lacks the data, does
 * not match.
 */
export function matches(
  hook: Pick<HookDefinition, 'events' | 'matcher' | 'protocol' | 'if'>,
  event: EventName,
  context: Readonly<Record<string, unknown>>,
  options: MatchOptions = {},
): boolean {
  if (!hook.events.includes(event)) return false;
  if (hook.if !== undefined && !conditionHolds(hook.if, event, context, options)) return false;
  if (hook.matcher.peer !== undefined) return matchesPeer(hook.protocol === 'gemini' || hook.protocol === 'codex' ? hook.protocol : 'claude', hook.matcher.peer, event, context);
  const { tools, files } = compiled(hook);
  if (!tools && !files) return true;
  if (TOOL_EVENTS.has(event) && tools) return toolNamesOf(context).some(tools);
  if (FILE_EVENTS.has(event) && files) {
    return filePathsOf(context).some((path) => files(workspaceRelative(path, options.workspace)));
  }
  return false;
}

/**
 * A peer matcher: on tool events against the peers' tool names (any candidate of a tool
 * selection), on lifecycle events against the source, trigger or type when the context has it; on
 * the other events the peers ignore matchers, and so does plinth.
 */
function matchesPeer(protocol: PeerProtocol, pattern: string, event: EventName, context: Readonly<Record<string, unknown>>): boolean {
  // Codex CLI ignores a matcher on events other than tool events, SessionStart and the sub-agent events.
  if (protocol === 'codex' && !CODEX_MATCHED_EVENTS.has(event)) return true;
  const matcher = compilePeerMatcher(protocol, pattern, protocol === 'claude' && (event === 'file_change' || event === 'after_agent_failure'));
  if (!matcher.ok) return false;
  if (PEER_TOOL_EVENTS.has(event)) {
    const call = toolContext(event, context);
    return toolNamesOf(call).some((tool) => matcher.test(peerToolName(tool, call, protocol)));
  }
  const subject = peerMatchSubject(event, context);
  // Gemini CLI compares a lifecycle matcher (the source, the trigger) exactly.
  return subject === undefined || (protocol === 'gemini' ? subject === pattern : matcher.test(subject));
}

/** Claude Code's events whose tool call an `if` is tested against; on any other event a hook with `if` never runs. */
export const IF_EVENTS: ReadonlySet<string> = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest', 'PermissionDenied']);

const rules = new Map<string, PermissionRule | undefined>();

/**
 * A hook's `if` (Claude Code's permission-rule syntax, see dialects/permission-rule.ts) against the
 * tool call of this event: the tool as Claude Code names it and its input (`args`). A rule that
 * cannot be read never matches (it was reported where the hook is defined).
 */
function conditionHolds(text: string, event: EventName, context: Readonly<Record<string, unknown>>, options: MatchOptions): boolean {
  if (!IF_EVENTS.has(peerNameOf('claude', event) ?? '')) return false;
  let rule = rules.get(text);
  if (!rules.has(text)) {
    const parsed = parsePermissionRule(text);
    rule = parsed.ok ? parsed.rule : undefined;
    if (rules.size > 1000) rules.clear();
    rules.set(text, rule);
  }
  if (rule === undefined) return false;
  const tool = toolNamesOf(context)[0];
  if (tool === undefined) return false;
  const raw = context.args ?? context.input ?? context.tool_input;
  const input = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const workspace = options.workspace ?? process.cwd();
  const cwd = typeof context.cwd === 'string' && isAbsolute(context.cwd) ? context.cwd : workspace;
  return matchesPermissionRule(rule, { tool: peerToolName(tool, context, 'claude'), input, cwd, projectDir: workspace });
}
