/**
 * Requests servers send to the client, each answered (never left to the SDK's
 * "method not found"), within a per-connection rate limit (./request-limit.ts):
 * - `roots/list`: the host's `mcp:roots` service, else the workspace as one file:// root;
 * - `elicitation/create`: the host's `mcp:elicitation`, else a form on the terminal,
 *   else declined with a message in the log;
 * - `sampling/createMessage`: the host's `mcp:sampling`, else an error saying no host samples.
 *
 * The capabilities must be declared before `initialize`, so `prepareClient`
 * runs before `client.connect`; `attachFeatures` calls it too, for clients
 * created with `CLIENT_CAPABILITIES` already.
 */
import { isPlinthError, safeText } from 'plinth/sdk';
import { Redactor, processTerminal, whyNotAsk } from 'plinth/internal';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/client';
import type { ElicitationContent, ServiceType } from 'plinth/sdk';
import type { McpServerDefinition } from 'plinth/sdk';
import { callOrigin } from '../origin.js';
import { askElicitation } from './elicit-form.js';
import { requestLimit } from './request-limit.js';
import type { FeatureDeps, HostServiceName, Terminal } from './types.js';

/**
 * What plinth declares in `initialize` (at 2026-07-28: in every request's
 * `_meta`): roots (with change notifications), form and URL elicitation, sampling. `applyDefaults` (SEP-1034): every accepted answer is
 * completed with the requested schema's defaults for the fields it leaves out,
 * whoever answered (the host's `mcp:elicitation` or the form); the SDK's client
 * does the filling once the capability is declared.
 */
export const CLIENT_CAPABILITIES = { roots: { listChanged: true }, elicitation: { form: { applyDefaults: true }, url: {} }, sampling: {} } as const;

// The spec's code for "the user rejected the sampling request".
const SAMPLING_DECLINED = -1;
const prepared = new WeakSet<Client>();

/**
 * Declares the capabilities (when `client` is not connected yet) and installs
 * the handlers. Call it before `client.connect`, so that a request the server
 * sends right after `initialize` is answered; calling it again does nothing.
 */
export function prepareClient(client: Client, definition: McpServerDefinition, deps: Omit<FeatureDeps, 'registry' | 'emit'>): void {
  if (prepared.has(client)) return;
  prepared.add(client);
  try {
    client.registerCapabilities(CLIENT_CAPABILITIES);
  } catch {
    // Already connected: the capabilities given to `new Client` stand (see below if they lack some).
  }
  const server = definition.name;
  // One bucket for the connection's requests of every kind (./request-limit.ts).
  const limit = requestLimit(server, deps.log);
  const install = (what: string, register: () => void) => {
    try {
      register();
    } catch (error) {
      deps.log.warn(`server "${server}": ${what} requests will be refused: the client was connected without declaring that capability (create it with CLIENT_CAPABILITIES or call prepareClient before connect): ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  install('roots/list', () =>
    client.setRequestHandler('roots/list', async () => {
      limit.take('roots/list');
      const origin = callOrigin();
      const host = await hostService(deps, 'mcp:roots', server);
      const roots = host ? await answer(deps, server, 'roots/list', () => host({ server, ...(origin !== undefined && { origin }) })) : undefined;
      if (!roots) return { roots: [{ uri: pathToFileURL(deps.workspace).href, name: basename(deps.workspace) }] };
      return { roots: roots.map((root) => ({ uri: root.uri, ...(root.name !== undefined && { name: root.name }) })) };
    }),
  );

  install('elicitation/create', () =>
    client.setRequestHandler('elicitation/create', async (request, ctx) => {
      limit.take('elicitation/create');
      const params = request.params as { mode?: string; message: string; requestedSchema?: Record<string, unknown>; url?: string };
      const requestedSchema = params.requestedSchema ?? { type: 'object', properties: {} };
      // URL mode: the user is sent to a page (a sign-in, a payment); the answer is whether they went, never content.
      const url = params.mode === 'url' && typeof params.url === 'string' ? params.url : undefined;
      const origin = callOrigin();
      const host = await hostService(deps, 'mcp:elicitation', server);
      const answered = host
        ? await answer(deps, server, 'elicitation/create', () =>
            host({ server, message: params.message, requestedSchema, ...(url !== undefined && { mode: 'url' as const, url }), ...(origin !== undefined && { origin }) }),
          )
        : undefined;
      if (answered) return url !== undefined ? { action: answered.action } : withContent(answered);
      const terminal = terminalOf(deps.terminal);
      if (terminal && url !== undefined) {
        const shown = `${redactFor(deps, definition)(params.message)}\nOpen this address in your browser: ${safeText(url)}`;
        // One yes/no question (a form without fields would accept at once, without asking).
        const consent = { type: 'object', properties: { opened: { type: 'boolean', title: 'Opened it, go on?', default: true } } };
        const asked = await askElicitation({ server, message: shown, requestedSchema: consent }, terminal, ctx.mcpReq.signal);
        return { action: asked.action === 'accept' && asked.content?.opened === false ? 'decline' : asked.action };
      }
      if (terminal) return askElicitation({ server, message: redactFor(deps, definition)(params.message), requestedSchema }, terminal, ctx.mcpReq.signal);
      deps.log.warn(
        `server "${server}" asked for input ("${oneLine(redactFor(deps, definition)(params.message))}"), but there is no terminal to ask on: declined. A host answers such requests by providing the mcp:elicitation service.`,
      );
      return { action: 'decline' as const };
    }),
  );

  install('sampling/createMessage', () =>
    client.setRequestHandler('sampling/createMessage', async (request) => {
      limit.take('sampling/createMessage');
      const origin = callOrigin();
      const host = await hostService(deps, 'mcp:sampling', server);
      const sampled = host
        ? await answer(deps, server, 'sampling/createMessage', () => host({ server, params: request.params as Record<string, unknown>, ...(origin !== undefined && { origin }) }))
        : undefined;
      if (sampled) return sampled as never;
      deps.log.warn(`server "${server}" asked for a model completion (sampling), and no host takes sampling requests: declined.`);
      throw new ProtocolError(
        SAMPLING_DECLINED,
        'sampling declined: this plinth host has no model to sample from (a host answers sampling by providing the mcp:sampling service)',
      );
    }),
  );
}

/** The host's handler, or undefined when none is provided (or providing it failed, which is logged). */
async function hostService<K extends HostServiceName>(deps: Pick<FeatureDeps, 'getService' | 'log'>, name: K, server: string): Promise<ServiceType<K> | undefined> {
  try {
    return await deps.getService(name);
  } catch (error) {
    deps.log.warn(`server "${server}": the host's ${name} service is unavailable, answering without it: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/** Runs a host handler; its failure becomes the JSON-RPC error the server gets (redacted), not a dropped request. */
async function answer<T>(deps: Pick<FeatureDeps, 'log' | 'redact'>, server: string, method: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const text = isPlinthError(error) ? `${error.code}: ${error.message}${error.hint ? ` (${error.hint})` : ''}` : error instanceof Error ? error.message : String(error);
    const message = (deps.redact ?? ((t: string) => t))(text);
    deps.log.warn(`server "${server}": the host's handler for ${method} failed: ${message}`);
    throw new ProtocolError(ProtocolErrorCode.InternalError, `the host could not answer ${method}: ${message}`);
  }
}

/**
 * An accepted answer always carries `content`, empty when the host gave none:
 * the SDK fills the schema's defaults into the content object, and an accept
 * without one would reach the server without them.
 */
function withContent<T extends { action: string; content?: ElicitationContent }>(result: T): T {
  // Anything else (not an object, another action) is the SDK's to check and refuse.
  return typeof result === 'object' && result !== null && result.action === 'accept' && result.content === undefined ? { ...result, content: {} } : result;
}

/** The terminal to ask on: the one given, none (`null`), or stdin/stderr when both are terminals outside CI. */
export function terminalOf(given: Terminal | null | undefined): Terminal | undefined {
  if (given === null) return undefined;
  if (given) return given;
  const terminal = processTerminal();
  return whyNotAsk(terminal) === undefined ? terminal : undefined;
}

/** The server's own secrets masked, then `deps.redact`. */
export function redactFor(deps: Pick<FeatureDeps, 'redact'>, definition: Pick<McpServerDefinition, 'secrets'>): (text: string) => string {
  const redactor = new Redactor(deps.redact ? { then: deps.redact } : {});
  for (const secret of definition.secrets) redactor.add(secret);
  return (text) => redactor.text(text);
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
