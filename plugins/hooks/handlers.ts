/**
 * The hook handlers that run no process: `http` (POST the input document to a URL), `mcp_tool`
 * (call a tool of a configured MCP server) and `prompt` / `agent` (ask the host's `model`
 * service). Each ends as a command's would: what the handler produced is read as its stdout
 * (a peer's output rules for a peer hook, plinth's protocol otherwise), a failure is a failure of
 * the hook (its `onError` decides), and a handler that never got to decide (no connection, no
 * server, no grant, no model) blocks a gate event whatever its `onError` says.
 *
 * Secrets: a header's value is filled in from the variables the definition lists
 * (`allowedEnvVars`) at each request and never appears in a message, a log or the trace.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { type CapabilityCheck, type CapabilityPlaces, type CapabilityRequest, type EventName, type HookFailure, type McpService, type ModelService, type PlinthError, type Principal, isGateEvent } from 'plinth/sdk';
import { capabilityDenied, capabilityTarget, permits } from 'plinth/internal';
import { z } from 'zod';
import { peerRunResult } from './dialects/output.js';
import type { HookRefusal, HookSkip } from './execute.js';
import { dropPrototypeKeys, encodeInput, isPlainObject } from './protocol.js';
import { type Outcome, hookLabel, toRunResult } from './runner/outcome.js';
import { type HookDefinition, type RunInput, type RunResult, isPeerInput } from './types.js';

/** The action types this module runs. */
export type HandlerAction = Extract<HookDefinition['action'], { type: 'http' | 'mcp_tool' | 'prompt' | 'agent' }>;

/** Whether `hook` runs through this module (not a process, not a legacy askAgent prompt). */
export function isHandlerHook(hook: HookDefinition): hook is HookDefinition & { action: HandlerAction } {
  const type = hook.action.type;
  return type === 'http' || type === 'mcp_tool' || type === 'prompt' || type === 'agent';
}

/** What the handlers need from the plugin. */
export interface HandlerDeps {
  /** The `mcp` service, or undefined when no plugin provides it. */
  readonly mcp: () => Promise<McpService | undefined>;
  /** The host's `model` service, or undefined when none provides it. */
  readonly model: () => Promise<ModelService | undefined>;
  /** The `capabilities` service (the sandbox's grants), or undefined without one: then a principal is held to what it declares. */
  readonly capabilities: () => Promise<CapabilityCheck | undefined>;
  /** Whom the hook acts for (its plugin, or its settings scope). */
  readonly principalOf: (hook: HookDefinition) => Principal;
  readonly paths: { readonly home: string; readonly workspace: string };
  /** Byte limit of a response body, as of a command's stdout. */
  readonly maxOutputBytes: number;
  /** Where header variables are read (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The plugin's teardown signal: aborts requests in flight. */
  readonly signal?: AbortSignal;
}

/** The answer a `prompt` or `agent` hook's model gives: Claude Code's `{ ok, reason }`. */
export const HOOK_ANSWER_SCHEMA: Readonly<Record<string, unknown>> = Object.freeze({
  type: 'object',
  properties: {
    ok: { type: 'boolean', description: 'true when the condition is met (allow); false to block, with a reason' },
    reason: { type: 'string', description: 'why the condition is not met (shown to the agent when ok is false)' },
  },
  required: ['ok'],
  additionalProperties: false,
});

const answerSchema = z.object({ ok: z.boolean(), reason: z.string().optional() });

/** An agent hook's turn limit when the definition names none (Claude Code's agent hooks stop after 50 turns). */
export const DEFAULT_AGENT_TURNS = 50;

type Result = RunResult | HookSkip | HookRefusal;

/** Runs one handler hook with its input; never throws. */
export async function runHandler(hook: HookDefinition & { action: HandlerAction }, event: EventName, input: RunInput, deps: HandlerDeps): Promise<Result> {
  const started = performance.now();
  const facts = () => ({ durationMs: Math.round((performance.now() - started) * 100) / 100, stderrTail: '' });
  const gate = isGateEvent(event);
  /** A handler that never got to decide: blocks a gate event, elsewhere fails (its onError decides). */
  const cannot = (failure: HookFailure, why: string, fix: string, code = 'PLN_E_HOOK_UNRUNNABLE'): Result => {
    if (gate) return { status: 'blocked', failure, code, message: `Hook "${hook.id}" cannot run: ${why}. ${event} is blocked until it can run (it guards this event). Fix: ${fix}`, fix };
    return { ok: false, failure, message: `${hookLabel(hook)} was not run: ${why}`, ...facts() };
  };
  const failed = (failure: HookFailure, message: string): Result => ({ ok: false, failure, message, ...facts() });
  const read = (outcome: Outcome): Result => {
    const result = isPeerInput(input) ? peerRunResult(hook, input, outcome, facts()) : toRunResult(hook, outcome, facts());
    return result;
  };
  /** One abort for the hook's time limit and the plugin's teardown; `done` clears both (cheaper than AbortSignal.any and .timeout per run). */
  const limit = (): Limit => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`timed out after ${hook.timeoutMs} ms`)), Math.min(Math.max(1, hook.timeoutMs), 2_147_483_647));
    const running = inFlight(deps.signal);
    if (running === undefined) controller.abort(new Error('the hooks plugin is closing'));
    else running.add(controller);
    return {
      signal: controller.signal,
      done: () => {
        clearTimeout(timer);
        running?.delete(controller);
      },
    };
  };

  try {
    switch (hook.action.type) {
      case 'http':
        return await runHttp(hook, hook.action, input, deps, { cannot, failed, read, limit });
      case 'mcp_tool':
        return await runMcpTool(hook, hook.action, input, deps, { cannot, failed, read, limit });
      case 'prompt':
      case 'agent':
        return await runModel(hook, hook.action, event, input, deps, { cannot, failed, read, limit, gate });
    }
  } catch (error) {
    // Something it needs threw (a service gone with its plugin, a grant store unreadable): a guard that could not run.
    const why = error instanceof Error ? error.message : String(error);
    return cannot('spawn_failed', `it could not be run (${why})`, `see \`plinth hooks validate\`; the hook is defined at ${hook.origin}`);
  }
}

interface Steps {
  cannot(failure: HookFailure, why: string, fix: string, code?: string): Result;
  failed(failure: HookFailure, message: string): Result;
  read(outcome: Outcome): Result;
  limit(): Limit;
}

/** The runs in flight per teardown signal: one listener per signal aborts them all (adding and removing a listener per run costs more than the run's own work). */
const flights = new WeakMap<AbortSignal, Set<AbortController>>();
const unowned = new Set<AbortController>();

/** The set to put a run's controller in, or undefined when `owner` is already aborted. */
function inFlight(owner: AbortSignal | undefined): Set<AbortController> | undefined {
  if (owner === undefined) return unowned;
  if (owner.aborted) return undefined;
  let set = flights.get(owner);
  if (set === undefined) {
    const running = new Set<AbortController>();
    owner.addEventListener('abort', () => {
      for (const controller of running) controller.abort(new Error('the hooks plugin is closing'));
      running.clear();
    }, { once: true });
    flights.set(owner, (set = running));
  }
  return set;
}

/**
 * A signal of our own that aborts with `owner` (the plugin's teardown signal, which many parts of
 * plinth listen to): a request that adds and removes its listener here scans only the requests in
 * flight, not every listener of the teardown signal.
 */
const twins = new WeakMap<AbortSignal, AbortSignal>();
function twin(owner: AbortSignal | undefined): AbortSignal | undefined {
  if (owner === undefined) return undefined;
  let own = twins.get(owner);
  if (own === undefined) {
    const controller = new AbortController();
    if (owner.aborted) controller.abort(owner.reason);
    else owner.addEventListener('abort', () => controller.abort(owner.reason), { once: true });
    twins.set(owner, (own = controller.signal));
  }
  return own;
}

const utf8 = new TextEncoder();

/** Each http hook's URL, parsed once (definitions do not change). */
const parsedUrls = new WeakMap<object, URL>();

interface Limit {
  readonly signal: AbortSignal;
  done(): void;
}

// ── http ────────────────────────────────────────────────────────────────────

/** `$VAR`, `${VAR}` and `${env:VAR}` in a header value. */
const HEADER_VARIABLE = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/** The variables a header value refers to, each once. */
export function headerVariables(headers: Readonly<Record<string, string>>): string[] {
  const names = new Set<string>();
  for (const value of Object.values(headers)) for (const m of value.matchAll(HEADER_VARIABLE)) names.add((m[1] ?? m[2] ?? m[3])!);
  return [...names];
}

/** The headers with their variables filled in: a listed variable's value (`""` when unset), `""` for one not listed (as Claude Code does). */
export function expandHeaders(headers: Readonly<Record<string, string>>, allowed: readonly string[], env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = value.replace(HEADER_VARIABLE, (_all, a: string | undefined, b: string | undefined, c: string | undefined) => {
      const variable = (a ?? b ?? c)!;
      return allowed.includes(variable) ? (env[variable] ?? '') : '';
    });
  }
  return out;
}

async function runHttp(hook: HookDefinition, action: Extract<HandlerAction, { type: 'http' }>, input: RunInput, deps: HandlerDeps, steps: Steps): Promise<Result> {
  let url = parsedUrls.get(action);
  if (url === undefined) parsedUrls.set(action, (url = new URL(action.url)));
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname;
  const network = await capability(hook, { kind: 'network', host, port }, deps);
  if (network) return steps.cannot('not_allowed', `its request to ${host}:${port} is not allowed (${network.code}: ${network.message})`, grantFix(hook, network, `"network": { "allow": ["${url.host}"] }`), network.code);
  // The variables a header fills in are read from plinth's environment: for a principal held to its grants, each must be granted.
  const used = headerVariables(action.headers).filter((name) => action.allowedEnvVars.includes(name));
  for (const name of used) {
    const env = await capability(hook, { kind: 'env', name }, deps);
    if (env) return steps.cannot('not_allowed', `its header reads the environment variable ${name}, which it may not (${env.code}: ${env.message})`, grantFix(hook, env, `"env": ["${name}"]`), env.code);
  }
  const headers = expandHeaders(action.headers, action.allowedEnvVars, deps.env ?? process.env);
  const limit = steps.limit();
  try {
    return await postHook(hook, url, headers, input, limit.signal, deps, steps);
  } finally {
    limit.done();
  }
}

async function postHook(hook: HookDefinition, url: URL, headers: Record<string, string>, input: RunInput, signal: AbortSignal, deps: HandlerDeps, steps: Steps): Promise<Result> {
  const payload = Buffer.from(isPeerInput(input) ? JSON.stringify(input.document) : encodeInput(input), 'utf8');
  let answer: { status: number; body: Uint8Array };
  try {
    answer = await post(url, { ...headers, 'content-type': 'application/json', 'content-length': String(payload.byteLength) }, payload, signal, deps.maxOutputBytes);
  } catch (error) {
    if (signal.aborted) return timedOut(hook, steps, deps);
    if (error instanceof TooLarge) return steps.read({ kind: 'too_large', stream: 'stdout', limit: deps.maxOutputBytes });
    const why = describeRequestError(error);
    if (error instanceof ResponseError) return steps.failed('request_failed', `${hookLabel(hook)}: the response of ${url.origin}${url.pathname} could not be read (${why})`);
    return steps.cannot('spawn_failed', `its POST to ${url.origin}${url.pathname} failed (${why})`, `start the server at ${url.origin}, or correct the hook's "url" (defined at ${hook.origin})`);
  }
  if (answer.status < 200 || answer.status > 299) {
    const text = new TextDecoder().decode(answer.body.subarray(0, 300)).trim();
    return steps.failed('request_failed', `${hookLabel(hook)}: ${url.origin}${url.pathname} answered HTTP ${answer.status}${text ? ` (${text})` : ''}`);
  }
  return steps.read({ kind: 'output', bytes: answer.body, exitCode: 0 });
}

class TooLarge extends Error {}
/** The request was sent and answered, but its body broke off. */
class ResponseError extends Error {}

/**
 * Connections kept open between requests (a policy server is asked at every tool call), one
 * agent per scheme for the whole process; idle sockets do not hold the process open.
 */
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/**
 * One POST with node's own client (lighter than WHATWG fetch, whose streams cost more than the
 * request on a local server): no redirect followed (it would lead past the network grant the URL
 * was checked against), the body cut at `limit` bytes.
 */
function post(url: URL, headers: Record<string, string>, payload: Buffer, signal: AbortSignal, limit: number): Promise<{ status: number; body: Uint8Array }> {
  return new Promise((resolvePost, reject) => {
    const secure = url.protocol === 'https:';
    const request = (secure ? httpsRequest : httpRequest)(url, { method: 'POST', headers, agent: secure ? agents.https : agents.http, signal }, (response) => {
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > limit) {
        response.destroy();
        reject(new TooLarge());
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.byteLength;
        if (size > limit) {
          response.destroy();
          reject(new TooLarge());
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', () => resolvePost({ status: response.statusCode ?? 0, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) }));
      response.on('error', (error) => reject(new ResponseError(error.message)));
      response.on('aborted', () => reject(new ResponseError('the connection closed before the whole answer came')));
    });
    request.on('error', reject);
    request.end(payload);
  });
}

function timedOut(hook: HookDefinition, steps: Steps, deps: HandlerDeps): Result {
  if (deps.signal?.aborted) return steps.failed('timeout', `${hookLabel(hook)} was stopped: the hooks plugin is closing`);
  return steps.read({ kind: 'timeout', afterMs: hook.timeoutMs });
}

function describeRequestError(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string' && code.startsWith('E')) return code;
  return error instanceof Error ? error.message : String(error);
}

// ── mcp_tool ────────────────────────────────────────────────────────────────

/**
 * `input` with every `${path}` in its strings filled in from the hook's input document
 * (`${tool_input.file_path}`); a string that is one reference alone takes the value as it is
 * (an object, a number), a reference inside text its text (JSON for an object); a path that
 * leads nowhere is `""`.
 */
export function fillInput(value: unknown, document: Readonly<Record<string, unknown>>): unknown {
  return compiledInput(value)(document);
}

type Filler = (document: Readonly<Record<string, unknown>>) => unknown;

/** Each mcp_tool hook's `input`, compiled once (definitions do not change): what is filled in is read from each run's document. */
const compiledInputs = new WeakMap<object, Filler>();

function compiledInput(value: unknown): Filler {
  if (typeof value !== 'object' || value === null) return compileInput(value);
  let filler = compiledInputs.get(value);
  if (filler === undefined) compiledInputs.set(value, (filler = compileInput(value)));
  return filler;
}

const REFERENCE = /\$\{([A-Za-z0-9_.-]+)\}/g;

function compileInput(value: unknown): Filler {
  if (typeof value === 'string') {
    const whole = /^\$\{([A-Za-z0-9_.-]+)\}$/.exec(value);
    if (whole) {
      const keys = whole[1]!.split('.');
      return (document) => lookup(document, keys) ?? '';
    }
    // Literal text and references, alternating: ["text", keys, "text", …].
    const parts: Array<string | readonly string[]> = [];
    let at = 0;
    for (const match of value.matchAll(REFERENCE)) {
      parts.push(value.slice(at, match.index), match[1]!.split('.'));
      at = match.index + match[0].length;
    }
    if (parts.length === 0) return () => value;
    parts.push(value.slice(at));
    return (document) => {
      let text = '';
      for (const part of parts) {
        if (typeof part === 'string') text += part;
        else {
          const found = lookup(document, part);
          text += found === undefined ? '' : typeof found === 'string' ? found : JSON.stringify(found);
        }
      }
      return text;
    };
  }
  if (Array.isArray(value)) {
    const items = value.map(compileInput);
    return (document) => items.map((fill) => fill(document));
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value).map(([k, v]) => [k, compileInput(v)] as const);
    return (document) => Object.fromEntries(entries.map(([k, fill]) => [k, fill(document)]));
  }
  return () => value;
}

function lookup(document: Readonly<Record<string, unknown>>, keys: readonly string[]): unknown {
  let current: unknown = document;
  for (const key of keys) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** The document a handler's templates read: a peer's input document, or plinth's protocol input. */
function documentOf(input: RunInput): Readonly<Record<string, unknown>> {
  return isPeerInput(input) ? input.document : (input as unknown as Record<string, unknown>);
}

async function runMcpTool(hook: HookDefinition, action: Extract<HandlerAction, { type: 'mcp_tool' }>, input: RunInput, deps: HandlerDeps, steps: Steps): Promise<Result> {
  const denied = await capability(hook, { kind: 'mcp', server: action.server }, deps);
  if (denied) return steps.cannot('not_allowed', `it may not call the MCP server "${action.server}" (${denied.code}: ${denied.message})`, grantFix(hook, denied, `"mcp": ["${action.server}"]`), denied.code);
  const mcp = await deps.mcp();
  if (mcp === undefined) return steps.cannot('spawn_failed', 'no plugin provides the `mcp` service', 'enable the mcp plugin (`plinth ext enable mcp`)');
  if (mcp.definition(action.server) === undefined) {
    return steps.cannot('spawn_failed', `no MCP server "${action.server}" is configured`, `add the server to "mcpServers", or correct the hook's "server" (defined at ${hook.origin})`);
  }
  let client = mcp.client(action.server);
  if (client === undefined) {
    // Connecting makes the server's own trust check (a workspace server needs approval): a hook never bypasses it.
    const status = await mcp.start(action.server);
    client = mcp.client(action.server);
    if (client === undefined) {
      return steps.cannot('spawn_failed', `the MCP server "${action.server}" is not connected (${status.state}${status.error ? `: ${status.error.message}` : ''})`, `\`plinth mcp get ${action.server}\` says why; approve or correct the server`);
    }
  }
  const args = compiledInput(action.input)(documentOf(input)) as Record<string, unknown>;
  let result: Awaited<ReturnType<typeof client.callTool>>;
  try {
    // The SDK keeps the time limit (its own timer per request); the plugin's teardown cancels the call.
    const owner = twin(deps.signal);
    result = await client.callTool({ name: action.tool, arguments: args }, { timeout: Math.min(Math.max(1, hook.timeoutMs), 2_147_483_647), ...(owner && { signal: owner }) });
  } catch (error) {
    if (deps.signal?.aborted || (error as { code?: unknown })?.code === 'REQUEST_TIMEOUT') return timedOut(hook, steps, deps);
    return steps.failed('request_failed', `${hookLabel(hook)}: the call of ${action.server}/${action.tool} failed (${error instanceof Error ? error.message : String(error)})`);
  }
  const text = toolText(result);
  if (result.isError === true) return steps.failed('request_failed', `${hookLabel(hook)}: the tool ${action.server}/${action.tool} answered an error${text ? ` (${text.slice(0, 300)})` : ''}`);
  return steps.read({ kind: 'output', bytes: utf8.encode(text), exitCode: 0 });
}

/** A tool result as a command's stdout: its text content, else its structured content as JSON. */
export function toolText(result: { readonly content?: unknown; readonly structuredContent?: unknown }): string {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const text = blocks
    .filter((b): b is { type: 'text'; text: string } => isPlainObject(b) && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n');
  if (text.trim() !== '') return text;
  return isPlainObject(result.structuredContent) ? JSON.stringify(result.structuredContent) : '';
}

// ── prompt and agent ────────────────────────────────────────────────────────

/** Claude Code's templating: `$ARGUMENTS` is the input document as JSON (appended when the prompt has none); `\$` is a literal `$`. */
export function renderPrompt(prompt: string, document: Readonly<Record<string, unknown>>): string {
  const json = JSON.stringify(document);
  let used = false;
  const text = prompt.replace(/\\\$|\$ARGUMENTS\b/g, (match) => {
    if (match === '\\$') return '$';
    used = true;
    return json;
  });
  return used ? text : `${text}\n\n${json}`;
}

async function runModel(hook: HookDefinition, action: Extract<HandlerAction, { type: 'prompt' | 'agent' }>, event: EventName, input: RunInput, deps: HandlerDeps, steps: Steps & { gate: boolean }): Promise<Result> {
  const model = await deps.model();
  const missing = model === undefined ? 'no host or plugin provides the `model` service' : action.type === 'agent' && typeof model.agent !== 'function' ? 'the `model` service has no `agent()`' : undefined;
  if (missing !== undefined) {
    const why = `it is ${action.type === 'agent' ? 'an "agent"' : 'a "prompt"'} hook and ${missing}, so it has no model to ask`;
    const fix = `provide the \`model\` service (sdk/contracts/model.ts): the host calls \`kernel.provide('model', { complete, agent })\`; or remove the hook, or set "enabled": false on it (defined at ${hook.origin})`;
    if (steps.gate) return steps.cannot('unsupported', why, fix);
    const message = `${hookLabel(hook)} was not run on ${event}: ${why}`;
    return { status: 'skipped', failure: 'unsupported', message, systemMessage: message };
  }
  const prompt = renderPrompt(action.prompt, documentOf(input));
  const limit = steps.limit();
  const signal = limit.signal;
  const request = { prompt, schema: HOOK_ANSWER_SCHEMA, ...(action.model !== undefined && { model: action.model }), signal };
  let answer: unknown;
  try {
    const asking =
      action.type === 'prompt'
        ? model!.complete(request)
        : (async () => {
            const mcp = await deps.mcp();
            return model!.agent!({
              ...request,
              tools: mcp?.tools() ?? [],
              callTool: (name, args) => (mcp ? mcp.callTool(name, args, { signal }) : Promise.reject(new Error('no plugin provides the `mcp` service'))),
              maxTurns: action.maxTurns ?? DEFAULT_AGENT_TURNS,
            });
          })();
    // A host that ignores the signal does not hold the event past the hook's time (what it says after that is dropped).
    asking.catch(() => undefined);
    const stopped = aborted(signal);
    stopped.catch(() => undefined);
    answer = await Promise.race([asking, stopped]);
  } catch (error) {
    if (signal.aborted) return timedOut(hook, steps, deps);
    return steps.failed('request_failed', `${hookLabel(hook)}: the \`model\` service failed (${error instanceof Error ? error.message : String(error)})`);
  } finally {
    limit.done();
  }
  const parsed = answerSchema.safeParse(typeof answer === 'string' ? parseJson(answer) : answer);
  if (!parsed.success) {
    return steps.failed('invalid_output', `${hookLabel(hook)}: the model's answer is not { "ok": true|false, "reason"?: "…" } (${parsed.error.issues.map((i) => `${i.path.join('.') || 'answer'}: ${i.message}`).join('; ')})`);
  }
  const { ok, reason } = parsed.data;
  // Read as the peer reads it: `ok: false` is a block with the reason (Claude Code's decision "block").
  const output = isPeerInput(input)
    ? ok
      ? {}
      : { decision: 'block', reason: reason ?? `the ${action.type} hook's condition was not met` }
    : { allow: ok, ...(reason !== undefined && { message: reason }) };
  return steps.read({ kind: 'output', bytes: utf8.encode(JSON.stringify(output)), exitCode: 0 });
}

/** Rejects once `signal` aborts (the listener goes with the signal, which is the run's own). */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text, dropPrototypeKeys);
  } catch {
    return text;
  }
}

// ── grants ──────────────────────────────────────────────────────────────────

/** Whether the hook's principal may do `request` in plinth's process: the sandbox's grants, else what it declares (the user's own settings may). */
async function capability(hook: HookDefinition, request: CapabilityRequest, deps: HandlerDeps): Promise<PlinthError | undefined> {
  const principal = deps.principalOf(hook);
  const places = placesOf(principal, deps.paths);
  const checker = await deps.capabilities();
  try {
    // Read once: each read of a service's method goes through its view.
    const checkFor = checker?.checkFor;
    if (checkFor) return await checkFor(principal, request, places);
  } catch (error) {
    // The provider left (the sandbox plugin disabled since): held to what it declares, as without one.
    if ((error as PlinthError)?.code !== 'PLN_E_SERVICE_MISSING') throw error;
  }
  if (principal.id === 'settings:user') return undefined;
  if (await permits(principal.declared, request, { ...places, ...(principal.dir && { pluginDir: principal.dir }) })) return undefined;
  return capabilityDenied({ name: principal.id }, request.kind, capabilityTarget(request), 'it does not declare it');
}

/** The places a principal's grants are read against, kept per principal (and paths and home folder: made again when one changes). */
const placesMemo = new WeakMap<Principal, CapabilityPlaces>();

function placesOf(principal: Principal, paths: HandlerDeps['paths']): CapabilityPlaces {
  const home = homedir();
  const known = placesMemo.get(principal);
  if (known !== undefined && known.workspace === paths.workspace && known.plinthHome === paths.home && known.home === home) return known;
  const places: CapabilityPlaces = Object.freeze({ workspace: paths.workspace, home, plinthHome: paths.home, tmp: join(paths.home, 'sandbox', 'tmp', principal.id.replace(/[/:]/g, '+')) });
  placesMemo.set(principal, places);
  return places;
}

/** What grants a refused use: the error's own hint (the `plinth perms grant` command), and for a settings hook where its `permissions` go. */
function grantFix(hook: HookDefinition, error: PlinthError, declaration: string): string {
  const command = typeof error.details?.command === 'string' ? error.details.command : undefined;
  // Declared, not granted: the grant is what is missing.
  if (command !== undefined) return `grant it: ${command}${hook.source === 'workspace' ? ' (after reviewing the hook at ' + hook.origin + ')' : ''}`;
  if (hook.plugin === undefined) {
    const scope = hook.source === 'workspace' ? 'workspace' : 'user';
    return `declare it on the hook (defined at ${hook.origin}): "permissions": { ${declaration} }, then grant it: ${command ?? `plinth perms grant settings:${scope}`}`;
  }
  return error.hint ?? `declare ${declaration} in plugin "${hook.plugin}"'s manifest "permissions" and grant it: plinth perms grant ${hook.plugin}`;
}
