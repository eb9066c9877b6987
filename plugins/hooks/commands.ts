/**
 * `plinth hooks …`: list, run, trust, untrust, validate, import, trace, install-git.
 * git support is imported when a git command runs: every boot loads this file.
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { canonicalEvent, type CommandOutput, type CommandSpec, EXIT, formatTable as table, PlinthError, type PluginKernel, safeLine } from 'plinth/sdk';
import { askYesNo, closestName, describeFileError, editSettingsFile, processTerminal, readSettingsFile, type SettingsFileOwner, type SettingsFileRef, whyNotAsk } from 'plinth/internal';
import type { HookDefaults } from './definition.js';
import { type ImportPlan, applyImport, checkImport, peerSettingsFiles, planImport, readPeerSettings, scopeOfFile } from './dialects/import.js';
import { trustSubject } from './engine.js';
import type { HooksService } from 'plinth/sdk';
import type { Trace, TraceEntry } from './trace.js';
import type { HookDefinition, HookOutcome, HookRunner, Strategy } from './types.js';
import { validateHooks } from './validate.js';
import { peerEvent, peerLabel } from './dialects/events.js';

export interface CommandDeps {
  readonly kernel: PluginKernel;
  readonly service: HooksService;
  readonly trace: Trace;
  readonly workspace: string;
  readonly home: string;
  readonly events: readonly string[];
  /** The runner's checks before a spawn, for `hooks validate`. */
  readonly runner: Pick<HookRunner, 'check'>;
  readonly strategy: Strategy;
  /** The events the host emits (setting `hostEvents`), when it said. */
  readonly hostEvents?: readonly string[];
  /** How definitions are read (the `shellCommands` setting among them): what `hooks import` would refuse. */
  readonly defaults: HookDefaults;
}

const SETTINGS_OWNER: SettingsFileOwner = { code: 'PLN_E_HOOK_SETTINGS_WRITE', plugin: 'hooks' };

export function hooksCommands({ kernel, service, trace, workspace, home, events, runner, strategy, defaults, hostEvents }: CommandDeps): CommandSpec[] {
  const find = async (id: string): Promise<HookDefinition> => {
    const { hooks } = await service.definitions();
    const hook = hooks.find((h) => h.id === id);
    if (!hook) {
      throw new PlinthError('PLN_E_HOOK_UNKNOWN', `no hook with id "${id}"`, {
        hint: `run \`plinth hooks list\` for the ids (${hooks.slice(0, 5).map((h) => h.id).join(', ') || 'none defined'})`,
      });
    }
    return hook;
  };

  return [
    {
      name: 'hooks list',
      async run({ json, out }) {
        const { hooks, problems } = await service.definitions();
        const trust = await kernel.get('trust');
        const recent = await trace.recent();
        const counts = new Map(service.counts().hooks.map((c) => [c.id, c]));
        const rows = await Promise.all(
          hooks.map(async (hook) => {
            const verdict = await trust.inspect(trustSubject(hook));
            const last = [...recent].reverse().find((entry) => entry.hook === hook.id);
            return { hook, trust: verdict.level, trusted: verdict.trusted, last, counts: counts.get(hook.id) };
          }),
        );
        if (json) {
          return out.json({
            hooks: rows.map((r) => ({ ...summary(r.hook), trust: r.trust, trusted: r.trusted, last: r.last ?? null, rate: r.counts ?? null })),
            problems,
          });
        }
        if (rows.length === 0) out.print('No hooks defined.');
        else {
          out.print(
            table(
              ['HOOK', 'EVENTS', 'SOURCE', 'TRUST', 'ENABLED', 'LAST RESULT'],
              rows.map((r) => [r.hook.id, r.hook.events.join(','), r.hook.source, r.trust, r.hook.enabled ? 'yes' : 'no', lastResult(r.last)]),
            ),
          );
        }
        for (const p of problems) out.print(`${p.code}: ${p.message}`);
        for (const r of rows) {
          if (r.hook.unsupported !== undefined) out.print(`${r.hook.id} never runs: ${r.hook.unsupported}`);
          for (const note of r.hook.notYet ?? []) out.print(`${r.hook.id}: ${note}`);
        }
        return problems.length > 0 ? EXIT.FAILURE : EXIT.OK;
      },
    },
    {
      name: 'hooks run',
      args: [{ name: 'event', required: true, description: `An event name or alias: ${events.join(', ')}` }],
      options: {
        context: { type: 'string', description: 'The event context: JSON, or @file to read it from a file' },
        'git-commit-msg': { type: 'string', description: 'For git_commit: build the context from the staged files, the branch and this message file' },
      },
      async run({ args, options, json, out }) {
        const event = canonicalEvent(args[0]!);
        if (!event) throw unknownRunEvent(args[0]!, events);
        let context = await readContext(typeof options.context === 'string' ? options.context : undefined);
        if (typeof options['git-commit-msg'] === 'string') {
          const { gitCommitContext } = await import('./git.js');
          context = { ...context, ...(await gitCommitContext({ launcher: await kernel.get('launcher'), workspace, messageFile: options['git-commit-msg'] })) };
        }
        const started = performance.now();
        const decision = await kernel.emit(args[0]!, context);
        const durationMs = performance.now() - started;
        const outcomes = service.lastRun(event)?.outcomes ?? [];
        // Definitions for this event that could not be read never ran: said here, not only in a log line.
        const unread = (await service.definitions()).problems.filter((p) => p.event === event);
        if (json) out.json({ event, decision, hooks: outcomes, problems: unread, durationMs: Math.round(durationMs * 10) / 10 });
        else {
          out.print(`${event}: ${decision.allow ? 'allowed' : 'BLOCKED'}${decision.blockedBy ? ` by ${decision.blockedBy.by ?? decision.blockedBy.plugin}` : ''} (${Math.round(durationMs)} ms)`);
          if (outcomes.length > 0) out.print(table(['HOOK', 'STATUS', 'VERDICT', 'TIME', 'MESSAGE'], outcomes.map(outcomeRow)));
          else out.print('No external hook ran for this event.');
          for (const p of unread) out.print(`not run: ${p.code}: ${p.message}`);
          // The hooks' own messages are in the table; show what else (in-process plugins) said.
          const shown = new Set(outcomes.map((o) => o.message));
          for (const message of decision.messages) if (!shown.has(message)) out.print(`message: ${message}`);
          for (const message of decision.systemMessages) out.print(`system message: ${message}`);
          // What the hooks asked the host beyond allow or block (Decision.host): a stop, a defer, a title, …
          for (const [field, value] of Object.entries(decision.host ?? {})) out.print(`for the host: ${field}: ${JSON.stringify(value)}`);
          if (decision.blockedBy?.fix) out.print(`fix: ${decision.blockedBy.fix}`);
        }
        return decision.allow ? EXIT.OK : EXIT.BLOCKED;
      },
    },
    {
      name: 'hooks trust',
      args: [{ name: 'id', required: true, description: 'A hook id, as `plinth hooks list` shows it' }],
      async run({ args, json, out }) {
        const hook = await find(args[0]!);
        const verdict = await (await kernel.get('trust')).approve(trustSubject(hook));
        if (json) return out.json({ id: hook.id, ...verdict });
        out.print(`Approved hook ${hook.id} (${verdict.fingerprint.slice(0, 12)}). A change to its definition or script needs approval again.`);
      },
    },
    {
      name: 'hooks untrust',
      args: [{ name: 'id', required: true, description: 'A hook id' }],
      async run({ args, json, out }) {
        const removed = await (await kernel.get('trust')).revoke('hook', args[0]!);
        if (json) return out.json({ id: args[0], removed });
        out.print(removed ? `Withdrew the approval of hook ${args[0]}.` : `Hook ${args[0]} had no approval.`);
      },
    },
    {
      name: 'hooks validate',
      async run({ json, out }) {
        const { hooks, problems } = await service.definitions();
        const report = await validateHooks({ hooks, problems, runner, trust: await kernel.get('trust'), strategy, model: await provided(kernel, 'model'), ...(hostEvents !== undefined && { hostEvents }) });
        const valid = report.problems.length === 0;
        if (json) out.json({ valid, ...report });
        else {
          for (const p of report.problems) {
            out.print(`${p.code}: ${p.message}`);
            if (p.hint) out.print(`  fix: ${p.hint}`);
          }
          for (const w of report.warnings) out.print(`warning: ${w.message}${w.hint ? ` (${w.hint})` : ''}`);
          out.print(valid ? `All ${hooks.length} hook definition(s) are valid and can run.` : `${report.problems.length} problem(s) in hook definitions.`);
        }
        return valid ? EXIT.OK : EXIT.FAILURE;
      },
    },
    {
      name: 'hooks import',
      args: [{ name: 'file', description: "The peer's settings file (default: the project's .claude/settings.json, .gemini/settings.json or .codex/hooks.json, else the user's)" }],
      options: {
        from: { type: 'string', description: 'Whose settings: claude (Claude Code), gemini (Gemini CLI) or codex (Codex CLI: hooks.json or config.toml)', value: '<claude|gemini|codex>' },
        scope: { type: 'string', description: "plinth settings to write: user or workspace (default: the file's own scope)", value: '<user|workspace>' },
        yes: { type: 'boolean', short: 'y', description: 'Write without asking' },
      },
      async run({ args, options, json, out, signal }) {
        const from = options.from;
        if (from !== 'claude' && from !== 'gemini' && from !== 'codex') {
          throw new PlinthError('PLN_E_CLI_USAGE', `--from must be claude, gemini or codex, got ${from === undefined ? 'nothing' : `"${String(from)}"`}`, { hint: 'plinth hooks import --from claude [.claude/settings.json]' });
        }
        const file = args[0] !== undefined ? resolve(args[0]) : await firstExisting(peerSettingsFiles(from, workspace));
        if (file === undefined) {
          throw new PlinthError('PLN_E_HOOK_IMPORT', `no ${peerLabel(from)} settings file found (${peerSettingsFiles(from, workspace).map((f) => f.file).join(', ')})`, {
            plugin: 'hooks',
            hint: `name the file: plinth hooks import --from ${from} <file>`,
          });
        }
        const scope = scopeArg(options.scope) ?? scopeOfFile(file, workspace);
        const ref = settingsRef(kernel, scope);
        const { hooks: peerHooks, skipped } = await readPeerSettings(file, from);
        const current = hooksOf(await readSettingsFile(ref, SETTINGS_OWNER), ref);
        // What `hooks validate` would find wrong with a hook is found before it is offered.
        const checks = await checkImport({ from, file, peerHooks, scope, workspace, home, defaults }, (hook) => runner.check(hook));
        const plan = planImport({ from, file, peerHooks, scope, destination: ref.file, existing: current, workspace, home, defaults, checks, skipped });
        const adding = plan.items.filter((i) => i.action === 'add').length;
        if (!json) showPlan(plan, ref, out);
        if (adding === 0) {
          if (json) out.json({ ...plan, destination: ref.file, written: false, added: [] });
          else out.print('Nothing to add.');
          return plan.items.some((i) => i.action === 'refused') ? EXIT.FAILURE : EXIT.OK;
        }
        if (options.yes !== true) {
          const terminal = processTerminal();
          const why = json ? 'of --json' : whyNotAsk(terminal);
          const yes = why === undefined && (await askYesNo(`Add ${adding} hook(s) to ${ref.file}? [y/N] `, terminal, signal));
          if (!yes) {
            const reason = why === undefined ? 'not confirmed' : `nothing was asked because ${why}; run again with --yes to write`;
            if (json) out.json({ ...plan, destination: ref.file, written: false, added: [], reason });
            else out.print(`Nothing written: ${reason}.`);
            return EXIT.FAILURE;
          }
        }
        const added = await editSettingsFile(ref, SETTINGS_OWNER, (data) => {
          const before = hooksOf(data, ref);
          const again = planImport({ from, file, peerHooks, scope, destination: ref.file, existing: before, workspace, home, defaults, checks, skipped });
          data.hooks = applyImport(before, again);
          return { changed: Object.keys(again.additions).length > 0, result: addedIds(before, again) };
        });
        if (json) return out.json({ ...plan, destination: ref.file, written: true, added });
        out.print(`Added ${added.length} hook(s) to ${ref.file}: ${added.join(', ')}.`);
        out.print(
          scope === 'workspace'
            ? 'Workspace hooks run once approved: review them with `plinth hooks list`, approve each with `plinth hooks trust <id>`.'
            : 'User hooks are trusted on first use and pinned: a later change to one needs `plinth hooks trust <id>`.',
        );
        return EXIT.OK;
      },
    },
    {
      name: 'hooks trace',
      options: { limit: { type: 'string', description: 'How many recent runs to show (default 20)' } },
      async run({ options, json, out }) {
        const limit = Number(options.limit ?? 20);
        if (!Number.isInteger(limit) || limit <= 0) throw new PlinthError('PLN_E_CLI_USAGE', `--limit must be a positive whole number, got "${String(options.limit)}"`);
        const entries = await trace.recent(limit);
        if (json) return out.json({ runs: entries });
        if (entries.length === 0) return out.print('No hook has run yet.');
        out.print(
          table(
            ['TIME', 'EVENT', 'HOOK', 'DURATION', 'EXIT', 'DECISION', 'STDERR (TAIL)'],
            entries.map((e) => [e.at.slice(11, 23), e.event, e.hook, `${e.durationMs} ms`, e.exitCode === undefined ? '-' : String(e.exitCode), verdictOf(e), oneLine(e.stderrTail ?? '')]),
          ),
        );
      },
    },
    {
      name: 'hooks install-git',
      async run({ json, out }) {
        // git runs the hook in its own environment: pin the user folder and profile this command used.
        const profile = kernel.inspect().config.profile;
        const plinthCommand = [process.execPath, process.argv[1]!, '--home', home, ...(profile ? ['--profile', profile] : [])];
        const { installGitHook } = await import('./git.js');
        const installed = await installGitHook({ launcher: await kernel.get('launcher'), workspace, plinthCommand });
        if (json) return out.json(installed);
        out.print(installed.message);
        out.print('git runs hooks without a terminal: approve workspace hooks first (`plinth hooks list`, `plinth hooks trust <id>`).');
      },
    },
  ];
}

/** The hook ids the plan's groups get once appended to `before`. */
function addedIds(before: Readonly<Record<string, unknown>>, plan: ImportPlan): string[] {
  const ids: string[] = [];
  for (const [event, groups] of Object.entries(plan.additions)) {
    const offset = Array.isArray(before[event]) ? (before[event] as unknown[]).length : 0;
    groups.forEach((group, g) => {
      const hooks = Array.isArray(group.hooks) ? group.hooks : [];
      hooks.forEach((_, h) => ids.push(`${plan.scope}:${event}.${offset + g}.${h}`));
    });
  }
  return ids;
}

function showPlan(plan: ImportPlan, ref: SettingsFileRef, out: CommandOutput): void {
  const label = peerLabel(plan.from);
  out.print(`${label} hooks in ${plan.file} → plinth ${plan.scope} settings ${ref.file}:`);
  if (plan.items.length > 0) {
    out.print(
      table(
        ['ACTION', 'EVENT', 'PLINTH EVENT', 'MATCHER', 'COMMAND'],
        plan.items.map((i) => [i.action === 'present' ? 'already there' : i.action, i.event, i.plinthEvent ?? '-', i.matcher ?? '*', safeLine(oneLine(i.command))]),
      ),
    );
  }
  for (const item of plan.items.filter((i) => i.action === 'refused')) out.print(`refused ${item.at} (${item.code}): ${item.reason}`);
  for (const note of plan.notes) out.print(`note: ${note}`);
}

async function firstExisting(files: ReadonlyArray<{ file: string }>): Promise<string | undefined> {
  for (const { file } of files) if (await stat(file).then((s) => s.isFile(), () => false)) return file;
  return undefined;
}

function scopeArg(value: unknown): 'user' | 'workspace' | undefined {
  if (value === undefined) return undefined;
  if (value === 'user' || value === 'workspace') return value;
  if (value === 'project') return 'workspace';
  throw new PlinthError('PLN_E_CLI_USAGE', `--scope must be user or workspace, got "${String(value)}"`);
}

/** The settings file of a scope, as the kernel looked for it (so --home and --workspace apply). */
function settingsRef(kernel: PluginKernel, scope: 'user' | 'workspace'): SettingsFileRef {
  const file = kernel.inspect().config.files.find((f) => f.scope === scope);
  if (!file) throw new PlinthError('PLN_E_HOOK_SETTINGS_WRITE', `the kernel reports no ${scope} settings file`, { plugin: 'hooks' });
  return { scope, file: file.file };
}

function hooksOf(data: Readonly<Record<string, unknown>>, ref: SettingsFileRef): Record<string, unknown> {
  const hooks = data.hooks;
  if (hooks === undefined) return {};
  if (typeof hooks !== 'object' || hooks === null || Array.isArray(hooks)) {
    throw new PlinthError('PLN_E_HOOK_SETTINGS_WRITE', `"hooks" in ${ref.scope} settings ${ref.file} is not an object`, { plugin: 'hooks', hint: 'make it an object keyed by event, or remove it', details: { file: ref.file } });
  }
  return hooks as Record<string, unknown>;
}

async function readContext(value: string | undefined): Promise<Record<string, unknown>> {
  if (value === undefined) return {};
  const text = value.startsWith('@') ? await readFile(value.slice(1), 'utf8').catch((cause: unknown) => {
    throw new PlinthError('PLN_E_CLI_USAGE', `cannot read the context file ${value.slice(1)}: ${describeFileError(cause)}`, {
      cause,
      hint: `give the path of a JSON file (relative to ${process.cwd()}), or the JSON itself: --context '{"tool":"write_file"}'`,
    });
  }) : value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new PlinthError('PLN_E_CLI_USAGE', '--context is not valid JSON', { hint: 'pass a JSON object, e.g. --context \'{"tool":"write_file"}\', or @file' });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new PlinthError('PLN_E_CLI_USAGE', '--context must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}

function summary(hook: HookDefinition) {
  return {
    id: hook.id,
    name: hook.name,
    events: hook.events,
    source: hook.source,
    origin: hook.origin,
    enabled: hook.enabled,
    // An http hook's header values may hold a secret as written: their names only.
    action: hook.action.type === 'http' ? { ...hook.action, headers: Object.fromEntries(Object.keys(hook.action.headers).map((name) => [name, '***'])) } : hook.action,
    timeoutMs: hook.timeoutMs,
    persistent: hook.persistent,
    protocol: hook.protocol ?? 'plinth',
    ...(hook.unsupported !== undefined && { unsupported: hook.unsupported }),
    ...(hook.notYet !== undefined && { notYet: hook.notYet }),
    ...(hook.if !== undefined && { if: hook.if }),
    ...(hook.async !== undefined && { async: hook.async }),
    ...(hook.once === true && { once: true }),
    ...(hook.statusMessage !== undefined && { statusMessage: hook.statusMessage }),
  };
}

function lastResult(entry: TraceEntry | undefined): string {
  if (!entry) return '-';
  return `${verdictOf(entry)} ${entry.event} ${entry.at.slice(0, 19).replace('T', ' ')}`;
}

function verdictOf(entry: Pick<TraceEntry, 'status' | 'allow' | 'failure'>): string {
  const verdict = entry.allow ? 'allow' : 'block';
  return entry.status === 'ran' ? verdict : `${entry.status}${entry.failure ? `:${entry.failure}` : ''} (${verdict})`;
}

function outcomeRow(o: HookOutcome): string[] {
  return [o.hook.id, o.status + (o.failure ? `:${o.failure}` : ''), o.allow ? 'allow' : 'block', `${Math.round(o.durationMs)} ms`, oneLine(o.message ?? '')];
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 77)}…` : line;
}

/** `hooks run` with a name that is no plinth event: a peer's name (what a Claude Code or Gemini CLI user types) says which event it is, a typo the nearest. */
function unknownRunEvent(name: string, events: readonly string[]): PlinthError {
  for (const protocol of ['claude', 'gemini', 'codex'] as const) {
    const event = peerEvent(protocol, name);
    if (event !== undefined) {
      return new PlinthError('PLN_E_EVENT_UNKNOWN', `unknown event "${name}": that is ${peerLabel(protocol)}'s name for plinth's ${event}`, {
        hint: `plinth hooks run ${event} (hooks defined under "${name}" run on it)`,
      });
    }
  }
  const near = closestName(name, events);
  return new PlinthError('PLN_E_EVENT_UNKNOWN', `unknown event "${name}"${near ? ` (did you mean "${near}"?)` : ''}`, { hint: `use one of: ${events.join(', ')}` });
}

/** Whether some plugin (or the host) provides `service` now. */
async function provided(kernel: PluginKernel, service: 'model'): Promise<boolean> {
  try {
    await kernel.get(service);
    return true;
  } catch (error) {
    if ((error as PlinthError)?.code === 'PLN_E_SERVICE_MISSING') return false;
    throw error;
  }
}
