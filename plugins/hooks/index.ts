/**
 * The hooks plugin: external hook scripts for every agent event. Definitions
 * come from settings, plugin manifests and legacy files; each run is gated by
 * the trust plugin, planned, rate limited and recorded.
 */
import { join } from 'node:path';
import { EVENTS, definePlugin, type EventName, type EventResult, type PlinthError, type PluginInfo } from 'plinth/sdk';
import { hooksCommands } from './commands.js';
import { HookEngine, type UnreadableGuard } from './engine.js';
import { createRateLimiter } from './rate-limit.js';
import { createRunner } from './runner/index.js';
import type { HooksService } from 'plinth/sdk';
import { hookSettings } from './settings.js';
import { collectHooks } from './sources.js';
import { createTrace } from './trace.js';
import type { PlanResult } from './types.js';
import type { WorkspaceWatcher } from './watcher.js';

export default definePlugin({
  setup(kernel, ctx) {
    const settings = hookSettings(ctx.settings);
    const defaults = { timeoutMs: settings.timeout, idleMs: settings.persistentIdleMs };
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
    });
    const limiter = createRateLimiter(settings.perMinute === undefined ? {} : { globalPerMinute: settings.perMinute });
    const trace = createTrace(join(ctx.paths.home, 'hooks-trace.jsonl'), settings.traceSize, (text) => kernel.redact(text));
    const engine = new HookEngine({
      runner,
      limiter,
      trace,
      trust: () => kernel.get('trust'),
      strategy: settings.strategy,
      workspace: ctx.paths.workspace,
      log: ctx.log,
      redact: (text) => kernel.redact(text),
    });

    // Manifests arrive through the kernel's replay; definitions are read once every
    // eager plugin is set up, then only the events that have hooks get a handler.
    const plugins: PluginInfo[] = [];
    kernel.hooks.manifest.tap((info) => void plugins.push(info));
    let loading: ReturnType<typeof collectHooks> | undefined;
    const definitions = () => {
      // A plugin that was refused (not trusted) or failed contributes no hooks.
      const usable = new Set(kernel.status().filter((p) => p.state === 'active' || p.state === 'lazy').map((p) => p.name));
      loading ??= collectHooks(
        { layers: kernel.configLayers, plugins: plugins.filter((p) => usable.has(p.name)), home: ctx.paths.home, workspace: ctx.paths.workspace },
        defaults,
      );
      return loading;
    };

    kernel.hooks.ready.tap(async () => {
      const { hooks, problems } = await definitions();
      for (const problem of problems) ctx.log.warn(`${problem.code}: ${problem.message}`);
      engine.setHooks(hooks, unreadableGuards(problems));
      for (const event of engine.events()) {
        kernel.on(event, async (context) => {
          const result = await engine.fire(event, context);
          return result && toEventResult(result);
        });
      }
    });

    // file_change only while the host stays up (`plinth up`), never for one command.
    let watcher: WorkspaceWatcher | undefined;
    kernel.hooks.serve.tap(async () => {
      const { hooks } = await definitions();
      const patterns = hooks.filter((h) => h.enabled && h.events.includes('file_change')).flatMap((h) => h.matcher.files ?? ['**']);
      if (patterns.length === 0) return;
      const { watchWorkspace } = await import('./watcher.js');
      watcher = watchWorkspace({
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
      await watcher.ready;
    });

    const service: HooksService = {
      definitions: async () => {
        const { hooks, problems } = await definitions();
        return { hooks, problems: problems.map((p) => ({ code: p.code, message: p.message, ...(p.hint && { hint: p.hint }) })) };
      },
      lastRun: (event: EventName) => engine.lastRun(event),
      counts: () => ({ hooks: limiter.counts(), global: limiter.globalCounts() }),
      askAgent: engine.askAgent,
    };
    kernel.provide('hooks', service);
    kernel.hooks.commands.tap((registry) => {
      for (const command of hooksCommands({ kernel, service, trace, workspace: ctx.paths.workspace, home: ctx.paths.home, events: EVENTS, runner, strategy: settings.strategy })) registry.add(command);
    });

    return async () => {
      await watcher?.close();
      await runner.close();
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
  };
}

/** The user's hook definitions for an event that could not be read: the guards they were meant to be block that event (the engine keeps the gate events). */
function unreadableGuards(problems: readonly PlinthError[]): UnreadableGuard[] {
  return problems.flatMap((problem) => {
    const details = problem.details ?? {};
    if (problem.code !== 'PLN_E_HOOK_INVALID' || details.source !== 'user' || typeof details.event !== 'string') return [];
    return [{ event: details.event as EventName, where: `${String(details.origin)}#${String(details.path)}`, message: problem.message }];
  });
}
