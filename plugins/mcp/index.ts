/**
 * The mcp plugin: MCP servers from settings and plugin manifests, many at
 * once. It provides the `mcp` service; `plinth up` (the `serve` hook) starts
 * every enabled server and keeps it, one-shot commands start servers on
 * demand, and the teardown closes every connection (no process left behind).
 * Transports come from plugins (`transport:<name>`); tools, resources and
 * prompts from ./features/, loaded with the first server.
 */
import { join } from 'node:path';
import { type Logger, type PlinthError, type PluginInfo, type PluginKernel, type PluginStatus, type StatusSection, definePlugin, optionalService } from 'plinth/sdk';
import { mcpCommands } from './commands.js';
import { configuredMcpRegistries } from './registry/client.js';
import { type DefinitionSet, collectServers } from './definitions.js';
import { FeatureHost } from './features-host.js';
import { createResponseCaches } from './features/cache.js';
import { ServerManager } from './manager.js';
import { EraVerdicts } from './era-cache.js';
import { FirstStarts } from './package-runner.js';
import { type SecretRedactor, createRedactor } from './redact.js';
import { createMcpService } from './service.js';
import { mcpSettings } from './settings.js';
import type { ServerStatus } from 'plinth/sdk';

export type { McpSettings } from './settings.js';

export default definePlugin({
  setup(kernel, ctx) {
    const settings = mcpSettings(ctx.settings);
    const redactor = createRedactor((text) => kernel.redact(text));
    const log = maskedLogger(ctx.log, redactor);

    // Manifests arrive through the kernel's replay; definitions are read once
    // every eager plugin is set up (`ready`), when plugin states are known.
    // After that, plugins that come, change or go (`manifest`, `unload`) update them.
    const plugins = new Map<string, PluginInfo>();
    let ready = false;
    let found: DefinitionSet | undefined;
    const read = () => readDefinitions(kernel, [...plugins.values()], ctx.paths, settings.connectTimeout, redactor, log, found?.problems ?? []);
    const definitions = (): DefinitionSet | undefined => {
      if (!ready) return undefined;
      found ??= read();
      return found;
    };
    kernel.hooks.ready.tap(() => {
      ready = true;
      definitions();
    });

    // Set as a one-shot command begins (commands.ts): its servers are stopped promptly, and no change stream is kept.
    let oneShot = false;
    const features = new FeatureHost({
      emit: (event, context) => kernel.emit(event, context),
      getService: (name) => optionalService(kernel, name),
      log,
      redact: (text) => redactor.text(text),
      workspace: ctx.paths.workspace,
      callTimeoutMs: settings.callTimeout,
      inputRounds: settings.inputRounds,
      ...(settings.serverLogLevel !== '' && { serverLogLevel: settings.serverLogLevel }),
      followChanges: () => !oneShot,
    });
    const responseCaches = createResponseCaches();
    const manager = new ServerManager({
      kernel,
      log,
      redact: (text) => redactor.text(text),
      attach: (client, definition) => features.session(client, definition),
      authProvider: async (definition, signal) => {
        // Only a remote server that may use OAuth loads the oauth plugin (it is lazy); without the plugin, no provider.
        if (definition.url === undefined || definition.oauth === false) return undefined;
        const oauth = await optionalService(kernel, 'oauth');
        return oauth?.providerFor(definition, { signal });
      },
      cacheFor: (definition, authProvider) => responseCaches.options(definition, authProvider),
      settings,
      protocol: settings.protocol,
      eras: new EraVerdicts(join(ctx.paths.home, 'mcp-eras.json'), { onError: (message) => log.debug(message) }),
      firstStarts: new FirstStarts(join(ctx.paths.home, 'mcp-runners.json'), settings.firstStartTimeout, (message) => log.debug(message)),
      ...(process.stderr.isTTY && { progress: process.stderr }),
      secrets: {
        get: async (key) => {
          const store = await optionalService(kernel, 'secrets');
          return store?.get(key);
        },
        learn: (values) => redactor.add(values),
      },
      trust: () => kernel.get('trust'),
      grants: () => optionalService(kernel, 'grants'),
      records: () => definitions()?.servers,
      signal: ctx.signal,
      toolCount: (server) => features.registry?.server(server)?.tools().length ?? 0,
      warmUp: () => Promise.all([import('@modelcontextprotocol/client'), features.load()]),
    });
    const service = createMcpService(manager, features, () => definitions()?.problems ?? []);
    kernel.provide('mcp', service);

    // `plinth config validate`: the server entries of the settings files, as they are read to start them.
    kernel.hooks.validate.tap((check) => {
      const files = new Set(check.files);
      for (const p of definitions()?.problems ?? []) {
        const origin = p.details?.origin;
        if (typeof origin !== 'string' || !files.has(origin)) continue;
        const path = p.details?.path;
        check.add({ code: p.code, message: p.message, ...(p.hint && { hint: p.hint }), file: origin, ...(typeof path === 'string' && path !== '' && { path }) });
      }
      // `mcpRegistries` of the user files (registry/client.ts); an unset token variable is not the file's fault.
      for (const layer of kernel.configLayers) {
        if (layer.scope !== 'user' || layer.settings.mcpRegistries === undefined || !files.has(layer.file)) continue;
        try {
          configuredMcpRegistries([layer], new Proxy({}, { get: () => 'set' }));
        } catch (error) {
          const p = error as PlinthError;
          const path = p.details?.path;
          check.add({ code: p.code, message: p.message, ...(p.hint && { hint: p.hint }), file: layer.file, ...(typeof path === 'string' && { path }) });
        }
      }
    });

    kernel.hooks.commands.tap((registry) => {
      const startOneShot = (exitGraceMs: number): void => {
        oneShot = true;
        manager.useExitGrace(exitGraceMs);
      };
      for (const command of mcpCommands({ kernel, service, oneShot: startOneShot })) registry.add(command);
    });

    // Only while the host stays up; in the background, because retries with
    // backoff may outlast the hook's time limit. States show progress.
    let starting: Promise<unknown> | undefined;
    let serving = false;
    kernel.hooks.serve.tap(() => {
      serving = true;
      if (!settings.startOnServe) return;
      starting = manager.startAll().catch((error: unknown) => log.debug(`startAll: ${(error as Error).message}`));
    });

    // A plugin's servers follow it: one that arrives adds them (started at once while serving),
    // a replaced one's are stopped and started again with its new version, one that leaves takes
    // them away. Servers whose definition did not change are left running. One change at a time.
    let changes: Promise<void> = Promise.resolve();
    const follow = (plugin: string): Promise<void> => {
      changes = changes.then(async () => {
        found = read();
        const update = manager.update(found.servers, {
          renew: (record) => record.definition.plugin === plugin,
          start: () => serving && settings.startOnServe,
        });
        starting = Promise.all([starting, update.started]);
        await update.stopped;
        for (const name of update.removed) {
          features.registry?.forget(name);
          responseCaches.forget(name);
        }
      });
      return changes;
    };
    kernel.hooks.manifest.tap((info) => {
      plugins.set(info.name, info); // a replaced plugin keeps its place (definition order)
      if (ready) return follow(info.name);
    });
    kernel.hooks.unload.tap((info) => {
      if (plugins.delete(info.name) && ready) return follow(info.name);
    });

    // `plinth up` shows every server once its first connection attempt has settled (the
    // connection timeout bounds it), with its health when the health plugin runs. A server
    // whose first attempt failed is shown `starting`, with that attempt's error: the status
    // does not wait through retries and their backoff (`up --once` would only stop them).
    kernel.hooks.status.tap(async (board) => {
      // Not past the kernel's limit on a status tap (10 s by default) either: a server that never
      // answers would take the whole section with it. Those still starting say so.
      if (settings.startOnServe && starting !== undefined) await settledWithin(Promise.race([starting, manager.firstAttempts()]), STATUS_WAIT_MS);
      const health = await optionalHealth(kernel);
      board.add(serverSection(service.servers(), health));
    });

    return async () => {
      await changes.catch(() => undefined);
      await manager.close();
      await starting;
    };
  },
});


/** How long the status section waits for the servers' first starts. */
const STATUS_WAIT_MS = 8000;

async function settledWithin(work: Promise<unknown> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** The health service's view, when the health plugin is installed and enabled. */
async function optionalHealth(kernel: PluginKernel): Promise<Map<string, string> | undefined> {
  try {
    const health = await kernel.get('health');
    return new Map(health.status().map((s) => [s.name, s.state]));
  } catch {
    return undefined;
  }
}

/** `plinth up`'s MCP section. */
function serverSection(servers: readonly ServerStatus[], health: Map<string, string> | undefined): StatusSection {
  const head = ['SERVER', 'TRANSPORT', 'SOURCE', 'STATE', ...(health ? ['HEALTH'] : []), 'TOOLS', 'PID', 'REASON'];
  const rows = servers.map((s) => [
    s.name,
    s.transport,
    s.source,
    s.state,
    ...(health ? [health.get(s.name) ?? '-'] : []),
    String(s.tools),
    s.pid === undefined ? '-' : String(s.pid),
    s.error ? `${s.error.code}: ${s.error.message}` : '',
  ]);
  const json = servers.map((s) => ({ ...s, ...(health && { health: health.get(s.name) ?? null }) }));
  return { key: 'mcpServers', title: 'MCP servers', head, rows, json };
}

/** Reads and normalises every definition; logs the problems not logged before (`known`) and learns the secrets first. */
function readDefinitions(
  kernel: PluginKernel,
  plugins: readonly PluginInfo[],
  paths: { home: string; workspace: string },
  connectTimeoutMs: number,
  redactor: SecretRedactor,
  log: Logger,
  known: readonly PlinthError[],
): DefinitionSet {
  const status = kernel.status();
  const set = collectServers({
    layers: kernel.configLayers,
    plugins: plugins.filter((p) => contributes(status, p.name)),
    manifests: plugins,
    config: kernel.config,
    env: process.env,
    settingsEnv: (plugin) => kernel.settingsEnv(plugin),
    home: paths.home,
    workspace: paths.workspace,
    connectTimeoutMs,
  });
  for (const server of set.servers) redactor.add(server.definition.secrets);
  const logged = new Set(known.map(problemKey));
  for (const problem of set.problems) if (!logged.has(problemKey(problem))) log.warn(`${problem.code}: ${problem.message}`);
  return set;
}

/** Whether `plugin`'s servers count: not when it was refused (not trusted), failed or was left out; one the kernel does not list (yet) does. */
function contributes(status: readonly PluginStatus[], plugin: string): boolean {
  const state = status.find((p) => p.name === plugin)?.state;
  return state === undefined || state === 'active' || state === 'lazy' || state === 'loading';
}

function problemKey(problem: PlinthError): string {
  return `${problem.code}\0${problem.message}`;
}

/** The plugin's logger with server secrets masked in messages and data. */
function maskedLogger(log: Logger, redactor: SecretRedactor): Logger {
  const wrap =
    (write: Logger['info']): Logger['info'] =>
    (message, data) =>
      write(redactor.text(message), data === undefined ? undefined : redactor.value(data));
  return { debug: wrap(log.debug.bind(log)), info: wrap(log.info.bind(log)), warn: wrap(log.warn.bind(log)), error: wrap(log.error.bind(log)) };
}
