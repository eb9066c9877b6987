/**
 * Claude Code's hook handler types besides `command`, written as its hooks reference shows them,
 * run through the real kernel and the hooks plugin:
 *
 * - `http`: a real HTTP server on 127.0.0.1 receives the input document; its answer blocks or
 *   allows; a timeout and a non-2xx status are non-blocking errors; header variables are filled
 *   only from `allowedEnvVars`; a workspace hook whose host is not granted is refused.
 * - `mcp_tool`: a real MCP server (SDK v2, stdio) is called with `${…}` filled from the input
 *   document; its text or structured result blocks or allows.
 * - `prompt` / `agent`: a host plugin provides the `model` service; `ok: false` blocks; without a
 *   provider a gate event is blocked, another event records the hook as not run.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { InlinePlugin } from '../kernel/kernel.js';
import type { ModelAgentRequest, ModelRequest } from '../sdk/index.js';
import { trustSubject } from '../plugins/hooks/engine.js';
import { fillInput } from '../plugins/hooks/handlers.js';
import { normalizeSection } from '../plugins/hooks/definition.js';
import { readPeerFolder } from '../internal/peer/manifest.js';
import { parseManifest } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { hookSuite } from './support/hook-suite.js';
import { run } from './support/cli.js';

const GUARD_SERVER = fileURLToPath(new URL('./fixtures/hooks-handler-types/guard-server.mjs', import.meta.url));

const { kernels, folders } = hookSuite();
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
  delete process.env.HOOK_TEST_TOKEN;
  delete process.env.HOOK_TEST_UNLISTED;
});

async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plinth-handler-types-'));
  folders.push(dir);
  return dir;
}

interface Received {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
}

/** A real HTTP server on 127.0.0.1: `answer` decides each response from the request it got. */
async function policyServer(answer: (request: Received, response: ServerResponse) => void): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => {
      const request = { path: req.url ?? '/', headers: req.headers, body: JSON.parse(text || '{}') as Record<string, unknown> };
      received.push(request);
      answer(request, res);
    });
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

async function boot(settings: Record<string, unknown>, options: { plugins?: InlinePlugin[]; workspace?: string } = {}): Promise<TestKernel> {
  const kernel = await createTestKernel({ builtin: true, settings, ...(options.workspace && { workspace: options.workspace }), ...(options.plugins && { plugins: options.plugins }) });
  kernels.push(kernel);
  expect(kernel.report.plugins.filter((p) => p.state === 'failed').map((p) => `${p.name}: ${p.error?.message}`)).toEqual([]);
  return kernel;
}

/** `id → status[:failure]` of the last run of `event`. */
async function outcomes(kernel: TestKernel, event: string): Promise<Record<string, string>> {
  const last = (await kernel.get('hooks')).lastRun(event as never);
  return Object.fromEntries((last?.outcomes ?? []).map((o) => [o.hook.id, o.status + (o.failure ? `:${o.failure}` : '')]));
}

// ── http ────────────────────────────────────────────────────────────────────

describe('Claude Code "http" hooks', () => {
  it('POSTs the input document; a JSON deny blocks, an empty 2xx allows; headers get only the variables allowedEnvVars lists', async () => {
    process.env.HOOK_TEST_TOKEN = 'tok-5f1c9a';
    process.env.HOOK_TEST_UNLISTED = 'must-not-be-sent';
    const server = await policyServer(({ body }, res) => {
      const command = String((body.tool_input as { command?: string } | undefined)?.command ?? '');
      if (command.includes('rm -rf')) {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'destructive command blocked by policy' } }));
        return;
      }
      res.end();
    });
    const kernel = await boot({
      hooks: {
        PreToolUse: [
          {
            matcher: 'Bash',
            hooks: [
              {
                type: 'http',
                url: `${server.url}/hooks/pre-tool-use`,
                timeout: 30,
                headers: { Authorization: 'Bearer $HOOK_TEST_TOKEN', 'X-Braced': '${HOOK_TEST_TOKEN}', 'X-Unlisted': 'x$HOOK_TEST_UNLISTED' },
                allowedEnvVars: ['HOOK_TEST_TOKEN'],
              },
            ],
          },
        ],
      },
    });

    const blocked = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf /' }, sessionId: 's-1' });
    expect(blocked.allow).toBe(false);
    expect(blocked.messages[0]).toBe('destructive command blocked by policy');

    const allowed = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' }, sessionId: 's-1' });
    expect(allowed.allow).toBe(true);
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'user:PreToolUse.0.0': 'ran' });

    expect(server.received).toHaveLength(2);
    const first = server.received[0]!;
    expect(first.path).toBe('/hooks/pre-tool-use');
    expect(first.body).toMatchObject({ hook_event_name: 'PreToolUse', session_id: 's-1', tool_name: 'Bash', tool_input: { command: 'rm -rf /' } });
    expect(first.headers['content-type']).toBe('application/json');
    expect(first.headers.authorization).toBe('Bearer tok-5f1c9a');
    expect(first.headers['x-braced']).toBe('tok-5f1c9a');
    expect(first.headers['x-unlisted']).toBe('x');
    // The filled-in secret is in no log line, and `hooks list` shows header names only.
    expect(kernel.logs.join('\n')).not.toContain('tok-5f1c9a');
    const { hooks } = await (await kernel.get('hooks')).definitions();
    expect(hooks[0]!.action).toMatchObject({ type: 'http', headers: { Authorization: 'Bearer $HOOK_TEST_TOKEN' }, allowedEnvVars: ['HOOK_TEST_TOKEN'] });
    // The URL and headers as written are what trust fingerprints (runs), never the filled-in values.
    expect(trustSubject(hooks[0]!).runs).toEqual({ url: `${server.url}/hooks/pre-tool-use`, headers: { Authorization: 'Bearer $HOOK_TEST_TOKEN', 'X-Braced': '${HOOK_TEST_TOKEN}', 'X-Unlisted': 'x$HOOK_TEST_UNLISTED' } });
  });

  it('a timeout and a non-2xx status are non-blocking errors, as the peer says; with "onError": "block" the failure blocks', async () => {
    const server = await policyServer(({ path }, res) => {
      if (path === '/slow') return void setTimeout(() => res.end('{}'), 10_000).unref();
      res.statusCode = 503;
      res.end('policy engine down');
    });
    const kernel = await boot({
      hooks: {
        PreToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'http', url: `${server.url}/slow`, timeout: 0.3 }] },
          { matcher: 'Write', hooks: [{ type: 'http', url: `${server.url}/error` }] },
          { matcher: 'Edit', hooks: [{ type: 'http', url: `${server.url}/error`, onError: 'block' }] },
        ],
      },
    });

    const slow = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } });
    expect(slow.allow).toBe(true);
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'user:PreToolUse.0.0': 'failed:timeout' });

    const down = await kernel.emit('before_tool', { tool: 'Write', args: { file_path: 'a.txt' } });
    expect(down.allow).toBe(true);
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'user:PreToolUse.1.0': 'failed:request_failed' });
    expect(down.messages.join('\n')).toContain('answered HTTP 503 (policy engine down)');

    const strict = await kernel.emit('before_tool', { tool: 'Edit', args: { file_path: 'a.txt' } });
    expect(strict.allow).toBe(false);
    expect(strict.blockedBy).toMatchObject({ by: 'user:PreToolUse.2.0', code: 'PLN_E_HOOK_RUN_FAILED' });
  });

  it('a plain-text 2xx body on UserPromptSubmit is context for the model; a server that is not there blocks a gate event', async () => {
    const server = await policyServer((_request, res) => res.end('Remember: the release branch is frozen.'));
    // A port nothing listens on: one that was just closed.
    const gone = createServer();
    await new Promise<void>((done) => gone.listen(0, '127.0.0.1', done));
    const deadPort = (gone.address() as AddressInfo).port;
    await new Promise((done) => gone.close(done));
    const kernel = await boot({
      hooks: {
        UserPromptSubmit: [{ hooks: [{ type: 'http', url: `${server.url}/context` }] }],
        PreToolUse: [{ hooks: [{ type: 'http', url: `http://127.0.0.1:${deadPort}/nothing-listens-here` }] }],
      },
    });
    const prompt = await kernel.emit('before_agent', { prompt: 'ship it' });
    expect(prompt.allow).toBe(true);
    expect(prompt.systemMessages).toContain('Remember: the release branch is frozen.');
    expect(server.received[0]!.body).toMatchObject({ hook_event_name: 'UserPromptSubmit', prompt: 'ship it' });

    const gate = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } });
    expect(gate.allow).toBe(false);
    expect(gate.blockedBy).toMatchObject({ by: 'user:PreToolUse.0.0', code: 'PLN_E_HOOK_UNRUNNABLE' });
    expect(gate.blockedBy?.reason).toContain('ECONNREFUSED');
  });

  it("a workspace's http hook whose host is not granted is refused (PLN_E_PERM_…), naming the grant; nothing is sent", async () => {
    const server = await policyServer((_request, res) => res.end());
    const workspace = await folder();
    await mkdir(join(workspace, '.plinth'), { recursive: true });
    const host = new URL(server.url).host;
    await writeFile(
      join(workspace, '.plinth', 'settings.json'),
      JSON.stringify({
        hooks: {
          PreToolUse: [{ protocol: 'claude', hooks: [{ type: 'http', url: `${server.url}/ws`, permissions: { network: { allow: [host] } } }] }],
          PostToolUse: [{ protocol: 'claude', hooks: [{ type: 'http', url: `${server.url}/ws-undeclared` }] }],
        },
      }),
    );
    const kernel = await boot({}, { workspace });
    const { hooks } = await (await kernel.get('hooks')).definitions();
    const trust = await kernel.get('trust');
    for (const hook of hooks) await trust.approve(trustSubject(hook));

    const gate = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } });
    expect(gate.allow).toBe(false);
    expect(gate.blockedBy?.by).toBe('workspace:PreToolUse.0.0');
    expect(gate.blockedBy?.code).toBe('PLN_E_PERM_NOT_GRANTED');
    expect(gate.blockedBy?.fix).toContain(`grant it: plinth perms grant settings:workspace 'network ${host}'`);

    // Not even declared: refused as well (not a gate event: the hook fails, its onError lets the event go on).
    const after = await kernel.emit('after_tool', { tool: 'Bash', args: { command: 'ls' }, result: 'ok' });
    expect(after.allow).toBe(true);
    expect(await outcomes(kernel, 'after_tool')).toEqual({ 'workspace:PostToolUse.0.0': 'failed:not_allowed' });
    expect(after.messages.join('\n')).toContain(`its request to ${host} is not allowed (PLN_E_PERM_DENIED`);
    expect(server.received).toEqual([]);

    // The user grants it, as the fix says: the next call goes through.
    const granted = await run({ dirs: ['--home', kernel.home, '--workspace', workspace], workspace }, ['perms', 'grant', 'settings:workspace', `network ${host}`]);
    expect(granted.code, granted.stderr).toBe(0);
    expect((await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } })).allow).toBe(true);
    expect(server.received.map((r) => r.path)).toEqual(['/ws']);
  });
});

// ── mcp_tool ────────────────────────────────────────────────────────────────

describe('Claude Code "mcp_tool" hooks', () => {
  it("calls a configured server's tool with ${…} filled from the input document; its text or structured answer blocks or allows", async () => {
    const dir = await folder();
    const calls = join(dir, 'calls.jsonl');
    const kernel = await boot({
      mcpServers: { guard: { command: 'node', args: [GUARD_SERVER, calls] } },
      hooks: {
        PreToolUse: [
          { matcher: 'Write', hooks: [{ type: 'mcp_tool', server: 'guard', tool: 'check_path', input: { path: '${tool_input.file_path}', tool: '${tool_name}' } }] },
          { matcher: 'Edit', hooks: [{ type: 'mcp_tool', server: 'guard', tool: 'scan', input: { path: '${tool_input.file_path}' } }] },
          { matcher: 'Read', hooks: [{ type: 'mcp_tool', server: 'guard', tool: 'broken' }] },
          { matcher: 'Grep', hooks: [{ type: 'mcp_tool', server: 'guard', tool: 'slow', timeout: 0.3 }] },
        ],
      },
    });

    const secret = await kernel.emit('before_tool', { tool: 'Write', args: { file_path: 'secrets/key.pem', content: 'x' } });
    expect(secret.allow).toBe(false);
    expect(secret.messages[0]).toBe('secrets/key.pem is under secrets/');

    const source = await kernel.emit('before_tool', { tool: 'Write', args: { file_path: 'src/a.ts', content: 'x' } });
    expect(source.allow).toBe(true);
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'user:PreToolUse.0.0': 'ran' });

    const env = await kernel.emit('before_tool', { tool: 'Edit', args: { file_path: 'config/.env' } });
    expect(env.allow).toBe(false);
    expect(env.messages[0]).toBe('config/.env holds credentials');
    expect((await kernel.emit('before_tool', { tool: 'Edit', args: { file_path: 'README.md' } })).allow).toBe(true);

    // The tool's error is a non-blocking error of the hook.
    const broken = await kernel.emit('before_tool', { tool: 'Read', args: { file_path: 'a.txt' } });
    expect(broken.allow).toBe(true);
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'user:PreToolUse.2.0': 'failed:request_failed' });
    expect(broken.messages.join('\n')).toContain('the scanner is down');
    // Its time limit (seconds, as the peer's) is a non-blocking error too.
    const slow = await kernel.emit('before_tool', { tool: 'Grep', args: { pattern: 'x' } });
    expect(slow.allow).toBe(true);
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'user:PreToolUse.3.0': 'failed:timeout' });

    const seen = (await readFile(calls, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as unknown);
    expect(seen).toEqual([
      { tool: 'check_path', args: { path: 'secrets/key.pem', tool: 'Write' } },
      { tool: 'check_path', args: { path: 'src/a.ts', tool: 'Write' } },
      { tool: 'scan', args: { path: 'config/.env' } },
      { tool: 'scan', args: { path: 'README.md' } },
    ]);
  });

  it('fills ${…} from each run\'s document: a whole reference keeps its value, one inside text is text (JSON for an object), a path that leads nowhere is ""', () => {
    const input = { path: '${tool_input.file_path}', o: '${tool_input.o}', line: '${tool_name} ${tool_input.file_path} (${tool_input.n}) ${tool_input.o} [${no.such}]', list: ['${tool_input.n}', 'plain'], n: 3 };
    expect(fillInput(input, { tool_name: 'Write', tool_input: { file_path: 'a.ts', n: 2, o: { x: 1 } } })).toEqual({ path: 'a.ts', o: { x: 1 }, line: 'Write a.ts (2) {"x":1} []', list: [2, 'plain'], n: 3 });
    // The same definition with another run's document: nothing of the first run is kept.
    expect(fillInput(input, { tool_name: 'Edit' })).toEqual({ path: '', o: '', line: 'Edit  ()  []', list: ['', 'plain'], n: 3 });
  });

  it("the server's own trust applies: a workspace server nobody approved is not started for a hook, and the gate is blocked", async () => {
    const dir = await folder();
    const workspace = join(dir, 'project');
    const calls = join(dir, 'calls.jsonl');
    await mkdir(join(workspace, '.plinth'), { recursive: true });
    await writeFile(join(workspace, '.plinth', 'settings.json'), JSON.stringify({ mcpServers: { 'ws-guard': { command: 'node', args: [GUARD_SERVER, calls] } } }));
    const kernel = await boot({ hooks: { PreToolUse: [{ hooks: [{ type: 'mcp_tool', server: 'ws-guard', tool: 'check_path', input: { path: '${tool_input.file_path}' } }] }] } }, { workspace });
    const gate = await kernel.emit('before_tool', { tool: 'Write', args: { file_path: 'src/a.ts' } });
    expect(gate.allow).toBe(false);
    expect(gate.blockedBy).toMatchObject({ by: 'user:PreToolUse.0.0', code: 'PLN_E_HOOK_UNRUNNABLE' });
    expect(gate.blockedBy?.reason).toContain('the MCP server "ws-guard" is not connected');
    await expect(readFile(calls, 'utf8')).rejects.toThrow();
  });

  it('a server that is not configured blocks a gate event (the guard cannot run)', async () => {
    const kernel = await boot({ hooks: { PreToolUse: [{ hooks: [{ type: 'mcp_tool', server: 'nowhere', tool: 'check' }] }] } });
    const gate = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } });
    expect(gate.allow).toBe(false);
    expect(gate.blockedBy).toMatchObject({ by: 'user:PreToolUse.0.0', code: 'PLN_E_HOOK_UNRUNNABLE' });
    expect(gate.blockedBy?.reason).toContain('no MCP server "nowhere" is configured');
  });
});

// ── prompt and agent ────────────────────────────────────────────────────────

describe('Claude Code "prompt" and "agent" hooks through the host\'s model service', () => {
  /** A host plugin lending its model: it reads the prompt it is given and answers { ok, reason }. */
  function modelHost(asked: Array<ModelRequest | ModelAgentRequest>): InlinePlugin {
    return {
      manifest: { name: 'host-model', provides: ['model'] },
      setup(kernel) {
        kernel.provide('model', {
          async complete(request) {
            asked.push(request);
            return request.prompt.includes('rm -rf') ? { ok: false, reason: 'destructive command' } : { ok: true };
          },
          async agent(request) {
            asked.push(request);
            // An agent answers after its turns, in text: plinth reads the JSON in it.
            return JSON.stringify(request.prompt.includes('"stop_hook_active":false') ? { ok: false, reason: 'the tests were not run yet' } : { ok: true });
          },
        });
      },
    };
  }

  it('a prompt hook: $ARGUMENTS is the input document; ok: false blocks with the reason, ok: true allows', async () => {
    const asked: Array<ModelRequest | ModelAgentRequest> = [];
    const kernel = await boot(
      { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'prompt', prompt: 'Is this command safe? $ARGUMENTS Costs \\$1.00.', model: 'small-fast' }] }] } },
      { plugins: [modelHost(asked)] },
    );
    const blocked = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf /' } });
    expect(blocked.allow).toBe(false);
    expect(blocked.messages[0]).toBe('destructive command');
    const allowed = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } });
    expect(allowed.allow).toBe(true);

    expect(asked).toHaveLength(2);
    const request = asked[0]!;
    expect(request.model).toBe('small-fast');
    expect(request.schema).toMatchObject({ type: 'object', required: ['ok'] });
    expect(request.prompt).toMatch(/^Is this command safe\? \{.*"hook_event_name":"PreToolUse".*"tool_input":\{"command":"rm -rf \/"\}.*\} Costs \$1\.00\.$/);
    expect(request.signal).toBeInstanceOf(AbortSignal);
  });

  it('an agent hook on Stop: ok: false keeps the agent going with the reason; it gets the MCP tools and a turn limit', async () => {
    const asked: Array<ModelRequest | ModelAgentRequest> = [];
    const kernel = await boot({ hooks: { Stop: [{ hooks: [{ type: 'agent', prompt: 'Verify that the unit tests ran: $ARGUMENTS' }] }] } }, { plugins: [modelHost(asked)] });
    const stop = await kernel.emit('after_agent', { stopHookActive: false });
    expect(stop.allow).toBe(false);
    expect(stop.messages[0]).toBe('the tests were not run yet');
    const again = await kernel.emit('after_agent', { stopHookActive: true });
    expect(again.allow).toBe(true);
    const request = asked[0] as ModelAgentRequest;
    expect(request.maxTurns).toBe(50);
    expect(Array.isArray(request.tools)).toBe(true);
    expect(typeof request.callTool).toBe('function');
  });

  it("a model that does not answer in the hook's time, or answers outside the schema, is the hook's failure (its onError decides)", async () => {
    const host: InlinePlugin = {
      manifest: { name: 'host-model', provides: ['model'] },
      setup(kernel) {
        kernel.provide('model', {
          // Ignores the signal: never answers the first question, answers the second with no "ok".
          complete: (request) => (request.prompt.includes('hang') ? new Promise(() => undefined) : Promise.resolve({ verdict: 'fine' })),
        });
      },
    };
    const kernel = await boot(
      {
        hooks: {
          PreToolUse: [
            { matcher: 'Bash', hooks: [{ type: 'prompt', prompt: 'hang $ARGUMENTS', timeout: 0.3 }] },
            { matcher: 'Write', hooks: [{ type: 'prompt', prompt: 'judge $ARGUMENTS', onError: 'block' }] },
          ],
        },
      },
      { plugins: [host] },
    );
    const slow = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } });
    expect(slow.allow).toBe(true);
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'user:PreToolUse.0.0': 'failed:timeout' });
    const odd = await kernel.emit('before_tool', { tool: 'Write', args: { file_path: 'a.txt' } });
    expect(odd.allow).toBe(false);
    expect(odd.blockedBy).toMatchObject({ by: 'user:PreToolUse.1.0', code: 'PLN_E_HOOK_RUN_FAILED' });
    expect(odd.messages[0]).toContain(`the model's answer is not { "ok": true|false, "reason"?: "…" }`);
  });

  it('without a model service: a gate event is blocked naming the missing service; another event records the hook as not run', async () => {
    const kernel = await boot({
      hooks: {
        PreToolUse: [{ hooks: [{ type: 'prompt', prompt: 'Is this safe? $ARGUMENTS' }] }],
        SessionStart: [{ protocol: 'claude', hooks: [{ type: 'agent', prompt: 'Summarise the repository' }] }],
      },
    });
    const gate = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } });
    expect(gate.allow).toBe(false);
    expect(gate.blockedBy).toMatchObject({ by: 'user:PreToolUse.0.0', code: 'PLN_E_HOOK_UNRUNNABLE' });
    expect(gate.blockedBy?.reason).toContain('no host or plugin provides the `model` service');
    expect(gate.blockedBy?.fix).toContain("kernel.provide('model'");

    const start = await kernel.emit('session_start', { source: 'startup' });
    expect(start.allow).toBe(true);
    expect(await outcomes(kernel, 'session_start')).toEqual({ 'user:SessionStart.0.0': 'skipped:unsupported' });
    expect(start.systemMessages.join('\n')).toContain('was not run on session_start');
    const trace = await (await kernel.get('hooks')).lastRun('session_start');
    expect(trace?.outcomes[0]?.message).toContain('`model` service');

    // The host lends its model once plinth is up (kernel.provide as the host): the next call asks it; taken back, the gate is blocked again.
    const off = kernel.provide('model', { complete: async () => ({ ok: true }) });
    expect((await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } })).allow).toBe(true);
    off();
    expect((await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'ls' } })).allow).toBe(false);
  });
});

// ── plinth's own definitions ────────────────────────────────────────────────

describe('the handler types in plinth\'s own definitions ("type")', () => {
  it('an http hook speaks protocol v1.0.0: the server gets the protocol input and answers { allow, message }', async () => {
    process.env.HOOK_TEST_TOKEN = 'tok-native';
    const server = await policyServer(({ body }, res) => {
      const args = (body.context as { args?: { command?: string } }).args;
      res.end(JSON.stringify(args?.command === 'deploy' ? { allow: false, message: 'deploys wait for the release window' } : { allow: true }));
    });
    const kernel = await boot({
      hooks: { before_tool: [{ name: 'release-window', type: 'http', url: `${server.url}/plinth`, headers: { 'X-Token': '${env:HOOK_TEST_TOKEN}' }, allowedEnvVars: ['HOOK_TEST_TOKEN'], timeout: 5000 }] },
    });
    const blocked = await kernel.emit('before_tool', { tool: 'shell', args: { command: 'deploy' } });
    expect(blocked).toMatchObject({ allow: false, messages: ['deploys wait for the release window'] });
    expect((await kernel.emit('before_tool', { tool: 'shell', args: { command: 'ls' } })).allow).toBe(true);
    expect(server.received[0]!.body).toMatchObject({ version: '1.0.0', event: 'before_tool', context: { tool: 'shell', args: { command: 'deploy' } }, metadata: { hookName: 'release-window' } });
    expect(server.received[0]!.headers['x-token']).toBe('tok-native');
  });

  it('each type needs its own fields and takes no other; "prompt" without "type" stays the askAgent prompt', () => {
    const where = { source: 'user', origin: '/u/settings.json', baseDir: '/u' } as const;
    const { hooks, problems } = normalizeSection(
      {
        before_tool: [
          { name: 'a', type: 'http', command: 'node' },
          { name: 'b', type: 'mcp_tool', server: 'guard' },
          { name: 'c', type: 'http', url: 'ftp://example.com/x' },
          { name: 'd', type: 'agent', prompt: 'Check $ARGUMENTS', maxTurns: 5 },
          { name: 'e', prompt: 'Review {{tool}}' },
        ],
      },
      where,
      { timeoutMs: 5000, idleMs: 60_000 },
    );
    expect(problems.map((p) => p.message.replace('/u/settings.json: ', ''))).toEqual([
      'hooks.before_tool[0].url: a "http" hook needs "url"',
      'hooks.before_tool[0].command: "command" does not apply to a "http" hook',
      'hooks.before_tool[1].tool: a "mcp_tool" hook needs "tool"',
      'hooks.before_tool[2].url: expected an http:// or https:// URL without a user name or password (put credentials in "headers", filled from "allowedEnvVars")',
    ]);
    expect(hooks.map((h) => h.action)).toEqual([
      { type: 'agent', prompt: 'Check $ARGUMENTS', maxTurns: 5 },
      { type: 'askAgent', prompt: 'Review {{tool}}' },
    ]);
  });

  it("a workspace hook may call only the MCP servers it declares and is granted ('mcp' permission)", async () => {
    const dir = await folder();
    const workspace = join(dir, 'project');
    await mkdir(join(workspace, '.plinth'), { recursive: true });
    await writeFile(join(workspace, '.plinth', 'settings.json'), JSON.stringify({ hooks: { PreToolUse: [{ protocol: 'claude', hooks: [{ type: 'mcp_tool', server: 'guard', tool: 'check_path', input: { path: '${tool_input.file_path}' } }] }] } }));
    const calls = join(dir, 'calls.jsonl');
    const kernel = await boot({ mcpServers: { guard: { command: 'node', args: [GUARD_SERVER, calls] } } }, { workspace });
    const { hooks } = await (await kernel.get('hooks')).definitions();
    const trust = await kernel.get('trust');
    for (const hook of hooks) await trust.approve(trustSubject(hook));
    const gate = await kernel.emit('before_tool', { tool: 'Write', args: { file_path: 'src/a.ts' } });
    expect(gate.allow).toBe(false);
    expect(gate.blockedBy).toMatchObject({ by: 'workspace:PreToolUse.0.0', code: 'PLN_E_PERM_DENIED' });
    expect(gate.blockedBy?.reason).toContain('it may not call the MCP server "guard"');
    expect(gate.blockedBy?.fix).toContain('"permissions": { "mcp": ["guard"] }');
    await expect(readFile(calls, 'utf8')).rejects.toThrow();
  });

  it('a grant given, revoked and given again is seen at the very next event (nothing about it is kept between events)', async () => {
    const dir = await folder();
    const workspace = join(dir, 'project');
    await mkdir(join(workspace, '.plinth'), { recursive: true });
    const hook = { type: 'mcp_tool', server: 'guard', tool: 'check_path', input: { path: '${tool_input.file_path}' }, permissions: { mcp: ['guard'] } };
    await writeFile(join(workspace, '.plinth', 'settings.json'), JSON.stringify({ hooks: { PreToolUse: [{ protocol: 'claude', hooks: [hook] }] } }));
    const calls = join(dir, 'calls.jsonl');
    const kernel = await boot({ mcpServers: { guard: { command: 'node', args: [GUARD_SERVER, calls] } } }, { workspace });
    const { hooks } = await (await kernel.get('hooks')).definitions();
    const trust = await kernel.get('trust');
    for (const h of hooks) await trust.approve(trustSubject(h));
    const perms = (verb: string) => run({ dirs: ['--home', kernel.home, '--workspace', workspace], workspace }, ['perms', verb, 'settings:workspace', 'mcp guard']);
    const write = () => kernel.emit('before_tool', { tool: 'Write', args: { file_path: 'src/a.ts' } });

    expect((await write()).blockedBy?.code).toBe('PLN_E_PERM_NOT_GRANTED');
    expect((await perms('grant')).code).toBe(0);
    expect((await write()).allow).toBe(true);
    expect((await write()).allow).toBe(true);
    const revoked = await perms('revoke');
    expect(revoked.code, revoked.stderr).toBe(0);
    const refused = await write();
    expect(refused.allow).toBe(false);
    // A revoke is the user's refusal (PLN_E_PERM_DENIED): seen at once, no grant kept from the calls before.
    expect(refused.blockedBy).toMatchObject({ by: 'workspace:PreToolUse.0.0', code: 'PLN_E_PERM_DENIED' });
    expect((await perms('grant')).code).toBe(0);
    expect((await write()).allow).toBe(true);
    expect((await readFile(calls, 'utf8')).trim().split('\n')).toHaveLength(3);
  });
});

describe('a Claude Code plugin with http and mcp_tool hooks', () => {
  it("is given what Claude Code gives them: the hosts they post to, the variables their headers read, the servers they call (granted like declared permissions)", async () => {
    const dir = await folder();
    await mkdir(join(dir, '.claude-plugin'), { recursive: true });
    await mkdir(join(dir, 'hooks'), { recursive: true });
    await writeFile(join(dir, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'policy-kit', version: '1.2.0' }));
    await writeFile(
      join(dir, 'hooks', 'hooks.json'),
      JSON.stringify({
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'http', url: 'http://127.0.0.1:8080/hooks/pre-tool-use', headers: { Authorization: 'Bearer $POLICY_TOKEN' }, allowedEnvVars: ['POLICY_TOKEN'] }] }],
          PostToolUse: [{ matcher: 'Write|Edit', hooks: [{ type: 'mcp_tool', server: 'semgrep', tool: 'scan_file', input: { path: '${tool_input.file_path}' } }] }],
        },
      }),
    );
    const peer = await readPeerFolder(dir, { workspace: dir });
    const parsed = parseManifest(peer?.data);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const manifest = parsed.manifest;
    expect(manifest.permissions).toEqual({
      filesystem: { read: [], write: ['${workspace}'] },
      network: { allow: ['127.0.0.1:8080'], deny: [] },
      env: ['POLICY_TOKEN'],
      shell: [],
      mcp: ['semgrep'],
    });
    expect(manifest.peer?.notes.find((n) => n.field === 'permissions')?.reason).toContain('the hosts its http hooks post to (network 127.0.0.1:8080)');
  });
});

// ── async ───────────────────────────────────────────────────────────────────

describe('"async" on a hook that runs no process: in the background, as a command hook', () => {
  /** Resolves when the hook `id` has ended `count` times (the hooks service's progress). */
  async function endings(kernel: TestKernel, id: string): Promise<(count: number) => Promise<void>> {
    let ended = 0;
    const waiters: Array<{ count: number; resolve: () => void }> = [];
    (await kernel.get('hooks')).progress.tap('test', (p) => {
      if (p.hook.id !== id || p.phase !== 'ended') return;
      ended += 1;
      for (const w of waiters.filter((w) => w.count <= ended)) w.resolve();
    });
    return (count) => new Promise<void>((resolve) => (ended >= count ? resolve() : waiters.push({ count, resolve })));
  }

  it("an async http hook: the event does not wait for the server's answer, its block counts for nothing, its systemMessage reaches the next event", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = await policyServer((_request, res) => {
      void held.then(() => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ allow: false, message: 'too late to block', systemMessage: 'the audit server saw rm -rf' }));
      });
    });
    // A plinth definition (Claude Code's settings give "async" to command hooks only, and so does its shape here).
    const kernel = await boot({ hooks: { before_tool: [{ name: 'audit', type: 'http', url: `${server.url}/audit`, matcher: 'Bash', async: true, statusMessage: 'Auditing' }] } });
    const ended = await endings(kernel, 'user:audit');

    // The server holds its answer until released: were the event waiting for it, this would never return.
    const first = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf /' }, sessionId: 's-1' });
    expect(first.messages).toEqual([]);
    expect(first.allow).toBe(true);
    expect(first.systemMessages).toEqual([]);
    release();
    await ended(1);
    expect(server.received.map((r) => (r.body.context as { args?: unknown }).args)).toEqual([{ command: 'rm -rf /' }]);

    const next = await kernel.emit('before_tool', { tool: 'Read', args: {}, sessionId: 's-1' });
    expect(next.allow).toBe(true);
    expect(next.systemMessages).toEqual(['the audit server saw rm -rf']);
    // Delivered once.
    expect((await kernel.emit('before_tool', { tool: 'Read', args: {}, sessionId: 's-1' })).systemMessages).toEqual([]);
  });

  it("an async prompt hook (a plinth definition): the model's ok: false blocks nothing; a missing server of an async mcp_tool hook is its failure in the background, not a block", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const asked: ModelRequest[] = [];
    const model: InlinePlugin = {
      manifest: { name: 'host-model', provides: ['model'] },
      setup(kernel) {
        kernel.provide('model', {
          async complete(request) {
            asked.push(request);
            await held;
            return { ok: false, reason: 'the judge says no' };
          },
          async agent() {
            return '{"ok":true}';
          },
        });
      },
    };
    const kernel = await boot(
      {
        hooks: {
          before_tool: [
            { name: 'judge', type: 'prompt', prompt: 'Judge $ARGUMENTS', async: true },
            { name: 'scan', type: 'mcp_tool', server: 'not-configured', tool: 'scan', async: true },
          ],
        },
      },
      { plugins: [model] },
    );
    const judged = await endings(kernel, 'user:judge');
    const scanned = await endings(kernel, 'user:scan');
    const decision = await kernel.emit('before_tool', { tool: 'Bash', args: { command: 'rm -rf /' } });
    expect(decision.allow).toBe(true);
    expect(await outcomes(kernel, 'before_tool')).toEqual({ 'user:judge': 'ran', 'user:scan': 'ran' });
    release();
    await judged(1);
    await scanned(1);
    expect(asked).toHaveLength(1);
    expect(kernel.logs.join('\n')).toMatch(/scan.*failed in the background on before_tool/);
    expect((await kernel.emit('before_tool', { tool: 'Read', args: {} })).systemMessages).toEqual([]);
  });
});
