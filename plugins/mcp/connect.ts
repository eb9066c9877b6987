/**
 * One connection attempt to one server: ask for the transport the definition
 * names (`transport:<name>`, so a deployment swaps it by configuration), open
 * it, hand a new SDK `Client` to the features module, `initialize`, discover.
 * The whole attempt is bounded by the connection timeout; whatever was opened
 * is closed again when it fails, times out or is called off.
 *
 * `auto` (a `url` without `transport`) tries streamable HTTP and falls back to
 * SSE only when the server answers the `initialize` POST with a bare 404 or
 * 405, the signature of a 2024-11-05 HTTP+SSE server (./http-answer.ts). A
 * server that explains its refusal with a JSON-RPC error (-32022 unsupported
 * protocol version, -32020, -32601, …) is reported with that error, coded;
 * when SSE fails too, the HTTP attempt's answer is reported with SSE's.
 */
import type { OAuthClientProvider, Client, PriorDiscovery, ResponseCacheStore, Transport } from '@modelcontextprotocol/client';
import { type Logger, type PluginKernel, PlinthError, isPlinthError, describeError } from 'plinth/sdk';
import { type EraVerdicts, eraKey } from './era-cache.js';
import { negotiationFailure, negotiationMode, protocolOf, staleVerdict } from './era.js';
import { mcpError } from './errors.js';
import { httpAnswer, looksLikeSseServer, supportedVersions, type HttpAnswer } from './http-answer.js';
import { outsideCalls } from './origin.js';
import { type FirstStarts, packageRunner } from './package-runner.js';
import { hasSecretReference, resolveSecretReferences } from './references.js';
import type { McpProtocolSetting, McpServerDefinition, TransportConnection, TransportContext, TransportFactory } from 'plinth/sdk';

/** What an attempt needs from the plugin. */
export interface ConnectDeps {
  readonly kernel: Pick<PluginKernel, 'get' | 'status' | 'apiVersion' | 'settingsEnv'>;
  readonly log: Logger;
  /** Masks server secrets and the kernel's sensitive values. */
  readonly redact: (text: string) => string;
  /** Request handlers and discovery for a new client: the features seam (undefined without a features module). */
  readonly attach: (client: Client, definition: McpServerDefinition) => Promise<FeatureSession | undefined>;
  /** The OAuth provider a remote server's transport gets (the oauth plugin's), or undefined. */
  readonly authProvider?: (definition: McpServerDefinition, signal: AbortSignal) => Promise<OAuthClientProvider | undefined>;
  /** The response cache a new client shares and the partition its private entries go to (./features/cache.ts); without it, each client has its own. */
  readonly cacheFor?: (definition: McpServerDefinition, authProvider: OAuthClientProvider | undefined) => Promise<{ responseCacheStore: ResponseCacheStore; cachePartition: string }>;
  /** Handed to the transport: see {@link TransportContext.exitGraceMs}. */
  readonly exitGraceMs?: number;
  /** Package runners' first starts and their longer limit (./package-runner.ts); without it, every start has the usual one. */
  readonly firstStarts?: FirstStarts;
  /** Where a first start shows its progress: a terminal, or undefined (nothing shown). */
  readonly progress?: NodeJS.WritableStream;
  /** The era of a server whose entry has no `protocol` (the mcp plugin's `protocol` setting); undefined: legacy. */
  readonly protocol?: McpProtocolSetting;
  /** The era verdicts of `auto` servers across runs (./era-cache.ts); without it, `auto` asks each time. */
  readonly eras?: EraVerdicts;
  /** The secret store `${secret:key}` references are read from (the `secrets` service), and where the values read are learnt for masking. */
  readonly secrets?: { readonly get: (key: string) => Promise<string | undefined>; readonly learn: (values: readonly string[]) => void };
}

/**
 * What the features module does with one client, as the connection goes:
 * request handlers are installed before `attach` resolves (so before
 * `initialize`), discovery runs in `connected`, `closed` forgets the tools.
 */
export interface FeatureSession {
  /**
   * `initialize` succeeded: discover tools and follow `list_changed`. Awaited,
   * within the connection timeout, before the server counts as connected, so
   * that whoever started it finds its tools. A failure is logged, not fatal,
   * except an OAuth one (`PLN_E_OAUTH_…`): the attempt fails with it.
   */
  connected?(): Promise<void>;
  /** The client closed (stopped, disconnected, failed): drop this connection's tools; `reason` is what calls to them answer. */
  closed?(reason: string): void;
}

/** A connected server. */
export interface Connected {
  readonly client: Client;
  readonly connection: TransportConnection;
  /** The transport in use (`http` or `sse` after an `auto` choice). */
  readonly transport: string;
  readonly session: FeatureSession | undefined;
  /** The era the connection speaks, and the revision negotiated (`client.getProtocolEra()`, `getNegotiatedProtocolVersion()`). */
  readonly era?: 'legacy' | 'modern';
  readonly protocolVersion?: string;
}

/** Transports shipped as builtin plugins, for the message when one is missing. */
const BUILTIN_TRANSPORTS: Readonly<Record<string, string>> = { stdio: 'transport-stdio', http: 'transport-http', sse: 'transport-sse' };

/** What the client tells servers it can answer; the features module registers the handlers. */
const CAPABILITIES = { roots: { listChanged: true }, sampling: {}, elicitation: { form: {} } };

/**
 * Connects once. Rejects with a PlinthError: `PLN_E_MCP_CONNECT_TIMEOUT`,
 * `PLN_E_MCP_CONNECT_FAILED`, `PLN_E_MCP_TRANSPORT_UNKNOWN`, a kernel service
 * code, or with `signal.reason` when called off. `opened` sees each
 * transport connection as soon as it exists, failed or not. Runs outside any
 * call's origin (./origin.ts), even when a call started it.
 */
export function connectOnce(declared: McpServerDefinition, deps: ConnectDeps, signal: AbortSignal, opened?: (connection: TransportConnection) => void): Promise<Connected> {
  return outsideCalls(() => connectAttempt(declared, deps, signal, opened));
}

async function connectAttempt(declared: McpServerDefinition, deps: ConnectDeps, signal: AbortSignal, opened?: (connection: TransportConnection) => void): Promise<Connected> {
  const definition = await withSecrets(withPluginSettings(declared, deps.kernel), deps);
  const runner = deps.firstStarts && packageRunner(definition);
  const first = runner !== undefined && !(await deps.firstStarts!.known(definition));
  const timeoutMs = first ? Math.max(definition.connectTimeoutMs, deps.firstStarts!.timeoutMs) : definition.connectTimeoutMs;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const bounded = AbortSignal.any([signal, deadline.signal]);
  let tried = definition.transport;
  let connection: TransportConnection | undefined;
  const seen = (made: TransportConnection) => {
    connection = made;
    opened?.(made);
  };
  const shown = first && deps.progress ? showProgress(definition, runner!, () => connection, deps) : undefined;
  try {
    const connected = await attempt();
    if (runner !== undefined) await deps.firstStarts!.remember(definition);
    return connected;
  } catch (error) {
    // Known, yet too slow for the usual limit: the package may be downloading again; the retry gets the longer one.
    if (runner !== undefined && !first && deadline.signal.aborted && !signal.aborted) await deps.firstStarts!.forget(definition);
    throw error;
  } finally {
    clearTimeout(timer);
    shown?.done();
  }

  /**
   * `open`, with the era verdict of an `auto` server: a known verdict is handed to
   * the SDK (`prior`), and what a fresh negotiation finds is remembered. Asked
   * again once, at once, when the connection failed in a way that says the
   * verdict no longer holds (./era.ts `staleVerdict`); a local server that exited
   * on the `server/discover` probe (before anything else was sent) is started
   * once more, with the legacy verdict: such servers end on any request before
   * `initialize`. Never more than two starts.
   */
  async function negotiate(name: string, signal: AbortSignal, known?: TransportFactory): Promise<Connected> {
    const { protocol } = protocolOf(definition, deps.protocol);
    const key = protocol === 'auto' && deps.eras ? eraKey(definition) : undefined;
    const local = definition.command !== undefined;
    // Locally, the probe is one line on the process kept anyway: a modern verdict is asked again each start
    // (a stdio server cannot refuse a stale one loudly), a legacy one spares the probe and the exit it may cost.
    let prior = key === undefined ? undefined : await deps.eras!.prior(key, { legacyOnly: true });
    let fresh = prior === undefined;
    for (let round = 0; ; round++) {
      const trace: EraTrace = {};
      try {
        const connected = await open(definition, name, deps, signal, seen, known, prior, trace);
        if (key !== undefined && fresh) {
          const discover = connected.client.getDiscoverResult();
          await deps.eras!.remember(key, connected.era === 'modern' && discover ? { era: 'modern', discover } : { era: 'legacy' });
        }
        return connected;
      } catch (error) {
        if (signal.aborted || round > 0 || key === undefined) throw error;
        if (prior !== undefined && staleVerdict(error, prior)) {
          deps.log.info(deps.redact(`MCP server "${definition.name}" no longer answers as a ${prior.kind} server (${describeError(error)}): asking for its protocol era again`));
          await deps.eras!.forget(key);
          prior = undefined;
          fresh = true;
          continue;
        }
        if (prior === undefined && local && trace.exitedOnProbe) {
          deps.log.info(deps.redact(`MCP server "${definition.name}" exited on the server/discover probe: starting it once more as a 2025 (legacy) server`));
          prior = { kind: 'legacy' };
          fresh = true;
          continue;
        }
        throw error;
      }
    }
  }

  /** One attempt within the limit, its failure as a coded error. */
  async function attempt(): Promise<Connected> {
    try {
      if (definition.transport !== 'auto') return await negotiate(definition.transport, bounded);
      const http = await factoryIfAny('http', deps);
      if (!http) {
        tried = 'sse';
        return await negotiate('sse', bounded);
      }
      tried = 'http';
      let answer: HttpAnswer;
      try {
        return await negotiate('http', bounded, http);
      } catch (error) {
        answer = httpAnswer(error);
        if (bounded.aborted || !looksLikeSseServer(answer)) throw error;
        deps.log.info(deps.redact(`MCP server "${definition.name}" answered streamable HTTP with ${answer.status}: trying SSE`));
      }
      tried = 'sse';
      try {
        return await negotiate('sse', bounded);
      } catch (error) {
        if (bounded.aborted || isPlinthError(error)) throw error;
        // Neither: the HTTP attempt's answer comes first, it is what the URL said to the current protocol.
        throw mcpError(
          'PLN_E_MCP_CONNECT_FAILED',
          deps.redact(`MCP server "${definition.name}" could not connect: streamable HTTP answered HTTP ${answer.status}, and the older HTTP+SSE transport failed too (${describeError(error)})`),
          { cause: error, details: { server: definition.name, transport: 'auto', httpStatus: answer.status } },
        );
      }
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (deadline.signal.aborted) {
        const why = first ? `, the longer limit of a package runner's first start (${runner}); raise the mcp plugin's firstStartTimeout if its download takes longer` : '';
        throw mcpError('PLN_E_MCP_CONNECT_TIMEOUT', `MCP server "${definition.name}" did not connect within ${timeoutMs} ms (${tried})${why}`, {
          details: { server: definition.name, transport: tried, timeoutMs, ...(first && { firstStart: runner }) },
        });
      }
      if (isPlinthError(error)) throw error;
      const mismatch = negotiationFailure(definition, deps.protocol, tried, error, deps.redact);
      if (mismatch) throw mismatch;
      // The server's own JSON-RPC answer to `initialize`; not a stdio transport's own -32000 (the process exited),
      // whose reason (and the sandbox's hint in it) is said whole below.
      const answered = httpAnswer(error).rpc;
      const refused = tried === 'http' || tried === 'sse' || tried === 'auto' || (answered !== undefined && answered.code !== -32000) ? answered : undefined;
      if (refused) throw await refusedInitialize(definition, tried, refused, error, deps);
      throw mcpError('PLN_E_MCP_CONNECT_FAILED', deps.redact(`MCP server "${definition.name}" could not connect (${tried}): ${describeError(error)}`), {
        details: { server: definition.name, transport: tried },
      });
    }
  }
}

/**
 * A package runner's first start on a terminal: one status line, redrawn each
 * second, with the seconds spent and the server's last stderr line (npm's and
 * uv's download messages go there), masked and cut to the terminal's width.
 */
function showProgress(definition: McpServerDefinition, runner: string, connection: () => TransportConnection | undefined, deps: ConnectDeps): { done: () => void } {
  const stream = deps.progress!;
  const started = Date.now();
  let drawn = false;
  const draw = () => {
    const seconds = Math.round((Date.now() - started) / 1000);
    const last = deps.redact(connection()?.stderrTail?.() ?? '').split('\n').map((line) => line.trim()).filter(Boolean).at(-1) ?? '';
    const line = `MCP server "${definition.name}": first start (${runner}), ${seconds} s${last ? `: ${last}` : ''}`.replace(/[^\x20-\x7e\u00a0-\uffff]/g, '?');
    // A terminal of no known size (columns 0 or undefined) gets a line of 100.
    const columns = (stream as { columns?: number }).columns ?? 0;
    stream.write(`\r\x1b[2K${line.slice(0, (columns > 20 ? columns : 101) - 1)}`);
    drawn = true;
  };
  const timer = setInterval(draw, 1000);
  timer.unref();
  return {
    done() {
      clearInterval(timer);
      if (drawn) stream.write('\r\x1b[2K');
    },
  };
}

/**
 * A plugin's local server (one with a `command`) gets that plugin's declared
 * settings as variables, on top of the launcher's allowlist and under the
 * entry's own `env` (which wins: a user's amendment is the last word). Read
 * at each attempt, so a plugin replaced with new settings starts its server
 * with the new values. Sensitive ones are masked by `deps.redact`, which ends
 * in the kernel's redactor, where every sensitive setting is known.
 */
function withPluginSettings(definition: McpServerDefinition, kernel: Pick<PluginKernel, 'settingsEnv'>): McpServerDefinition {
  if (definition.plugin === undefined || definition.command === undefined) return definition;
  const settings = kernel.settingsEnv(definition.plugin);
  if (Object.keys(settings).length === 0) return definition;
  return { ...definition, env: { ...settings, ...definition.env } };
}

/** `${secret:key}` in env and header values, read from the secret store at each start (references.ts). */
async function withSecrets(definition: McpServerDefinition, deps: ConnectDeps): Promise<McpServerDefinition> {
  const env = definition.env ?? {};
  const headers = definition.headers ?? {};
  if (![...Object.values(env), ...Object.values(headers)].some(hasSecretReference)) return definition;
  if (!deps.secrets) {
    throw new PlinthError('PLN_E_MCP_SECRET_MISSING', `MCP server "${definition.name}" references the secret store, and no plugin provides it`, { plugin: 'mcp', hint: 'enable the oauth plugin (it provides the "secrets" service), or write the value as ${env:NAME}' });
  }
  const found: string[] = [];
  const resolveAll = async (values: Readonly<Record<string, string>>) => {
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(values)) out[key] = hasSecretReference(value) ? await resolveSecretReferences(value, deps.secrets!.get, found) : value;
    return out;
  };
  try {
    const resolved = { ...definition, ...(definition.env && { env: await resolveAll(env) }), ...(definition.headers && { headers: await resolveAll(headers) }) };
    return resolved;
  } catch (cause) {
    throw new PlinthError('PLN_E_MCP_SECRET_MISSING', `MCP server "${definition.name}": ${(cause as Error).message}`, { plugin: 'mcp', hint: `install it again (\`plinth mcp install … --name ${definition.name}\`) to store the secret, or edit its entry` });
  } finally {
    deps.secrets.learn(found);
  }
}

/**
 * Opens one transport and initializes a client over it. Called off (timeout,
 * stop), it closes what it opened, which makes the pending step fail, and
 * rejects only once the close is done: a stdio process is gone by then.
 */
async function open(
  definition: McpServerDefinition,
  name: string,
  deps: ConnectDeps,
  signal: AbortSignal,
  opened: ((connection: TransportConnection) => void) | undefined,
  known?: TransportFactory,
  prior?: PriorDiscovery,
  trace: EraTrace = {},
): Promise<Connected> {
  const factory = known ?? (await abortable(transportFactory(name, definition, deps), signal));
  const authProvider = await abortable(deps.authProvider?.(definition, signal) ?? Promise.resolve(undefined), signal);
  const context: TransportContext = {
    log: deps.log,
    redact: deps.redact,
    ...(authProvider !== undefined && { authProvider }),
    ...(deps.exitGraceMs !== undefined && { exitGraceMs: deps.exitGraceMs }),
  };
  const connection = await abortable(
    Promise.resolve(factory.create(definition, context)).then((made) => {
      // Called off while the factory worked: nobody else will close this transport (never started, so quick).
      if (signal.aborted) void made.transport.close().catch(() => undefined);
      return made;
    }),
    signal,
  );
  // Kept by the caller for diagnosis (the stderr tail) even if this attempt fails.
  opened?.(connection);
  let client: Client | undefined;
  let connecting = false;
  let closing: Promise<void> | undefined;
  // Once `connect` ran, the client owns the transport; before, nobody does. Both paths close once.
  const close = (): Promise<void> =>
    // During the SDK's era probe the client does not hold the transport yet (`client.transport` is unset): close it directly.
    (closing ??= (connecting && client?.transport !== undefined ? client.close() : connection.transport.close()).catch((error: unknown) => {
      deps.log.debug(deps.redact(`MCP server "${definition.name}": closing after a failed attempt: ${describeError(error)}`));
    }));
  const onAbort = () => void close();
  signal.addEventListener('abort', onAbort, { once: true });
  let session: FeatureSession | undefined;
  try {
    const { Client } = await import('@modelcontextprotocol/client');
    if (signal.aborted) throw signal.reason;
    const { protocol } = protocolOf(definition, deps.protocol);
    const cache = await deps.cacheFor?.(definition, authProvider);
    if (signal.aborted) throw signal.reason;
    const transport = connection.transport;
    // The SDK probes a transport that has `pid` and `stderr` as stdio (a silent probe means legacy); locally, the probe gets
    // a part of the connection timeout, so that a legacy server that never answers it still has time for `initialize`.
    const probe = 'pid' in transport && 'stderr' in transport ? { probe: { timeoutMs: probeTimeout(definition.connectTimeoutMs) } } : {};
    client = new Client({ name: 'plinth', version: deps.kernel.apiVersion }, { capabilities: CAPABILITIES, versionNegotiation: { mode: negotiationMode(protocol), ...probe }, ...cache });
    traceSends(transport, trace);
    client.onerror = (error) => deps.log.debug(deps.redact(`MCP server "${definition.name}": ${describeError(error)}`));
    session = await deps.attach(client, definition);
    if (signal.aborted) throw signal.reason;
    connecting = true;
    // Bounded by the signal itself: closing the transport in the middle of the SDK's era probe does not always end `connect`.
    await abortable(client.connect(transport, prior !== undefined ? { prior } : undefined), signal);
    if (signal.aborted) throw signal.reason;
    if (session?.connected) {
      try {
        await session.connected();
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        // Let through without a token, then refused (`tools/list` answered 401): it needs a sign-in, it is not connected.
        if (isPlinthError(error) && error.code.startsWith('PLN_E_OAUTH_')) throw error;
        // Connected on a remembered modern verdict, and its first request refused: the verdict may be stale (the caller asks again).
        if (prior?.kind === 'modern') throw error;
        deps.log.warn(deps.redact(`MCP server "${definition.name}" connected, but discovering its tools failed: ${describeError(error)}`));
      }
      if (signal.aborted) throw signal.reason;
    }
    const era = client.getProtocolEra();
    const protocolVersion = client.getNegotiatedProtocolVersion();
    return { client, connection, transport: name, session, ...(era !== undefined && { era }), ...(protocolVersion !== undefined && { protocolVersion }) };
  } catch (error) {
    // Exited with the probe as the only request sent: the server ends on anything before `initialize`.
    trace.exitedOnProbe = trace.discover === true && trace.initialize !== true && connection.pid !== undefined && connection.pid() === undefined;
    session?.closed?.('the connection attempt failed');
    await close();
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** What was sent during one attempt, for the era decisions of `negotiate`. */
export interface EraTrace {
  /** `server/discover` went out. */
  discover?: boolean;
  /** `initialize` went out. */
  initialize?: boolean;
  /** The attempt failed with the server's process gone, and only the probe sent. */
  exitedOnProbe?: boolean;
}

/** Notes in `trace` which handshake requests the transport sent (sent whole: a send that failed does not count). */
function traceSends(transport: Transport, trace: EraTrace): void {
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    await send(message, options);
    if ('method' in message && 'id' in message) {
      if (message.method === 'server/discover') trace.discover = true;
      else if (message.method === 'initialize') trace.initialize = true;
    }
  };
}

/** The stdio probe's limit: a third of the connection timeout, between 0.5 and 5 s. */
function probeTimeout(connectTimeoutMs: number): number {
  return Math.min(5000, Math.max(500, Math.floor(connectTimeoutMs / 3)));
}

/** `transport:<name>`, or PLN_E_MCP_TRANSPORT_UNKNOWN naming the plugin to install or enable. */
async function transportFactory(name: string, definition: McpServerDefinition, deps: ConnectDeps): Promise<TransportFactory> {
  let service: unknown;
  try {
    service = await deps.kernel.get(`transport:${name}`);
  } catch (error) {
    const code = isPlinthError(error) ? error.code : '';
    if (code !== 'PLN_E_SERVICE_MISSING' && code !== 'PLN_E_SERVICE_UNAVAILABLE' && code !== 'PLN_E_SERVICE_NOT_PROVIDED') throw error;
    throw mcpError('PLN_E_MCP_TRANSPORT_UNKNOWN', `MCP server "${definition.name}" uses transport "${name}", but ${missingTransport(name, deps)}`, {
      cause: error,
      details: { server: definition.name, transport: name, origin: definition.origin },
    });
  }
  if (typeof (service as Partial<TransportFactory> | undefined)?.create !== 'function') {
    throw mcpError('PLN_E_MCP_TRANSPORT_UNKNOWN', `MCP server "${definition.name}" uses transport "${name}", but the service transport:${name} has no create() function`, {
      hint: 'the plugin providing it must provide a TransportFactory (plugins/mcp/types.ts)',
      details: { server: definition.name, transport: name },
    });
  }
  return service as TransportFactory;
}

/** For `auto`: the HTTP factory, or undefined when no plugin provides it (SSE is tried alone then). */
async function factoryIfAny(name: string, deps: ConnectDeps): Promise<TransportFactory | undefined> {
  try {
    const service = await deps.kernel.get(`transport:${name}`);
    return typeof (service as Partial<TransportFactory> | undefined)?.create === 'function' ? (service as TransportFactory) : undefined;
  } catch {
    return undefined;
  }
}

/** Why `transport:<name>` is not there, and what to do: which plugin to enable or install. */
function missingTransport(name: string, deps: ConnectDeps): string {
  const plugin = BUILTIN_TRANSPORTS[name];
  if (plugin === undefined) return `no plugin provides transport:${name}: install a plugin that lists "transport:${name}" in its "provides", or correct "transport"`;
  const status = deps.kernel.status().find((p) => p.name === plugin);
  if (!status) return `the plugin that provides it, "${plugin}", is not installed: reinstall plinth or add a plugin that provides transport:${name}`;
  if (status.error?.code === 'PLN_E_PLUGIN_DISABLED' || status.error?.code === 'PLN_E_DEP_DISABLED') {
    return `the plugin that provides it, "${plugin}", is disabled: set plugins.${plugin}.enabled to true`;
  }
  return `the plugin that provides it, "${plugin}", did not load (${status.error?.code ?? status.state}): \`plinth plugins why ${plugin}\` says why`;
}

/**
 * The server answered `initialize` with a JSON-RPC error: it was reached and
 * said why not. Reported as it said it, with its code: -32022 (a protocol
 * revision it does not serve) and -32601 (no `initialize` at all, as a server
 * of the stateless 2026-07-28 revision) are PLN_E_MCP_PROTOCOL_UNSUPPORTED;
 * any other (-32020 header mismatch, …) PLN_E_MCP_CONNECT_FAILED.
 */
async function refusedInitialize(definition: McpServerDefinition, tried: string, rpc: NonNullable<HttpAnswer['rpc']>, error: unknown, deps: ConnectDeps): Promise<PlinthError> {
  const said = `JSON-RPC error ${rpc.code}${rpc.message ? ` "${rpc.message.slice(0, 300)}"` : ''}`;
  const { status } = httpAnswer(error);
  const details = { server: definition.name, transport: tried, rpcCode: rpc.code, ...(status !== undefined && { httpStatus: status }) };
  if (rpc.code === -32022 || rpc.code === -32601) {
    const supported = supportedVersions(rpc.data);
    const { protocol, where } = protocolOf(definition, deps.protocol);
    // A value of the SDK, imported here: a static import would load the whole SDK with this plugin, on every command.
    const { LATEST_PROTOCOL_VERSION } = await import('@modelcontextprotocol/client');
    const what = rpc.code === -32022 ? `does not serve MCP ${LATEST_PROTOCOL_VERSION}, the 2025 revision plinth asked for with \`initialize\`` : 'does not know `initialize`, the 2025 handshake';
    const modern = supported.find((version) => version >= '2026-07-28');
    const change = `${where} says "${protocol}": set "protocol": "auto"${modern !== undefined ? ` (or "${modern}")` : ''} in its mcpServers entry to reach a server of the 2026-07-28 era`;
    return mcpError('PLN_E_MCP_PROTOCOL_UNSUPPORTED', deps.redact(`MCP server "${definition.name}" ${what}: it answered ${said} (${tried})${supported.length > 0 ? `; it serves ${supported.join(', ')}` : ''}; ${change}`), {
      cause: error,
      hint: `set "protocol": "auto" in its mcpServers entry (or plugins.mcp.settings.protocol for every server)`,
      details: { ...details, protocol, ...(supported.length > 0 && { supported }) },
    });
  }
  return mcpError('PLN_E_MCP_CONNECT_FAILED', deps.redact(`MCP server "${definition.name}" refused to connect (${tried}): it answered \`initialize\` with ${said}`), { cause: error, details });
}

/** `promise`, or a rejection with `signal.reason` as soon as `signal` aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
