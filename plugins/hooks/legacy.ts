/**
 * The legacy hook format (the hook architecture's "Hook Translator"): one JSON
 * file per hook (or a list of them) in `<workspace>/.plinth/hooks/*.json` and
 * `<home>/hooks/*.json`, translated into the same {@link HookDefinition} as
 * settings and manifests.
 *
 * ```json
 * {
 *   "name": "Lint on Save",
 *   "when": { "type": "fileEdited", "patterns": ["*.ts"] },
 *   "then": { "type": "askAgent", "prompt": "Run linting on {{file.path}}" }
 * }
 * ```
 *
 * `when.type` → event (the spelling sent to a `runCommand` hook in brackets):
 *
 * | `when.type` | event |
 * |---|---|
 * | `fileEdited`, `fileCreated`, `fileDeleted`, `fileChanged` | `file_change` (`on-file-change`) |
 * | `gitCommit` | `git_commit` (`on-git-commit`) |
 * | `sessionStart`, `sessionEnd` | `session_start`, `session_end` (`on-session-start`, `on-session-end`) |
 * | `preToolCall`, `postToolCall` | `before_tool`, `after_tool` (`pre-tool-call`, `post-tool-call`) |
 * | `promptSubmit`, `agentStop` | `before_agent`, `after_agent` |
 * | any canonical name or protocol alias | itself (as written) |
 *
 * `when.patterns` become `matcher.files` (for every event, as written).
 * `fileCreated`/`fileDeleted` do not narrow to that kind of change: the
 * definition has no field for it, so they fire on every change of a matching file.
 *
 * `then.runCommand`'s `command` is one command line split into program and
 * arguments without a shell: "double" and 'single' quotes group, a backslash
 * escapes outside single quotes, nothing is expanded, and an unquoted shell
 * operator or `$` (`;`, `|`, `&`, `<`, `>`, `` ` ``, `$`) is an error, since
 * the line would not do what it says. The hook's id is `<source>:<slug of name>`
 * (`workspace:lint-on-save`); its cwd is the workspace root or the user folder.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { EVENT_ALIASES, type EventName, type PlinthError } from 'plinth/sdk';
import { z } from 'zod';
import { eventName, problem, toHookDefinition, type HookCollection, type HookDefaults, type SectionOrigin } from './definition.js';
import type { HookDefinition, HookSource } from './types.js';

/** Legacy `when.type` names and the events they mean (canonical names and protocol aliases are accepted too). */
export const LEGACY_EVENT_TYPES: Readonly<Record<string, EventName>> = Object.freeze({
  fileEdited: 'file_change',
  fileCreated: 'file_change',
  fileDeleted: 'file_change',
  fileChanged: 'file_change',
  gitCommit: 'git_commit',
  sessionStart: 'session_start',
  sessionEnd: 'session_end',
  preToolCall: 'before_tool',
  postToolCall: 'after_tool',
  promptSubmit: 'before_agent',
  agentStop: 'after_agent',
});

/** Largest legacy file read; a bigger one is reported, not parsed. */
export const MAX_LEGACY_FILE_BYTES = 1024 * 1024;

const legacySchema = z.strictObject({
  name: z.string({ error: 'expected the hook name' }).trim().min(1, { error: 'expected a non-empty name' }).max(200, { error: 'expected a name of at most 200 characters' }),
  description: z.string({ error: 'expected a description string' }).optional(),
  version: z.string({ error: 'expected a version string' }).optional(),
  enabled: z.boolean({ error: 'expected true or false' }).optional(),
  when: z.strictObject(
    {
      type: z.string({ error: 'expected an event type such as "fileEdited"' }),
      patterns: z.array(z.string({ error: 'expected file patterns as strings' }).min(1, { error: 'expected a non-empty pattern' }), { error: 'expected a list of file patterns' }).optional(),
    },
    { error: 'expected { "type": <event>, "patterns"?: [<glob>] }' },
  ),
  then: z.discriminatedUnion(
    'type',
    [
      z.strictObject({ type: z.literal('askAgent'), prompt: z.string({ error: 'expected the prompt to give the agent' }).min(1, { error: 'expected a non-empty prompt' }) }),
      z.strictObject({ type: z.literal('runCommand'), command: z.string({ error: 'expected the command line to run' }).min(1, { error: 'expected a non-empty command' }) }),
    ],
    { error: 'expected { "type": "askAgent", "prompt": … } or { "type": "runCommand", "command": … }' },
  ),
});

/** Splits a command line into words without a shell; see the module comment for the rules. */
export function splitCommand(line: string): { ok: true; argv: string[] } | { ok: false; error: string } {
  const argv: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1]!)) word += line[++i];
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\') {
      if (i + 1 >= line.length) return { ok: false, error: 'the command ends with a lone backslash' };
      word += line[++i];
      inWord = true;
    } else if (c === '\n' || c === '\r') {
      return { ok: false, error: 'the command spans several lines; legacy commands are one program and its arguments, not a shell script' };
    } else if (/\s/.test(c)) {
      if (inWord) argv.push(word);
      word = '';
      inWord = false;
    } else if (';|&<>`$'.includes(c)) {
      const op = /^(&&|\|\||>>|[;|&<>`$])/.exec(line.slice(i))![1];
      return {
        ok: false,
        error: `"${op}" is shell syntax, but legacy commands run without a shell (nothing is expanded or chained); quote it to pass it as text, or move the logic into a script`,
      };
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) return { ok: false, error: `the command has an unterminated ${quote === '"' ? 'double' : 'single'} quote` };
  if (inWord) argv.push(word);
  if (argv.length === 0) return { ok: false, error: 'the command is empty' };
  return { ok: true, argv };
}

/** `Lint on Save` → `lint-on-save`: the name part of a legacy hook's id. */
export function legacySlug(name: string): string {
  return name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-._]+|[-._]+$/g, '')
    .slice(0, 100);
}

/**
 * Translates the parsed content of one legacy file: one hook object or a list
 * of them. `where.origin` is the file. Never throws.
 */
export function translateLegacy(data: unknown, where: Omit<SectionOrigin, 'plugin' | 'path'>, defaults: HookDefaults): HookCollection {
  const hooks: HookDefinition[] = [];
  const problems: PlinthError[] = [];
  const list = Array.isArray(data) ? data : [data];
  const ids = new Map<string, string>();
  list.forEach((raw, index) => {
    const at = Array.isArray(data) ? `[${index}]` : '';
    const rel = (p: string): string => (at === '' ? p || '(file)' : p ? `${at}.${p}` : at);
    const parsed = legacySchema.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const path = issue.path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${String(k)}`)).join('').replace(/^\./, '');
        const keys = issue.code === 'unrecognized_keys' ? `: ${issue.keys.map((k) => `"${k}"`).join(', ')}` : '';
        problems.push(problem('PLN_E_HOOK_INVALID', where, rel(path), `${issue.code === 'unrecognized_keys' ? 'unknown key' : issue.message}${keys}`));
      }
      return;
    }
    const entry = parsed.data;
    const legacy = Object.hasOwn(LEGACY_EVENT_TYPES, entry.when.type) ? LEGACY_EVENT_TYPES[entry.when.type] : undefined;
    const event = legacy ?? eventName(entry.when.type);
    if (!event) {
      const known = [...Object.keys(LEGACY_EVENT_TYPES), 'or a canonical event name'].join(', ');
      problems.push(problem('PLN_E_HOOK_EVENT_UNKNOWN', where, rel('when.type'), `"${entry.when.type}" is not a hook event; expected ${known}`, entry.name));
      return;
    }
    let action: { command: string; args: string[] } | { prompt: string };
    if (entry.then.type === 'runCommand') {
      const split = splitCommand(entry.then.command);
      if (!split.ok) {
        problems.push(problem('PLN_E_HOOK_INVALID', where, rel('then.command'), split.error, entry.name));
        return;
      }
      action = { command: split.argv[0]!, args: split.argv.slice(1) };
    } else {
      action = { prompt: entry.then.prompt };
    }
    const slug = legacySlug(entry.name);
    if (!slug) {
      problems.push(problem('PLN_E_HOOK_INVALID', where, rel('name'), 'expected a name with at least one letter or digit', entry.name));
      return;
    }
    const id = `${where.source}:${slug}`;
    const earlier = ids.get(id);
    if (earlier !== undefined) {
      problems.push(problem('PLN_E_HOOK_DUPLICATE', where, rel('name'), `hook id "${id}" is already used by ${earlier} in this file`, entry.name));
      return;
    }
    ids.set(id, rel('name'));
    const subscribedAs = legacy ? protocolSpelling(event) : entry.when.type;
    hooks.push(
      toHookDefinition(
        { ...action, ...(entry.when.patterns && { files: entry.when.patterns }), ...(entry.enabled !== undefined && { enabled: entry.enabled }) },
        { id, name: entry.name, event, subscribedAs, origin: at === '' ? where.origin : `${where.origin}#${at}` },
        { ...where, ...(entry.version !== undefined && { version: entry.version }) },
        defaults,
      ),
    );
  });
  return { hooks, problems };
}

/**
 * Reads every `*.json` file of a legacy folder, in name order. A missing
 * folder is no problem; an unreadable, oversized or invalid file is one
 * problem naming the file, and the other files still load.
 */
export async function loadLegacyFolder(dir: string, where: { source: HookSource; baseDir: string }, defaults: HookDefaults): Promise<HookCollection> {
  const hooks: HookDefinition[] = [];
  const problems: PlinthError[] = [];
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true })).filter((e) => !e.isDirectory() && e.name.endsWith('.json')).map((e) => e.name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { hooks, problems };
    problems.push(problem('PLN_E_HOOK_INVALID', { origin: dir, source: where.source }, '(folder)', `cannot read the legacy hooks folder: ${code ?? String(error)}`));
    return { hooks, problems };
  }
  for (const name of names.sort()) {
    const file = join(dir, name);
    const origin = { origin: file, source: where.source };
    let text: string;
    try {
      const info = await stat(file);
      if (!info.isFile()) continue;
      if (info.size > MAX_LEGACY_FILE_BYTES) {
        problems.push(problem('PLN_E_HOOK_INVALID', origin, '(file)', `the file is ${info.size} bytes; a legacy hook file may have at most ${MAX_LEGACY_FILE_BYTES}`));
        continue;
      }
      text = await readFile(file, 'utf8');
    } catch (error) {
      problems.push(problem('PLN_E_HOOK_INVALID', origin, '(file)', `cannot read the file: ${(error as NodeJS.ErrnoException).code ?? String(error)}`));
      continue;
    }
    let data: unknown;
    try {
      data = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch (error) {
      problems.push(problem('PLN_E_HOOK_INVALID', origin, '(file)', `not valid JSON: ${jsonReason(error)}`));
      continue;
    }
    const result = translateLegacy(data, { source: where.source, origin: file, baseDir: where.baseDir }, defaults);
    hooks.push(...result.hooks);
    problems.push(...result.problems);
  }
  return { hooks, problems };
}

/** V8's JSON error without the text it quotes (a hook file may hold a token): `Unexpected token '}'`. */
function jsonReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/, (?:\.\.\.)?".*" is not valid JSON$/s, '').replace(/ in JSON at position \d+.*$/s, '');
}

/** The hook protocol's spelling of an event (`on-file-change`), or the canonical name when it has none. */
function protocolSpelling(event: EventName): string {
  for (const [alias, canonical] of Object.entries(EVENT_ALIASES)) if (canonical === event) return alias;
  return event;
}
