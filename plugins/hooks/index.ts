/**
 * The hooks plugin: external hook scripts for every agent event. Definitions
 * come from settings, plugin manifests and legacy files; each run is gated by
 * the trust plugin, planned, rate limited and recorded.
 */
import { join } from 'node:path';
import { EVENTS, definePlugin, type Disposer, type EventName, type EventResult, type PlinthError, type PluginInfo, type PluginStatus, type Principal } from 'plinth/sdk';
import { hooksCommands } from './commands.js';
import { HookEngine, type UnreadableGuard } from './engine.js';
import { createRateLimiter } from './rate-limit.js';
import { createRunner } from './runner/index.js';
import type { HooksService } from 'plinth/sdk';
import { hookSettings } from './settings.js';
import { type LegacyHooks, assembleHooks, readLegacyHooks } from './sources.js';
import { createTrace } from './trace.js';
import { validateHooks } from './validate.js';
import { hookPrincipal } from './principal.js';
import type { HookCollection } from './definition.js';
import type { HookDefinition, PlanResult } from './types.js';

export default definePlugin({
  setup(kernel, ctx) {
    const settings = hookSettings(ctx.settings);
    const principals = new WeakMap<HookDefinition, { readonly plugin: PluginInfo | undefined; readonly principal: Principal }>();
    const defaults = { timeoutMs: settings.timeout, idleMs: settings.persistentIdleMs, shellSources: settings.shellCommands, dataHome: ctx.paths.home };
    const runner = createRunner({
      allowedCommands: settings.allowedCommands,
      maxOutputBytes: settings.maxOutputBytes,
      env: settings.env,
      workspace: ctx.paths.workspace,
      log: ctx.log,
      // Asked for on the first hook run, so that a command that runs none does not load it.
      launcher: () => kernel.get('launcher'),
      owner: ctx.name,
      signal: ctx.signal,
      settingsEnv: (plugin) => kernel.settingsEnv(plugin),
      // Asked at every run: made again only when the definition or its plugin is another one.
      principalOf: (hook) => principalOf(hook),
    });
    const limiter = createRateLimiter(settings.perMinute === undefined ? {} : { globalPerMinute: settings.perMinute });
    const trace = createTrace(join(ctx.paths.home, 'hooks-trace.jsonl'), settings.traceSize, (text) => kernel.redact(text));
    /** A service another plugin or the host provides, or undefined when none does. */
    const optional = async <T,>(get: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await get();
      } catch (error) {
        if ((error as PlinthError)?.code === 'PLN_E_SERVICE_MISSING') return undefined;
        throw error;
      }
    };
    const principalOf = (hook: HookDefinition): Principal => {
      const plugin = hook.plugin === undefined ? undefined : plugins.get(hook.plugin);
      const known = principals.get(hook);
      if (known !== undefined && known.plugin === plugin) return known.principal;
      const principal = hookPrincipal(hook, plugin, ctx.paths);
      principals.set(hook, { plugin, principal });
      return principal;
    };
    /** A service's view, kept once found: the kernel's view follows a replaced provider (one that left makes its calls throw, which blocks a gate event). */
    const kept = <T,>(get: () => Promise<T>): (() => Promise<T | undefined>) => {
      let found: T | undefined;
      return async () => (found ??= await optional(get));
    };
    const engine = new HookEngine({
      handlers: {
        mcp: kept(() => kernel.get('mcp')),
        // Asked at every run: a host may provide its model after plinth started, or take it away.
        model: () => optional(() => kernel.get('model')),
        capabilities: kept(() => kernel.get('capabilities')),
        principalOf,
        paths: ctx.paths,
        maxOutputBytes: settings.maxOutputBytes,
        signal: ctx.signal,
      },
      runner,
      limiter,
      trace,
      trust: () => kernel.get('trust'),
      strategy: settings.strategy,
      workspace: ctx.paths.workspace,
      log: ctx.log,
      redact: (text) => kernel.redact(text),
      home: ctx.paths.home,
      // A peer hook's `ask`: the host approves through approval_request, answering `context.approved: true`.
      approve: async (ask) => {
        const decision = await kernel.emit('approval_request', {
          operation: ask.event === 'before_tool' ? 'tool_call' : ask.event,
          details: { ...ask.context, ...(ask.reason !== undefined && { reason: ask.reason }) },
          requester: ask.hook.id,
          ...(ask.reason !== undefined && { reason: ask.reason }),
        });
        const message = decision.messages[0] ?? decision.blockedBy?.reason;
        return { approved: decision.allow && decision.context.approved === true, ...(message !== undefined && { message }) };
      },
    });

    // Manifests arrive through the kernel's replay at setup, then live (`manifest` again for a
    // plugin added or replaced, `unload` for one that left). Definitions are first assembled once
    // every eager plugin is set up (`ready`); from then on each change swaps them in one step.
    const plugins = new Map<string, PluginInfo>();
    let legacy: Promise<LegacyHooks> | undefined;
    let current: HookCollection | undefined;
    let live = false;
    const readLegacy = () => (legacy ??= readLegacyHooks({ home: ctx.paths.home, workspace: ctx.paths.workspace }, defaults));
    const assemble = (found: LegacyHooks): HookCollection => {
      const status = kernel.status();
      const usable = [...plugins.values()].filter((p) => contributes(status, p.name));
      return assembleHooks({ layers: kernel.configLayers, plugins: usable, home: ctx.paths.home, workspace: ctx.paths.workspace }, found, defaults);
    };
    const definitions = async (): Promise<HookCollection> => current ?? assemble(await readLegacy());

    // One handler per event that has hooks: added when an event gains its first hook, removed when it loses its last.
    const handlers = new Map<EventName, Disposer>();
    const followEvents = (): void => {
      const wanted = engine.events();
      for (const event of wanted) {
        if (handlers.has(event)) continue;
        handlers.set(
          event,
          kernel.on(event, async (context) => {
            const result = await engine.fire(event, context);
            return result && toEventResult(result);
          }),
        );
      }
      for (const [event, off] of handlers) {
        if (wanted.has(event)) continue;
        off();
        handlers.delete(event);
      }
    };
    /** Puts `next` in place: definitions, guards and handlers change together, synchronously, so no emit sees half of it. */
    const install = (next: HookCollection): void => {
      const known = new Set((current?.problems ?? []).map(problemKey));
      current = next;
      engine.setHooks(next.hooks, unreadableGuards(next.problems));
      followEvents();
      for (const problem of next.problems) if (!known.has(problemKey(problem))) ctx.log.warn(`${problem.code}: ${problem.message}`);
    };

    kernel.hooks.ready.tap(async () => {
      install(assemble(await readLegacy()));
      live = true;
    });

    /** After `ready`: the definitions again with `plugin` as it is now (new, replaced, or gone). */
    const follow = async (plugin: string): Promise<void> => {
      const before = current?.hooks.filter((h) => h.plugin === plugin) ?? [];
      install(assemble(await readLegacy()));
      // Their scripts may have changed under the same ids: the plugin's persistent processes start afresh.
      await runner.release(before.map((h) => h.id));
      await followWatcher();
    };
    kernel.hooks.manifest.tap(async (info) => {
      plugins.set(info.name, info); // a replaced plugin keeps its place
      if (live) await follow(info.name);
    });
    kernel.hooks.unload.tap(async (info) => {
      if (!plugins.delete(info.name) || !live) return;
      await follow(info.name);
    });

    // file_change only while the host stays up (`plinth up`), never for one command; its
    // patterns follow the definitions (the watcher is started again when they change).
    let serving = false;
    let watcher: { patterns: string; close(): Promise<void> } | undefined;
    let watching: Promise<void> = Promise.resolve();
    const followWatcher = (): Promise<void> => {
      if (!serving) return Promise.resolve();
      watching = watching.then(async () => {
        const patterns = fileChangePatterns((await definitions()).hooks);
        const key = JSON.stringify(patterns);
        if (watcher?.patterns === key) return;
        await watcher?.close();
        watcher = undefined;
        if (patterns.length === 0) return;
        const { watchWorkspace } = await import('./watcher.js');
        const started = watchWorkspace({
          workspace: ctx.paths.workspace,
          patterns,
          debounceMs: settings.watchDebounceMs,
          log: ctx.log,
          onChange: async (changes) => {
            for (const change of changes) {
              await kernel.emit('file_change', {
                file: change.path,
                changes: { type: change.kind === 'changed' ? 'modified' : change.kind, timestamp: new Date().toISOString() },
              });
            }
          },
        });
        watcher = { patterns: key, close: () => started.close() };
        await started.ready;
      });
      return watching;
    };
    kernel.hooks.serve.tap(() => {
      serving = true;
      return followWatcher();
    });

    const service: HooksService = {
      definitions: async () => {
        const { hooks, problems } = await definitions();
        return {
          hooks,
          problems: problems.map((p) => {
            const event = p.details?.event;
            return { code: p.code, message: p.message, ...(p.hint && { hint: p.hint }), ...(typeof event === 'string' && { event: event as EventName }) };
          }),
        };
      },
      lastRun: (event: EventName) => engine.lastRun(event),
      counts: () => ({ hooks: limiter.counts(), global: limiter.globalCounts() }),
      askAgent: engine.askAgent,
      progress: engine.progress,
      rewake: engine.rewake,
    };
    kernel.provide('hooks', service);
    kernel.hooks.commands.tap((registry) => {
      for (const command of hooksCommands({ kernel, service, trace, workspace: ctx.paths.workspace, home: ctx.paths.home, events: EVENTS, runner, strategy: settings.strategy, defaults, ...(settings.hostEvents !== undefined && { hostEvents: settings.hostEvents }) })) registry.add(command);
    });

    // `plinth config validate`: the hooks of the settings files, checked as `hooks validate` checks them (short of running).
    kernel.hooks.validate.tap(async (check) => {
      const { hooks, problems } = await definitions();
      const files = new Set(check.files);
      for (const p of problems) {
        const origin = p.details?.origin;
        if (typeof origin !== 'string' || !files.has(origin)) continue;
        const path = p.details?.path;
        check.add({ code: p.code, message: p.message, ...(p.hint && { hint: p.hint }), file: origin, ...(typeof path === 'string' && path !== '' && { path }) });
      }
      const report = await validateHooks({ hooks, problems: [], runner, trust: await kernel.get('trust'), strategy: settings.strategy, model: (await optional(() => kernel.get('model'))) !== undefined });
      // A settings hook's origin is `<file>#<JSON path>`.
      const origins = new Map(hooks.map((h) => [h.id, h.origin.split('#')] as const));
      for (const p of report.problems) {
        const [file, path] = (p.hook === undefined ? undefined : origins.get(p.hook)) ?? [];
        if (file === undefined || !files.has(file)) continue;
        check.add({ code: p.code ?? 'PLN_E_HOOK_UNRUNNABLE', message: p.message, ...(p.hint && { hint: p.hint }), file, ...(path && { path }) });
      }
    });

    return async () => {
      serving = false;
      await watching.catch(() => undefined);
      await watcher?.close();
      engine.close();
      await runner.close();
      await engine.settled(); // the background runs the runner just ended, before the trace closes
      trace.close();
    };
  },
});

/** The external hooks' decision as the kernel takes it; when blocked, the blocker's message comes first (it is the reason). */
function toEventResult(result: PlanResult): EventResult {
  const blocker = result.blockedBy === undefined ? undefined : result.outcomes.find((o) => o.hook.id === result.blockedBy && !o.allow);
  const first = blocker?.message;
  const messages = first === undefined ? result.messages : [first, ...result.messages.filter((m) => m !== first)];
  return {
    allow: result.allow,
    message: messages,
    systemMessage: result.systemMessages,
    context: result.context as Record<string, unknown>,
    ...(result.blockedBy && { by: result.blockedBy }),
    ...(result.code && { code: result.code }),
    ...(result.fix && { fix: result.fix }),
    ...(result.host && { host: result.host }),
  };
}

/** The user's hook definitions for an event that could not be read: the guards they were meant to be block that event (the engine keeps the gate events). */
function unreadableGuards(problems: readonly PlinthError[]): UnreadableGuard[] {
  return problems.flatMap((problem) => {
    const details = problem.details ?? {};
    if ((problem.code !== 'PLN_E_HOOK_INVALID' && problem.code !== 'PLN_E_HOOK_SHELL_REFUSED') || details.source !== 'user' || typeof details.event !== 'string') return [];
    return [{ event: details.event as EventName, where: `${String(details.origin)}#${String(details.path)}`, message: problem.message }];
  });
}

/** Whether `plugin`'s manifest counts: not when it was refused (not trusted), failed or was left out; one the kernel does not list (yet) does. */
function contributes(status: readonly PluginStatus[], plugin: string): boolean {
  const state = status.find((p) => p.name === plugin)?.state;
  return state === undefined || state === 'active' || state === 'lazy' || state === 'loading';
}

/** The union of every `file_change` hook's file patterns: what the watcher watches. */
function fileChangePatterns(hooks: readonly HookDefinition[]): string[] {
  return hooks.filter((h) => h.enabled && h.events.includes('file_change')).flatMap((h) => (h.matcher.peer !== undefined ? peerWatchList(h.matcher.peer) : (h.matcher.files ?? ['**'])));
}

/**
 * What a Claude Code `FileChanged` group with a matcher watches: the matcher split on `|`, each part a literal file
 * name in the project (a regular expression there would name a file literally, as in Claude Code). A group
 * without a matcher watches the whole project (Claude Code watches only what others name, or `watchPaths`).
 */
function peerWatchList(matcher: string): string[] {
  return matcher
    .split('|')
    .map((name) => name.trim())
    .filter(Boolean)
    .map((name) => name.replace(/[*?[\]{}()!+@\\]/g, (c) => `\\${c}`));
}

function problemKey(problem: PlinthError): string {
  return `${problem.code}\0${problem.message}`;
}
